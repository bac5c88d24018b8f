package scripted_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"go.uber.org/goleak"

	"yolop.dev/agent/scripted"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// start serves script on a loopback port until the test ends.
func start(t *testing.T, script string, opts scripted.Options) *scripted.Server {
	t.Helper()
	s, err := scripted.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	srv := scripted.NewServer(s, opts)
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	return srv
}

// client is the real SDK client pointed at srv.
func client(srv *scripted.Server, key string, opts ...option.RequestOption) openai.Client {
	return openai.NewClient(append([]option.RequestOption{
		option.WithBaseURL(srv.URL() + "/v1/"),
		option.WithAPIKey(key),
	}, opts...)...)
}

func tool(name string) openai.ChatCompletionToolUnionParam {
	return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:       name,
		Parameters: shared.FunctionParameters{"type": "object"},
	})
}

func TestStreamText(t *testing.T) {
	srv := start(t, `{"steps": [{
		"when": {"user": "count to five"},
		"reply": {"text": "1 2 3 4 5", "usage": {"prompt_tokens": 40, "completion_tokens": 9, "cached_tokens": 32}}
	}]}`, scripted.Options{})
	c := client(srv, "k")

	stream := c.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:         "gpt-test",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("be brief"), openai.UserMessage("please count to five")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var deltas []string
	var acc openai.ChatCompletionAccumulator
	var usageChunks int
	for stream.Next() {
		ch := stream.Current()
		if !acc.AddChunk(ch) {
			t.Fatalf("the accumulator refused chunk %s", ch.RawJSON())
		}
		if len(ch.Choices) == 0 {
			usageChunks++
			continue
		}
		if d := ch.Choices[0].Delta.Content; d != "" {
			deltas = append(deltas, d)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	stream.Close()

	if diff := cmp.Diff([]string{"1 ", "2 ", "3 ", "4 ", "5"}, deltas); diff != "" {
		t.Errorf("text deltas (-want +got):\n%s", diff)
	}
	if got := acc.Choices[0].Message.Content; got != "1 2 3 4 5" {
		t.Errorf("accumulated content %q", got)
	}
	if got := acc.Choices[0].FinishReason; got != "stop" {
		t.Errorf("finish reason %q, want stop", got)
	}
	if usageChunks != 1 {
		t.Errorf("%d usage chunks without choices, want 1", usageChunks)
	}
	u := acc.Usage
	if u.PromptTokens != 40 || u.CompletionTokens != 9 || u.TotalTokens != 49 || u.PromptTokensDetails.CachedTokens != 32 {
		t.Errorf("usage %+v, want 40 + 9 = 49 with 32 cached", u)
	}
	if acc.Model != "gpt-test" {
		t.Errorf("model %q, want the request's", acc.Model)
	}

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests recorded, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Status != 200 || r.Step != 0 || r.Chat == nil || !r.Chat.Stream || r.Chat.StreamOptions == nil || !r.Chat.StreamOptions.IncludeUsage {
		t.Errorf("recorded %+v", r)
	}
	var roles, texts []string
	for _, m := range r.Chat.Messages {
		roles, texts = append(roles, m.Role), append(texts, m.Text())
	}
	if diff := cmp.Diff([]string{"system", "user"}, roles); diff != "" {
		t.Errorf("roles sent (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"be brief", "please count to five"}, texts); diff != "" {
		t.Errorf("texts sent (-want +got):\n%s", diff)
	}
	if err := srv.Verify(); err != nil {
		t.Error(err)
	}
}

const parallelScript = `{"model": "scripted-test", "steps": [
	{
		"name": "two calls",
		"when": {"user": "time and count"},
		"reply": {
			"text": "Doing both.",
			"tool_calls": [
				{"name": "count", "arguments": {"to": 3, "label": "a longer label to split"}},
				{"name": "clock", "arguments": {"zone": "Europe/Paris"}}
			]
		}
	},
	{
		"name": "after the results",
		"when": {"tool_result": {"tool": "clock", "contains": "12:00"}, "offered": ["count", "clock"]},
		"reply": {"text": "It is noon and I counted to 3."}
	}
]}`

func TestStreamParallelToolCallsAndFollowUp(t *testing.T) {
	srv := start(t, parallelScript, scripted.Options{})
	c := client(srv, "k")
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{
		Model:         "gpt-test",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("what is the time and count to 3")},
		Tools:         []openai.ChatCompletionToolUnionParam{tool("count"), tool("clock")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}

	stream := c.Chat.Completions.NewStreaming(ctx, params)
	var acc openai.ChatCompletionAccumulator
	var finished []openai.FinishedChatCompletionToolCall
	argDeltas := map[int64]int{}
	for stream.Next() {
		ch := stream.Current()
		if !acc.AddChunk(ch) {
			t.Fatalf("the accumulator refused chunk %s", ch.RawJSON())
		}
		if tc, ok := acc.JustFinishedToolCall(); ok {
			finished = append(finished, tc)
		}
		for _, ch := range ch.Choices {
			for _, d := range ch.Delta.ToolCalls {
				if d.Function.Arguments != "" {
					argDeltas[d.Index]++
				}
			}
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	stream.Close()

	type call struct {
		Index          int64
		ID, Name, Args string
	}
	want := []call{
		{0, "call_1_1", "count", `{"to":3,"label":"a longer label to split"}`},
		{1, "call_1_2", "clock", `{"zone":"Europe/Paris"}`},
	}
	var got []call
	for _, tc := range acc.Choices[0].Message.ToolCalls {
		// The accumulated message has no index; take it from the order.
		got = append(got, call{int64(len(got)), tc.ID, tc.Function.Name, tc.Function.Arguments})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("accumulated tool calls (-want +got):\n%s", diff)
	}
	var gotFinished []call
	for _, tc := range finished {
		gotFinished = append(gotFinished, call{int64(tc.Index), tc.ID, tc.Name, tc.Arguments})
	}
	if diff := cmp.Diff(want, gotFinished); diff != "" {
		t.Errorf("JustFinishedToolCall events (-want +got):\n%s", diff)
	}
	for i, w := range want {
		if n := argDeltas[int64(i)]; n < 3 {
			t.Errorf("call %d's arguments (%d bytes) came in %d chunks, want them split across several", i, len(w.Args), n)
		}
	}
	if got := acc.Choices[0].Message.Content; got != "Doing both." {
		t.Errorf("content %q", got)
	}
	if got := acc.Choices[0].FinishReason; got != "tool_calls" {
		t.Errorf("finish reason %q, want tool_calls", got)
	}
	if acc.Usage.PromptTokens == 0 || acc.Usage.CompletionTokens == 0 {
		t.Errorf("usage %+v, want estimated numbers", acc.Usage)
	}

	// The follow-up carries the assistant message and both results; the
	// next step matches it by the clock's result.
	params.Messages = append(params.Messages,
		acc.Choices[0].Message.ToParam(),
		openai.ToolMessage("counted: 1 2 3", "call_1_1"),
		openai.ToolMessage("it is 12:00 in Paris", "call_1_2"),
	)
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{}
	res, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Choices[0].Message.Content; got != "It is noon and I counted to 3." {
		t.Errorf("follow-up content %q", got)
	}

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	second := reqs[1]
	if second.Step != 1 || second.Chat.Stream {
		t.Errorf("second request: step %d, stream %v; want step 1, not streamed", second.Step, second.Chat.Stream)
	}
	msgs := second.Chat.Messages
	if len(msgs) != 4 {
		t.Fatalf("follow-up sent %d messages, want 4", len(msgs))
	}
	var sentIDs []string
	for _, tc := range msgs[1].ToolCalls {
		sentIDs = append(sentIDs, tc.ID+" "+tc.Function.Name+" "+tc.Function.Arguments)
	}
	wantIDs := []string{want[0].ID + " count " + want[0].Args, want[1].ID + " clock " + want[1].Args}
	if diff := cmp.Diff(wantIDs, sentIDs); diff != "" {
		t.Errorf("assistant tool calls sent back (-want +got):\n%s", diff)
	}
	if msgs[3].Role != "tool" || msgs[3].ToolCallID != "call_1_2" || msgs[3].Text() != "it is 12:00 in Paris" {
		t.Errorf("last message sent %+v", msgs[3])
	}
	var offered []string
	for _, tl := range second.Chat.Tools {
		offered = append(offered, tl.Function.Name)
	}
	if diff := cmp.Diff([]string{"count", "clock"}, offered); diff != "" {
		t.Errorf("tools sent (-want +got):\n%s", diff)
	}
	if err := srv.Verify(); err != nil {
		t.Error(err)
	}
}

func TestNonStreaming(t *testing.T) {
	srv := start(t, `{"steps": [{
		"when": {"any": true},
		"reply": {"tool_calls": [{"id": "call_x", "name": "read", "arguments": "{\"path\": \"a.txt\""}],
		          "usage": {"prompt_tokens": 5, "completion_tokens": 7}}
	}]}`, scripted.Options{})
	c := client(srv, "k")
	res, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("read a.txt")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Object != "chat.completion" || len(res.Choices) != 1 {
		t.Fatalf("completion %s", res.RawJSON())
	}
	ch := res.Choices[0]
	if ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 1 {
		t.Fatalf("choice %s", ch.RawJSON())
	}
	tc := ch.Message.ToolCalls[0]
	// A JSON string in the script is sent verbatim, even when it is not
	// valid JSON, so a loop's handling of bad arguments can be tested.
	if tc.ID != "call_x" || tc.Function.Name != "read" || tc.Function.Arguments != `{"path": "a.txt"` {
		t.Errorf("tool call %s", tc.RawJSON())
	}
	if res.Usage.TotalTokens != 12 {
		t.Errorf("usage %+v, want 12 tokens in all", res.Usage)
	}
	if r := srv.Requests()[0]; r.Chat.Stream || r.Chat.StreamOptions != nil {
		t.Errorf("recorded a streamed request: %+v", r.Chat)
	}
}

func TestWrongKeyIs401(t *testing.T) {
	srv := start(t, `{"model": "m1", "steps": [{"when": {"any": true}, "reply": {"text": "hi"}}]}`,
		scripted.Options{APIKey: "sk-right"})
	params := openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	}
	wrong := client(srv, "sk-wrong")
	_, err := wrong.Chat.Completions.New(context.Background(), params)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %v (%T), want *openai.Error", err, err)
	}
	if apiErr.StatusCode != http.StatusUnauthorized || apiErr.Code != "invalid_api_key" {
		t.Errorf("status %d code %q, want 401 invalid_api_key", apiErr.StatusCode, apiErr.Code)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1: a 401 is not retried", n)
	}

	right := client(srv, "sk-right")
	page, err := right.Models.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].ID != "m1" {
		t.Errorf("models %s", page.RawJSON())
	}
	res, err := right.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if res.Choices[0].Message.Content != "hi" {
		t.Errorf("content %q", res.Choices[0].Message.Content)
	}
}

func TestRateLimitRetried(t *testing.T) {
	for _, tc := range []struct {
		name      string
		limit     int
		stream    bool
		wantErr   bool
		wantCodes []int
	}{
		{"two 429s then success", 2, false, false, []int{429, 429, 200}},
		{"streamed: two 429s then success", 2, true, false, []int{429, 429, 200}},
		{"more 429s than retries", 3, false, true, []int{429, 429, 429}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := start(t, `{"steps": [{"when": {"user": "hi"}, "reply": {"text": "hello"}}]}`,
				scripted.Options{RateLimit: tc.limit})
			c := client(srv, "k") // the SDK's default retries: two
			params := openai.ChatCompletionNewParams{
				Model:    "gpt-test",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
			}
			var content string
			var err error
			if tc.stream {
				stream := c.Chat.Completions.NewStreaming(context.Background(), params)
				var acc openai.ChatCompletionAccumulator
				for stream.Next() {
					acc.AddChunk(stream.Current())
				}
				err = stream.Err()
				stream.Close()
				if err == nil {
					content = acc.Choices[0].Message.Content
				}
			} else {
				var res *openai.ChatCompletion
				res, err = c.Chat.Completions.New(context.Background(), params)
				if err == nil {
					content = res.Choices[0].Message.Content
				}
			}
			if tc.wantErr {
				var apiErr *openai.Error
				if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Code != "rate_limit_exceeded" {
					t.Errorf("error %v, want a 429 rate_limit_exceeded *openai.Error", err)
				}
			} else if err != nil || content != "hello" {
				t.Errorf("got %q, %v; want hello after the retries", content, err)
			}

			var codes []int
			var retryCounts []string
			for _, r := range srv.Requests() {
				codes = append(codes, r.Status)
				retryCounts = append(retryCounts, r.Header.Get("X-Stainless-Retry-Count"))
			}
			if diff := cmp.Diff(tc.wantCodes, codes); diff != "" {
				t.Errorf("statuses answered (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"0", "1", "2"}, retryCounts); diff != "" {
				t.Errorf("the SDK's retry counts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMismatchIs400NamingTheStep(t *testing.T) {
	srv := start(t, parallelScript, scripted.Options{})
	c := client(srv, "k")
	ctx := context.Background()
	ask := func(msgs ...openai.ChatCompletionMessageParamUnion) error {
		_, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model: "gpt-test", Messages: msgs,
			Tools: []openai.ChatCompletionToolUnionParam{tool("count")},
		})
		return err
	}
	want400 := func(err error, parts ...string) {
		t.Helper()
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 {
			t.Fatalf("error %v, want a 400 *openai.Error", err)
		}
		for _, p := range parts {
			if !strings.Contains(apiErr.Message, p) {
				t.Errorf("message %q does not contain %q", apiErr.Message, p)
			}
		}
	}

	want400(ask(openai.UserMessage("hello there")),
		`request 1 does not match`, `step 1 ("two calls")`, `user message containing "time and count"`,
		`ends with the user message "hello there"`, `offers the tools count`)
	// A mismatch does not move the script on.
	if err := ask(openai.UserMessage("time and count")); err != nil {
		t.Fatal(err)
	}
	asst := openai.AssistantMessage("")
	asst.OfAssistant.ToolCalls = []openai.ChatCompletionMessageToolCallUnionParam{
		{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: "a", Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: "clock", Arguments: "{}"}}},
	}
	want400(ask(openai.UserMessage("time and count"), asst, openai.ToolMessage("12:00", "a")),
		`step 2 ("after the results")`, `one of them from "clock" containing "12:00", offering the tools count, clock`,
		`ends with 1 tool result(s): from "clock" "12:00" and offers the tools count`)
	if err := srv.Verify(); err == nil || !strings.Contains(err.Error(), `step 2 ("after the results") has not answered`) {
		t.Errorf("Verify = %v, want step 2 named", err)
	}
	codes := []int{}
	for _, r := range srv.Requests() {
		codes = append(codes, r.Status)
	}
	if diff := cmp.Diff([]int{400, 200, 400}, codes); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}

func TestAfterTheLastStep(t *testing.T) {
	srv := start(t, `{"steps": [{"when": {"any": true}, "reply": {"text": "once"}}]}`, scripted.Options{})
	c := client(srv, "k")
	params := openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")}}
	if _, err := c.Chat.Completions.New(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	_, err := c.Chat.Completions.New(context.Background(), params)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Message, "request 2 came after the script's last step (1 steps, all answered)") {
		t.Errorf("error %v", err)
	}
}

func TestRepeatStep(t *testing.T) {
	srv := start(t, `{"steps": [
		{"when": {"user": "ping"}, "reply": {"text": "pong"}, "repeat": true},
		{"when": {"user": "bye"}, "reply": {"text": "ciao"}}
	]}`, scripted.Options{})
	c := client(srv, "k")
	var got []string
	for _, msg := range []string{"ping", "ping", "ping", "bye"} {
		res, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(msg)},
		})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, res.Choices[0].Message.Content)
	}
	if diff := cmp.Diff([]string{"pong", "pong", "pong", "ciao"}, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	if err := srv.Verify(); err != nil {
		t.Error(err)
	}
}

