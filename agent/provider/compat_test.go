package provider_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"yolop.dev/agent/provider"
)

// startCompat starts testdata/openai_compat.py, an OpenAI-compatible server
// written from the API's public shape alone, accepting key, and returns its
// base URL (http://127.0.0.1:<port>).
func startCompat(t *testing.T, key string) string {
	t.Helper()
	cmd := exec.Command("python3", "testdata/openai_compat.py", key)
	cmd.Stderr = os.Stderr // a traceback shows in the test's output
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the compatible server: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the compatible server's port: %v", err)
	}
	return "http://127.0.0.1:" + strings.TrimSpace(line)
}

// TestCompatibleServer runs a tool round trip through the OpenAI provider
// against the independent server: what the provider reports must be what
// that server sent, byte for byte, so nothing leans on the scripted
// server's way of streaming.
func TestCompatibleServer(t *testing.T) {
	const key = "sk-compat-3b8e1f"
	url := startCompat(t, key)
	p := provider.OpenAI(provider.Options{BaseURL: url + "/v1/", APIKey: key, MaxRetries: -1, Getenv: noEnv})

	req := provider.Request{
		Model:  "gpt-compat",
		System: "You answer briefly.",
		Messages: []provider.Message{{Role: provider.RoleUser,
			Text: "Check the weather with get_weather and the time with get_time."}},
		Tools: []provider.Tool{
			{Name: "lookup", Description: "Not named, so not called."},
			{Name: "get_weather", Description: "The weather in a city.", InputSchema: json.RawMessage(`{"type": "object",
				"properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}, "days": {"type": "integer"}},
				"required": ["city", "unit"]}`)},
			{Name: "get_time", InputSchema: json.RawMessage(`{"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]}`)},
		},
	}

	// First request: the server calls the two named tools in parallel,
	// their arguments streamed in 7-byte fragments.
	ds, first, err := collect(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	wantCalls := []provider.ToolCall{
		{ID: "call_1_0", Name: "get_weather", Args: json.RawMessage(`{"city": "test city", "unit": "celsius"}`)},
		{ID: "call_1_1", Name: "get_time", Args: json.RawMessage(`{"zone": "test zone"}`)},
	}
	var gotCalls []provider.ToolCall
	for _, d := range ds {
		if d.ToolCall == nil {
			t.Errorf("text delta %q, want only tool calls", d.Text)
			continue
		}
		gotCalls = append(gotCalls, *d.ToolCall)
	}
	if d := cmp.Diff(wantCalls, gotCalls); d != "" {
		t.Errorf("tool call deltas (-want +got):\n%s", d)
	}
	if d := cmp.Diff(wantCalls, first.ToolCalls); d != "" {
		t.Errorf("result tool calls (-want +got):\n%s", d)
	}
	for _, c := range first.ToolCalls {
		if !json.Valid(c.Args) {
			t.Errorf("%s arguments %s are not JSON", c.Name, c.Args)
		}
	}
	// Tokens are the server's words: system 3 + user 10; 5 + 3 words of arguments.
	wantFirst := provider.Result{ToolCalls: wantCalls, FinishReason: provider.FinishToolCalls, Provider: "openai",
		Model: "gpt-compat-2024-08-06", Usage: provider.Usage{InputTokens: 13, OutputTokens: 8, CachedInputTokens: 3}}
	if d := cmp.Diff(wantFirst, first, ignoreID); d != "" {
		t.Errorf("first result (-want +got):\n%s", d)
	}
	if !strings.HasPrefix(first.ResponseID, "chatcmpl-") {
		t.Errorf("response id %q, want the server's chatcmpl-…", first.ResponseID)
	}

	req.Messages = append(req.Messages, provider.Message{Role: provider.RoleAssistant, ToolCalls: first.ToolCalls})

	// A history missing a tool result is refused by the server, with its
	// message passed on.
	short := req
	short.Messages = append(append([]provider.Message(nil), req.Messages...),
		provider.Message{Role: provider.RoleTool, ToolResult: &provider.ToolResult{CallID: "call_1_0", Content: "sunny"}})
	if _, _, err := collect(t, p, short); !errors.Is(err, provider.ErrBadRequest) ||
		!strings.Contains(err.Error(), "did not have response messages: call_1_1") {
		t.Errorf("with a tool result missing: err = %v, want ErrBadRequest naming call_1_1", err)
	}

	// Second request: the tool results; the server quotes them in text,
	// one word a delta.
	req.Messages = append(req.Messages,
		provider.Message{Role: provider.RoleTool, ToolResult: &provider.ToolResult{CallID: "call_1_0", Content: "sunny, 21 degrees"}},
		provider.Message{Role: provider.RoleTool, ToolResult: &provider.ToolResult{CallID: "call_1_1", Content: "14:05"}},
	)
	ds, second, err := collect(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, d := range ds {
		if d.ToolCall != nil {
			t.Errorf("tool call delta %+v, want only text", d.ToolCall)
			continue
		}
		texts = append(texts, d.Text)
	}
	wantTexts := []string{"get_weather", " said", ` "sunny,`, " 21", ` degrees";`, " get_time", " said", ` "14:05".`}
	if d := cmp.Diff(wantTexts, texts); d != "" {
		t.Errorf("text deltas (-want +got):\n%s", d)
	}
	// Input: 13 as before + 8 words of the calls' arguments + 3 + 1 of results.
	wantSecond := provider.Result{Text: `get_weather said "sunny, 21 degrees"; get_time said "14:05".`, FinishReason: provider.FinishStop,
		Provider: "openai", Model: "gpt-compat-2024-08-06", Usage: provider.Usage{InputTokens: 25, OutputTokens: 8, CachedInputTokens: 3}}
	if d := cmp.Diff(wantSecond, second, ignoreID); d != "" {
		t.Errorf("second result (-want +got):\n%s", d)
	}

	// A reply cut by the token cap finishes with "length".
	_, cut, err := collect(t, p, provider.Request{Model: "gpt-compat", MaxTokens: 3,
		Messages: []provider.Message{{Role: provider.RoleUser, Text: "tell me a long story"}}})
	if err != nil {
		t.Fatal(err)
	}
	if cut.Text != "You said: tell" || cut.FinishReason != provider.FinishLength {
		t.Errorf("capped reply: text %q finish %q, want %q length", cut.Text, cut.FinishReason, "You said: tell")
	}
}

var ignoreID = cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "ResponseID" }, cmp.Ignore())

