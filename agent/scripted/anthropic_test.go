package scripted_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/google/go-cmp/cmp"

	"yolop.dev/agent/scripted"
)

// anthropicClient is the real Anthropic SDK client pointed at srv.
func anthropicClient(srv *scripted.Server, key string, opts ...aoption.RequestOption) anthropic.Client {
	return anthropic.NewClient(append([]aoption.RequestOption{
		aoption.WithBaseURL(srv.URL() + "/"),
		aoption.WithAPIKey(key),
	}, opts...)...)
}

func anthropicTool(name string) anthropic.ToolUnionParam {
	return anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
		Name:        name,
		InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{}},
	}}
}

// The same script answers the Messages API: parallel tool_use blocks
// streamed with their input in pieces, then the follow-up with results.
func TestAnthropicStreamToolUseAndFollowUp(t *testing.T) {
	srv := start(t, parallelScript, scripted.Options{APIKey: "sk-ant"})
	c := anthropicClient(srv, "sk-ant")
	ctx := context.Background()
	params := anthropic.MessageNewParams{
		Model:     "claude-test",
		MaxTokens: 1024,
		System:    []anthropic.TextBlockParam{{Text: "be brief"}},
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("what is the time and count to 3"))},
		Tools:     []anthropic.ToolUnionParam{anthropicTool("count"), anthropicTool("clock")},
	}

	stream := c.Messages.NewStreaming(ctx, params)
	var msg anthropic.Message
	inputDeltas := map[int64]int{}
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			t.Fatalf("accumulate %s: %v", ev.RawJSON(), err)
		}
		if ev.Type == "content_block_delta" && ev.Delta.Type == "input_json_delta" {
			inputDeltas[ev.Index]++
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	stream.Close()

	var got []string
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			got = append(got, "text "+b.Text)
		case "tool_use":
			got = append(got, "tool_use "+b.ID+" "+b.Name+" "+string(b.Input))
		}
	}
	want := []string{
		"text Doing both.",
		`tool_use call_1_1 count {"to":3,"label":"a longer label to split"}`,
		`tool_use call_1_2 clock {"zone":"Europe/Paris"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("accumulated content (-want +got):\n%s", diff)
	}
	if inputDeltas[1] < 3 || inputDeltas[2] < 3 {
		t.Errorf("input_json_delta events per block %v, want the inputs split across several", inputDeltas)
	}
	if msg.StopReason != "tool_use" || msg.Model != "claude-test" || msg.Usage.OutputTokens == 0 {
		t.Errorf("stop %q, model %q, usage %+v", msg.StopReason, msg.Model, msg.Usage)
	}

	params.Messages = append(params.Messages, msg.ToParam(), anthropic.NewUserMessage(
		anthropic.NewToolResultBlock("call_1_1", "counted: 1 2 3", false),
		anthropic.NewToolResultBlock("call_1_2", "it is 12:00 in Paris", false),
	))
	res, err := c.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 || res.Content[0].Text != "It is noon and I counted to 3." || res.StopReason != "end_turn" {
		t.Errorf("follow-up %s", res.RawJSON())
	}

	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[1].Messages == nil {
		t.Fatalf("recorded %+v", reqs)
	}
	sent := reqs[1].Messages.Messages
	if len(sent) != 3 {
		t.Fatalf("follow-up sent %d messages, want 3", len(sent))
	}
	var results []string
	for _, b := range sent[2].Blocks() {
		results = append(results, b.Type+" "+b.ToolUseID+" "+b.ResultText())
	}
	if diff := cmp.Diff([]string{"tool_result call_1_1 counted: 1 2 3", "tool_result call_1_2 it is 12:00 in Paris"}, results); diff != "" {
		t.Errorf("results sent (-want +got):\n%s", diff)
	}
	if h := reqs[0].Header.Get("Authorization"); h != "Bearer sk-ant" {
		t.Errorf("Authorization %q", h)
	}
	if err := srv.Verify(); err != nil {
		t.Error(err)
	}
}

func TestAnthropicErrors(t *testing.T) {
	srv := start(t, `{"steps": [
		{"when": {"user": "hi"}, "reply": {"text": "hello", "usage": {"prompt_tokens": 30, "completion_tokens": 2, "cached_tokens": 20}}},
		{"when": {"user": "again"}, "reply": {"error": {"status": 529, "message": "overloaded"}}}
	]}`, scripted.Options{APIKey: "sk-ant", RateLimit: 2})
	ctx := context.Background()
	params := anthropic.MessageNewParams{
		Model: "claude-test", MaxTokens: 64,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	}

	wrong := anthropicClient(srv, "sk-wrong")
	_, err := wrong.Messages.New(ctx, params)
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || !strings.Contains(apiErr.RawJSON(), `"authentication_error"`) {
		t.Fatalf("error %v, want a 401 authentication_error", err)
	}

	// Two 429s, retried by the SDK, then the answer.
	c := anthropicClient(srv, "sk-ant")
	res, err := c.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	u := res.Usage
	if res.Content[0].Text != "hello" || u.InputTokens != 10 || u.CacheReadInputTokens != 20 || u.OutputTokens != 2 {
		t.Errorf("answer %s", res.RawJSON())
	}

	// A tool_use without its tool_result is refused as the real API does.
	bad := params
	bad.Messages = []anthropic.MessageParam{
		anthropic.NewUserMessage(anthropic.NewTextBlock("x")),
		anthropic.NewAssistantMessage(anthropic.NewToolUseBlock("tu_1", map[string]any{}, "clock")),
		anthropic.NewUserMessage(anthropic.NewTextBlock("again")),
	}
	_, err = c.Messages.New(ctx, bad)
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.RawJSON(), "`tool_use` ids were found without `tool_result` blocks immediately after: tu_1") {
		t.Errorf("error %v, want a 400 naming tu_1", err)
	}

	// A scripted 529 is Anthropic's overloaded_error (retries off, so the
	// next step is not asked).
	again := params
	again.Messages = []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("again"))}
	_, err = c.Messages.New(ctx, again, aoption.WithMaxRetries(0))
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 529 || !strings.Contains(apiErr.RawJSON(), `"overloaded_error"`) {
		t.Errorf("error %v, want a 529 overloaded_error", err)
	}

	var codes []int
	for _, r := range srv.Requests() {
		codes = append(codes, r.Status)
	}
	if diff := cmp.Diff([]int{401, 429, 429, 200, 400, 529}, codes); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}

// Anthropic's x-api-key header is accepted as well as a bearer key.
func TestAnthropicXAPIKey(t *testing.T) {
	srv := start(t, `{"steps": [{"when": {"user": "hi"}, "reply": {"text": "hello"}}]}`, scripted.Options{APIKey: "sk-ant"})
	body := `{"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}`
	var got []string
	for _, key := range []string{"sk-wrong", "sk-ant"} {
		req, err := http.NewRequest("POST", srv.URL()+"/v1/messages", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Api-Key", key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Type  string `json:"type"`
			Error struct {
				Type string `json:"type"`
			} `json:"error"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("body %s: %v", data, err)
		}
		switch m.Type {
		case "error":
			got = append(got, strconv.Itoa(res.StatusCode)+" "+m.Error.Type)
		case "message":
			got = append(got, strconv.Itoa(res.StatusCode)+" "+m.Content[0].Text)
		default:
			t.Errorf("body %s", data)
		}
	}
	http.DefaultClient.CloseIdleConnections()
	if diff := cmp.Diff([]string{"401 authentication_error", "200 hello"}, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
}