func TestInvalidConversationIs400(t *testing.T) {
	srv := start(t, parallelScript, scripted.Options{})
	c := client(srv, "k")
	asst := openai.AssistantMessage("")
	for _, id := range []string{"c1", "c2"} {
		asst.OfAssistant.ToolCalls = append(asst.OfAssistant.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: id, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: "clock", Arguments: "{}"}},
		})
	}
	for _, tc := range []struct {
		name string
		msgs []openai.ChatCompletionMessageParamUnion
		want string
	}{
		{"a call left unanswered", []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x"), asst, openai.ToolMessage("r", "c1")},
			"The following tool_call_ids did not have response messages: c2"},
		{"a user message before the results", []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x"), asst, openai.UserMessage("y")},
			"did not have response messages: c1, c2"},
		{"a result for no call", []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x"), openai.ToolMessage("r", "zz")},
			`must be a response to a preceding message with 'tool_calls' (messages[1], tool_call_id "zz")`},
		{"no messages", nil, "Invalid 'messages': empty array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "m", Messages: tc.msgs})
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Message, tc.want) {
				t.Errorf("error %v, want a 400 containing %q", err, tc.want)
			}
		})
	}
	if err := srv.Verify(); err == nil {
		t.Error("Verify = nil after only refused requests")
	}
}