// TestCompatibleServerAuth: the independent server's 401s are ErrAuth, and
// the refused key is not in the message.
func TestCompatibleServerAuth(t *testing.T) {
	url := startCompat(t, "sk-compat-right")
	for _, tc := range []struct {
		key, says string
	}{
		{"sk-compat-wrong-9d2c", "the openai API refused the key (401 Unauthorized): check the API key (OPENAI_API_KEY)"},
		{"", "the openai API refused the request (401 Unauthorized): no API key is set; set OPENAI_API_KEY"},
	} {
		p := provider.OpenAI(provider.Options{BaseURL: url + "/v1/", APIKey: tc.key, MaxRetries: -1, Getenv: noEnv})
		_, res, err := collect(t, p, user("hi"))
		if !errors.Is(err, provider.ErrAuth) {
			t.Fatalf("key %q: err = %v, want ErrAuth", tc.key, err)
		}
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Status != http.StatusUnauthorized || err.Error() != tc.says {
			t.Errorf("key %q: err = %#v, want 401 saying %q", tc.key, err, tc.says)
		}
		if tc.key != "" && strings.Contains(err.Error(), tc.key) {
			t.Errorf("the key appears in %q", err)
		}
		if res.FinishReason != provider.FinishError {
			t.Errorf("key %q: finish reason %q, want error", tc.key, res.FinishReason)
		}
	}
}

// TestCompatibleServerWhole checks the independent server's non-streamed
// answer agrees with its stream, so the server is itself what its doc says.
func TestCompatibleServerWhole(t *testing.T) {
	url := startCompat(t, "k")
	body := `{"model": "m", "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello there"}]}`
	hreq, err := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	hreq.Header.Set("Authorization", "Bearer k")
	hreq.Header.Set("Content-Type", "application/json")
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	hres, err := client.Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(hres.Body)
	hres.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Object  string
		Choices []struct {
			Message      struct{ Role, Content string }
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			PromptTokens        int `json:"prompt_tokens"`
			CompletionTokens    int `json:"completion_tokens"`
			PromptTokensDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		}
	}
	if err := json.Unmarshal(data, &got); err != nil || hres.StatusCode != http.StatusOK || len(got.Choices) != 1 {
		t.Fatalf("%d %s (%v)", hres.StatusCode, data, err)
	}
	c := got.Choices[0]
	if got.Object != "chat.completion" || c.Message.Role != "assistant" || c.Message.Content != "You said: hello there" || c.FinishReason != "stop" ||
		got.Usage.PromptTokens != 4 || got.Usage.CompletionTokens != 4 || got.Usage.PromptTokensDetails.CachedTokens != 2 {
		t.Errorf("whole answer %s", data)
	}

	p := provider.OpenAI(provider.Options{BaseURL: url + "/v1/", APIKey: "k", MaxRetries: -1, Getenv: noEnv})
	res, err := p.Stream(t.Context(), provider.Request{Model: "m", System: "Be brief.",
		Messages: []provider.Message{{Role: provider.RoleUser, Text: "hello there"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != c.Message.Content || res.Usage.InputTokens != 4 || res.Usage.OutputTokens != 4 {
		t.Errorf("streamed %+v, whole %s", res, data)
	}
}