// TestRawStream reads the wire as bytes: SSE data lines, the usage chunk
// with no choices, and [DONE] last.
func TestRawStream(t *testing.T) {
	srv := start(t, `{"steps": [{"when": {"any": true}, "reply": {"text": "a b", "usage": {"prompt_tokens": 1, "completion_tokens": 2}}}]}`, scripted.Options{})
	body := `{"model": "m", "stream": true, "stream_options": {"include_usage": true}, "messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}]}`
	res, err := http.Post(srv.URL()+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type %q", ct)
	}
	var events []string
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line %q is not an SSE data line", line)
		}
		events = append(events, data)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(events) != 6 || events[5] != "[DONE]" {
		t.Fatalf("events %q: want role, two words, finish, usage, [DONE]", events)
	}
	var usage struct {
		Object  string            `json:"object"`
		Choices []json.RawMessage `json:"choices"`
		Usage   struct {
			TotalTokens int `json:"total_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(events[4]), &usage); err != nil {
		t.Fatal(err)
	}
	if usage.Object != "chat.completion.chunk" || usage.Choices == nil || len(usage.Choices) != 0 || usage.Usage.TotalTokens != 3 {
		t.Errorf("usage chunk %s", events[4])
	}
	if got := srv.Requests()[0].Chat.Messages[0].Text(); got != "x" {
		t.Errorf("text of content parts %q", got)
	}
}

func TestRawErrors(t *testing.T) {
	srv := start(t, `{"steps": [{"when": {"any": true}, "reply": {"text": "a"}}]}`, scripted.Options{})
	for _, tc := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"POST", "/v1/chat/completions", `{"model": "m", "messages": [{"role": "user", "content": "x"}], "stream_options": {"include_usage": true}}`, 400, "only allowed when 'stream' is set to true"},
		{"POST", "/v1/chat/completions", `{"model": "m", "messages": [{"role": "wizard", "content": "x"}]}`, 400, "Invalid value: 'wizard'"},
		{"POST", "/v1/chat/completions", `{"messages": [{"role": "user", "content": "x"}]}`, 400, "you must provide a model parameter"},
		{"POST", "/v1/chat/completions", `{"model": `, 400, "could not parse the JSON body"},
		{"GET", "/v1/chat/completions", ``, 404, "Invalid URL (GET /v1/chat/completions)"},
		{"POST", "/v1/responses", `{}`, 404, "Invalid URL (POST /v1/responses)"},
	} {
		req, err := http.NewRequest(tc.method, srv.URL()+tc.path, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Error struct {
				Message string  `json:"message"`
				Type    string  `json:"type"`
				Param   *string `json:"param"`
				Code    *string `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatalf("%s %s: body %s is not OpenAI's error shape: %v", tc.method, tc.path, data, err)
		}
		if res.StatusCode != tc.status || e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, tc.want) {
			t.Errorf("%s %s %s: %d %s; want %d containing %q", tc.method, tc.path, tc.body, res.StatusCode, data, tc.status, tc.want)
		}
	}
	http.DefaultClient.CloseIdleConnections()
}

// TestIndependentServer points the same client code at an OpenAI-compatible
// server written only from the API's public shape (a Python http.server),
// so the client side does not lean on quirks of the scripted server.
func TestIndependentServer(t *testing.T) {
	cmd := exec.Command("python3", "testdata/oai_stream_server.py")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &strings.Builder{}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := false
	t.Cleanup(func() {
		if !waited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the port: %v (stderr: %s)", err, cmd.Stderr)
	}
	port, ok := strings.CutPrefix(strings.TrimSpace(line), "PORT ")
	if !ok {
		t.Fatalf("first line %q, want PORT <n>", line)
	}

	c := openai.NewClient(option.WithBaseURL("http://127.0.0.1:"+port+"/v1/"), option.WithAPIKey("k"), option.WithMaxRetries(0))
	stream := c.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:         "independent-model",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("weather in Paris?")},
		Tools:         []openai.ChatCompletionToolUnionParam{tool("get_weather")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		if !acc.AddChunk(stream.Current()) {
			t.Fatalf("the accumulator refused chunk %s", stream.Current().RawJSON())
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	stream.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the independent server: %v (stderr: %s)", err, cmd.Stderr)
	}
	waited = true

	msg := acc.Choices[0].Message
	if msg.Content != "Sunny in Paris." {
		t.Errorf("content %q", msg.Content)
	}
	if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].ID != "call_abc" || msg.ToolCalls[0].Function.Name != "get_weather" ||
		msg.ToolCalls[0].Function.Arguments != `{"city": "Paris"}` {
		t.Errorf("tool calls %+v", msg.ToolCalls)
	}
	if acc.Choices[0].FinishReason != "tool_calls" || acc.Usage.TotalTokens != 26 {
		t.Errorf("finish %q, usage %+v", acc.Choices[0].FinishReason, acc.Usage)
	}
}

func TestServe(t *testing.T) {
	if _, err := scripted.Serve(context.Background(), &scripted.Script{}, "127.0.0.1:0"); err == nil {
		t.Error("Serve accepted a script with no steps")
	}
	s, err := scripted.Parse([]byte(`{"steps": [{"when": {"any": true}, "reply": {"text": "a"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := scripted.Serve(ctx, s, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := client(srv, "k", option.WithMaxRetries(0))
	page, err := c.Models.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].ID != "scripted" {
		t.Errorf("models %s, want the default model", page.RawJSON())
	}
	cancel()
	// Close returns once the close the cancellation started has finished.
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Models.List(context.Background()); err == nil {
		t.Error("the server still answers after its context is done and it is closed")
	}
	if err := srv.Listen("127.0.0.1:0"); err == nil {
		t.Error("Listen after Close succeeded")
	}
}

func TestScriptedFailures(t *testing.T) {
	srv := start(t, `{"steps": [
		{"name": "overloaded", "when": {"any": true}, "reply": {"error": {"status": 503, "message": "the engine is overloaded"}}},
		{"name": "recovered", "when": {"user": "hi"}, "reply": {"text": "hello again"}},
		{"name": "too long", "when": {"any": true}, "reply": {"error": {"status": 400, "type": "invalid_request_error", "code": "context_length_exceeded", "message": "too many tokens"}}},
		{"name": "cut off", "when": {"any": true}, "reply": {"text": "half an", "stream_error": "the stream broke"}}
	]}`, scripted.Options{})
	c := client(srv, "k")
	params := openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}

	// The SDK retries the 503; the retry is answered by the next step.
	res, err := c.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if res.Choices[0].Message.Content != "hello again" {
		t.Errorf("content %q", res.Choices[0].Message.Content)
	}

	_, err = c.Chat.Completions.New(context.Background(), params)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Code != "context_length_exceeded" || apiErr.Message != "too many tokens" {
		t.Errorf("error %v, want the scripted 400", err)
	}

	stream := c.Chat.Completions.NewStreaming(context.Background(), params)
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	err = stream.Err()
	stream.Close()
	if err == nil || !strings.Contains(err.Error(), "the stream broke") {
		t.Errorf("stream error %v, want the scripted one", err)
	}
	if got := acc.Choices[0].Message.Content; got != "half an" {
		t.Errorf("text before the error %q", got)
	}

	var got []string
	for _, r := range srv.Requests() {
		got = append(got, strconv.Itoa(r.Status)+" step "+strconv.Itoa(r.Step))
	}
	if diff := cmp.Diff([]string{"503 step 0", "200 step 1", "400 step 2", "200 step 3"}, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}
