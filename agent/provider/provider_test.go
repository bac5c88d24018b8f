package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"yolop.dev/agent/provider"
	"yolop.dev/agent/scripted"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// noEnv keeps the process environment out of a test.
func noEnv(string) string { return "" }

// kind is a provider under test, built against a scripted server.
type kind struct {
	name string
	new  func(srvURL string, o provider.Options) provider.Provider
}

var kinds = []kind{
	{"openai", func(u string, o provider.Options) provider.Provider {
		o.BaseURL = u + "/v1/"
		return provider.OpenAI(o)
	}},
	{"anthropic", func(u string, o provider.Options) provider.Provider {
		o.BaseURL = u + "/"
		return provider.Anthropic(o)
	}},
}

// serve starts a scripted server for script on loopback.
func serve(t *testing.T, script string, opts scripted.Options) *scripted.Server {
	t.Helper()
	s, err := scripted.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	srv := scripted.NewServer(s, opts)
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// each runs f for each provider against its own server for script.
func each(t *testing.T, script string, sopts scripted.Options, popts provider.Options, f func(t *testing.T, p provider.Provider, srv *scripted.Server)) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			srv := serve(t, script, sopts)
			o := popts
			if o.Getenv == nil {
				o.Getenv = noEnv
			}
			f(t, k.new(srv.URL(), o), srv)
		})
	}
}

func user(text string) provider.Request {
	return provider.Request{Model: "test-model", System: "You are terse.", Messages: []provider.Message{{Role: provider.RoleUser, Text: text}}}
}

// collect streams req and returns the deltas with the result.
func collect(t *testing.T, p provider.Provider, req provider.Request) ([]provider.Delta, provider.Result, error) {
	t.Helper()
	var ds []provider.Delta
	res, err := p.Stream(context.Background(), req, func(d provider.Delta) { ds = append(ds, d) })
	return ds, res, err
}

func TestStreamText(t *testing.T) {
	const script = `{"steps": [{"when": {"user": "count"}, "reply": {"text": "one two three four five"}}]}`
	each(t, script, scripted.Options{}, provider.Options{}, func(t *testing.T, p provider.Provider, srv *scripted.Server) {
		ds, res, err := collect(t, p, user("count to five"))
		if err != nil {
			t.Fatal(err)
		}
		var joined strings.Builder
		for _, d := range ds {
			if d.ToolCall != nil {
				t.Fatalf("unexpected tool call delta %+v", d.ToolCall)
			}
			joined.WriteString(d.Text)
		}
		if len(ds) < 5 {
			t.Errorf("got %d deltas, want the text in at least 5 pieces", len(ds))
		}
		if joined.String() != "one two three four five" || res.Text != joined.String() {
			t.Errorf("deltas %q, result %q; want %q", joined.String(), res.Text, "one two three four five")
		}
		if res.FinishReason != provider.FinishStop || res.Model != "test-model" || res.ResponseID == "" || res.Provider != p.Name() {
			t.Errorf("result = %+v", res)
		}
		// The system prompt went as the provider's system message or block.
		r := srv.Requests()[0]
		if !strings.Contains(string(r.Body), "You are terse.") {
			t.Errorf("request body %s lacks the system prompt", r.Body)
		}
		if r.Messages != nil && !strings.Contains(string(r.Messages.System), "You are terse.") {
			t.Errorf("anthropic system = %s", r.Messages.System)
		}
		if r.Chat != nil && (r.Chat.Messages[0].Role != "system" || r.Chat.StreamOptions == nil || !r.Chat.StreamOptions.IncludeUsage) {
			t.Errorf("chat request = %+v", r.Chat)
		}
	})
}

const toolScript = `{"steps": [
	{"when": {"user": "time", "offered": ["clock", "count"]}, "reply": {"text": "Checking.", "tool_calls": [
		{"name": "clock", "arguments": {"zone": "Europe/Paris", "format": "a fairly long format string that is split"}},
		{"name": "count", "arguments": {"to": 3, "step": [1, 2, 3]}}
	]}},
	{"when": {"tool_result": {"tool": "clock", "contains": "noon"}}, "reply": {"text": "It is noon."}}
]}`

// toolRequest offers the tools toolScript's first step wants offered.
func toolRequest() provider.Request {
	req := user("what time is it")
	req.Tools = []provider.Tool{
		{Name: "clock", Description: "Tells the time.", InputSchema: json.RawMessage(`{"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"], "additionalProperties": false}`)},
		{Name: "count"},
	}
	return req
}

func TestParallelToolCalls(t *testing.T) {
	each(t, toolScript, scripted.Options{}, provider.Options{}, func(t *testing.T, p provider.Provider, srv *scripted.Server) {
		ds, res, err := collect(t, p, toolRequest())
		if err != nil {
			t.Fatal(err)
		}
		var calls []provider.ToolCall
		for _, d := range ds {
			if d.ToolCall != nil {
				calls = append(calls, *d.ToolCall)
			}
		}
		want := []provider.ToolCall{
			{ID: "call_1_1", Name: "clock", Args: json.RawMessage(`{"zone": "Europe/Paris", "format": "a fairly long format string that is split"}`)},
			{ID: "call_1_2", Name: "count", Args: json.RawMessage(`{"to": 3, "step": [1, 2, 3]}`)},
		}
		jsonEq := cmp.Comparer(func(a, b json.RawMessage) bool {
			var x, y any
			return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && cmp.Equal(x, y)
		})
		if d := cmp.Diff(want, calls, jsonEq); d != "" {
			t.Errorf("tool call deltas (-want +got):\n%s", d)
		}
		if d := cmp.Diff(want, res.ToolCalls, jsonEq); d != "" {
			t.Errorf("result tool calls (-want +got):\n%s", d)
		}
		if res.Text != "Checking." || res.FinishReason != provider.FinishToolCalls {
			t.Errorf("text %q finish %q", res.Text, res.FinishReason)
		}
		// The schema went whole: properties, required and the rest.
		var sent struct {
			Tools []struct {
				InputSchema json.RawMessage `json:"input_schema"`
				Function    struct {
					Description string          `json:"description"`
					Parameters  json.RawMessage `json:"parameters"`
				} `json:"function"`
				Description string `json:"description"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(srv.Requests()[0].Body, &sent); err != nil || len(sent.Tools) != 2 {
			t.Fatalf("tools sent: %v %s", err, srv.Requests()[0].Body)
		}
		schema, desc := sent.Tools[0].InputSchema, sent.Tools[0].Description
		if schema == nil {
			schema, desc = sent.Tools[0].Function.Parameters, sent.Tools[0].Function.Description
		}
		want0 := json.RawMessage(`{"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"], "additionalProperties": false}`)
		if !cmp.Equal(want0, schema, jsonEq) || desc != "Tells the time." {
			t.Errorf("clock sent with schema %s, description %q", schema, desc)
		}
	})
}

func TestToolResultFollowUp(t *testing.T) {
	each(t, toolScript, scripted.Options{}, provider.Options{}, func(t *testing.T, p provider.Provider, srv *scripted.Server) {
		req := toolRequest()
		_, first, err := collect(t, p, req)
		if err != nil {
			t.Fatal(err)
		}
		req.Messages = append(req.Messages, provider.Message{Role: provider.RoleAssistant, Text: first.Text, ToolCalls: first.ToolCalls})
		results := []provider.Message{
			{Role: provider.RoleTool, ToolResult: &provider.ToolResult{CallID: first.ToolCalls[0].ID, Content: "it is noon"}},
			{Role: provider.RoleTool, ToolResult: &provider.ToolResult{CallID: first.ToolCalls[1].ID, Content: "no such tool", IsError: true}},
		}

		// A history that drops a tool result is refused, as the real APIs do.
		dropped := req
		dropped.Messages = append(append([]provider.Message(nil), req.Messages...), results[0])
		_, _, err = collect(t, p, dropped)
		if !errors.Is(err, provider.ErrBadRequest) {
			t.Fatalf("with a tool result missing: err = %v, want ErrBadRequest", err)
		}

		req.Messages = append(req.Messages, results...)
		_, res, err := collect(t, p, req)
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != "It is noon." || res.FinishReason != provider.FinishStop {
			t.Errorf("result = %+v", res)
		}
		if err := srv.Verify(); err != nil {
			t.Error(err)
		}
		last := srv.Requests()[len(srv.Requests())-1]
		if m := last.Messages; m != nil {
			// Both results in one user message after the assistant's.
			if n := len(m.Messages); n != 3 || m.Messages[2].Role != "user" || !strings.Contains(string(m.Messages[2].Content), `"is_error":true`) {
				t.Errorf("anthropic messages = %+v", m.Messages)
			}
		}
	})
}

func TestUsage(t *testing.T) {
	const script = `{"steps": [{"when": {"any": true}, "reply": {"text": "ok", "usage": {"prompt_tokens": 812, "completion_tokens": 31, "cached_tokens": 768}}}]}`
	each(t, script, scripted.Options{}, provider.Options{}, func(t *testing.T, p provider.Provider, srv *scripted.Server) {
		_, res, err := collect(t, p, user("hi"))
		if err != nil {
			t.Fatal(err)
		}
		want := provider.Usage{InputTokens: 812, OutputTokens: 31, CachedInputTokens: 768}
		if res.Usage != want {
			t.Errorf("usage = %+v, want %+v", res.Usage, want)
		}
	})
}

func TestEnvironment(t *testing.T) {
	const script = `{"steps": [{"when": {"any": true}, "reply": {"text": "ok"}}]}`
	for _, k := range []struct {
		name string
		new  func(provider.Options) provider.Provider
		key  string
		url  string
		path string
	}{
		{"openai", func(o provider.Options) provider.Provider { return provider.OpenAI(o) }, "OPENAI_API_KEY", "OPENAI_BASE_URL", "/v1/"},
		{"anthropic", func(o provider.Options) provider.Provider { return provider.Anthropic(o) }, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "/"},
	} {
		t.Run(k.name, func(t *testing.T) {
			srv := serve(t, script, scripted.Options{APIKey: "env-key"})
			env := map[string]string{k.key: "env-key", k.url: srv.URL() + k.path}
			p := k.new(provider.Options{Getenv: func(n string) string { return env[n] }})
			if _, _, err := collect(t, p, user("hi")); err != nil {
				t.Fatal(err)
			}
			// Options win over the environment.
			p = k.new(provider.Options{APIKey: "other-key", Getenv: func(n string) string { return env[n] }})
			_, _, err := collect(t, p, user("hi"))
			if !errors.Is(err, provider.ErrAuth) {
				t.Fatalf("with Options.APIKey set: err = %v, want ErrAuth", err)
			}
		})
	}
}

// failure is a failing exchange and what its error must say.
type failure struct {
	name    string
	script  string
	sopts   scripted.Options
	popts   provider.Options
	key     string
	want    error
	says    []string
	only    string // run for this provider only
	answers []int  // the statuses the server answered, in order
}

var failures = []failure{
	{name: "401", script: `{"steps": [{"when": {"any": true}, "reply": {"text": "ok"}}]}`,
		sopts: scripted.Options{APIKey: "the-right-key"}, key: "a-wrong-key", want: provider.ErrAuth,
		says: []string{"API refused the key (401 Unauthorized)", "check the API key"}, answers: []int{401}},
	{name: "401 no key", script: `{"steps": [{"when": {"any": true}, "reply": {"text": "ok"}}]}`,
		sopts: scripted.Options{APIKey: "the-right-key"}, want: provider.ErrAuth,
		says: []string{"no API key is set; set "}, answers: []int{401}},
	{name: "429 exhausted", script: `{"steps": [{"when": {"any": true}, "reply": {"text": "ok"}}]}`,
		sopts: scripted.Options{RateLimit: 3}, popts: provider.Options{MaxRetries: 2}, want: provider.ErrRateLimited,
		says: []string{"rate-limiting requests (429: Rate limit reached", ") after 3 attempts; wait a moment, then try again"}, answers: []int{429, 429, 429}},
	{name: "429 retry-after", script: `{"steps": [{"when": {"any": true}, "reply": {"text": "ok"}}]}`,
		sopts: scripted.Options{RateLimit: 1, RetryAfter: 17}, popts: provider.Options{MaxRetries: -1}, want: provider.ErrRateLimited,
		says: []string{") after 1 attempt; wait 17s as its Retry-After asks, then try again"}, answers: []int{429}},
	{name: "503", script: `{"steps": [{"when": {"any": true}, "repeat": true, "reply": {"error": {"status": 503, "message": "overloaded, sorry"}}}]}`,
		popts: provider.Options{MaxRetries: 1}, want: provider.ErrServer,
		says: []string{"provider failed (503 Service Unavailable: overloaded, sorry) after 2 attempts; try again"}, answers: []int{503, 503}},
	{name: "context too long", only: "openai",
		script: `{"steps": [{"when": {"any": true}, "reply": {"error": {"status": 400, "type": "invalid_request_error", "code": "context_length_exceeded", "message": "too many tokens"}}}]}`,
		want:   provider.ErrContextTooLong, says: []string{"too long for the model's context window", "too many tokens"}, answers: []int{400}},
	{name: "context too long", only: "anthropic",
		script: `{"steps": [{"when": {"any": true}, "reply": {"error": {"status": 400, "message": "prompt is too long: 210000 tokens > 200000 maximum"}}}]}`,
		want:   provider.ErrContextTooLong, says: []string{"too long for the model's context window", "210000 tokens"}, answers: []int{400}},
	{name: "bad request", script: `{"steps": [{"when": {"any": true}, "reply": {"error": {"status": 400, "message": "no such model"}}}]}`,
		want: provider.ErrBadRequest, says: []string{"API refused the request (400 Bad Request): no such model"}, answers: []int{400}},
	{name: "stream error", script: `{"steps": [{"when": {"any": true}, "reply": {"text": "partial words here", "stream_error": "upstream went away"}}]}`,
		want: provider.ErrStreamDropped, says: []string{"broke off after 18 bytes of text and 0 complete tool calls", "upstream went away", "try again"}, answers: []int{200}},
}

func TestFailures(t *testing.T) {
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			for _, k := range kinds {
				if f.only != "" && f.only != k.name {
					continue
				}
				t.Run(k.name, func(t *testing.T) {
					srv := serve(t, f.script, f.sopts)
					o := f.popts
					o.APIKey = f.key
					o.Getenv = noEnv
					p := k.new(srv.URL(), o)
					_, res, err := collect(t, p, user("hi"))
					if !errors.Is(err, f.want) {
						t.Fatalf("err = %v, want %v", err, f.want)
					}
					t.Log(err)
					var pe *provider.Error
					if !errors.As(err, &pe) || pe.Provider != k.name {
						t.Fatalf("err = %#v, want a *provider.Error from %s", err, k.name)
					}
					for _, s := range f.says {
						if !strings.Contains(err.Error(), s) {
							t.Errorf("error %q does not say %q", err, s)
						}
					}
					if f.want == provider.ErrStreamDropped && res.Text != "partial words here" {
						t.Errorf("partial result text = %q", res.Text)
					}
					if res.FinishReason != provider.FinishError {
						t.Errorf("finish reason = %q, want error", res.FinishReason)
					}
					var got []int
					for _, r := range srv.Requests() {
						got = append(got, r.Status)
					}
					if !cmp.Equal(got, f.answers) {
						t.Errorf("server answered %v, want %v", got, f.answers)
					}
				})
			}
		})
	}
}

func TestRateLimitThenSuccess(t *testing.T) {
	const script = `{"steps": [{"when": {"any": true}, "reply": {"text": "made it"}}]}`
	each(t, script, scripted.Options{RateLimit: 2}, provider.Options{MaxRetries: 2}, func(t *testing.T, p provider.Provider, srv *scripted.Server) {
		_, res, err := collect(t, p, user("hi"))
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != "made it" {
			t.Errorf("text = %q", res.Text)
		}
		var got []int
		for _, r := range srv.Requests() {
			got = append(got, r.Status)
		}
		if want := []int{http.StatusTooManyRequests, http.StatusTooManyRequests, http.StatusOK}; !cmp.Equal(got, want) {
			t.Errorf("statuses = %v, want %v", got, want)
		}
	})
}

// TestKeyNeverInErrors runs every failure with a canary key, including an
// error whose message echoes the key, and checks no rendering of the error
// holds it.
func TestKeyNeverInErrors(t *testing.T) {
	const canary = "sk-canary-7f3e9b1c2d4a"
	cases := append([]failure(nil), failures...)
	cases = append(cases, failure{name: "echoed key",
		script: `{"steps": [{"when": {"any": true}, "reply": {"error": {"status": 400, "message": "Incorrect API key provided: ` + canary + `"}}}]}`})
	for _, f := range cases {
		for _, k := range kinds {
			t.Run(f.name+"/"+k.name, func(t *testing.T) {
				sopts := f.sopts
				if sopts.APIKey == "" {
					sopts.APIKey = canary
				}
				srv := serve(t, f.script, sopts)
				o := f.popts
				o.APIKey = canary
				o.Getenv = noEnv
				_, res, err := collect(t, k.new(srv.URL(), o), user("hi"))
				if err == nil {
					t.Fatal("no error")
				}
				var pe *provider.Error
				errors.As(err, &pe)
				for _, text := range []string{err.Error(), fmt.Sprintf("%v %+v %#v %s", err, err, err, errors.Unwrap(err)), fmt.Sprintf("%+v %#v", pe, res)} {
					if strings.Contains(text, canary) {
						t.Errorf("the key appears in %q", text)
					}
				}
				// The key did reach the server: the check above is not vacuous.
				if h := srv.Requests()[0].Header; !strings.Contains(h.Get("Authorization")+h.Get("X-Api-Key"), canary) {
					t.Errorf("the server did not get the key")
				}
			})
		}
	}
}

// TestNoKey: with no key anywhere (a local server), requests carry none.
func TestNoKey(t *testing.T) {
	const script = `{"steps": [{"when": {"any": true}, "reply": {"text": "ok"}}]}`
	each(t, script, scripted.Options{}, provider.Options{}, func(t *testing.T, p provider.Provider, srv *scripted.Server) {
		if _, _, err := collect(t, p, user("hi")); err != nil {
			t.Fatal(err)
		}
		h := srv.Requests()[0].Header
		if v := h.Get("Authorization") + h.Get("X-Api-Key"); v != "" {
			t.Errorf("credentials sent: %q", v)
		}
	})
}

// TestCancel: cancelling the context mid-stream ends Stream with the
// context's error and what was received so far.
func TestCancel(t *testing.T) {
	const script = `{"steps": [{"when": {"any": true}, "reply": {"text": "one two three four five six"}}]}`
	each(t, script, scripted.Options{}, provider.Options{}, func(t *testing.T, p provider.Provider, srv *scripted.Server) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		res, err := p.Stream(ctx, user("hi"), func(provider.Delta) { cancel() })
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if res.Text == "" || res.Text == "one two three four five six" || res.FinishReason != provider.FinishError {
			t.Errorf("result = %+v, want part of the text", res)
		}
	})
}

// TestUnreachable: a base URL nothing listens on gives ErrUnreachable
// naming the URL and the variable to check.
func TestUnreachable(t *testing.T) {
	srv := serve(t, `{"steps": [{"when": {"any": true}, "reply": {"text": "ok"}}]}`, scripted.Options{})
	url := srv.URL()
	srv.Close()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			p := k.new(url, provider.Options{MaxRetries: -1, APIKey: "sk-canary-unreachable", Getenv: noEnv})
			_, _, err := collect(t, p, user("hi"))
			if !errors.Is(err, provider.ErrUnreachable) {
				t.Fatalf("err = %v, want ErrUnreachable", err)
			}
			t.Log(err)
			for _, s := range []string{"could not reach the " + k.name + " API at " + url, "check the base URL"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if strings.Contains(err.Error(), "sk-canary-unreachable") {
				t.Errorf("the key appears in %q", err)
			}
		})
	}
}

// TestConcurrent: one provider streams several turns at once.
func TestConcurrent(t *testing.T) {
	const script = `{"steps": [{"when": {"any": true}, "repeat": true, "reply": {"text": "same answer for all"}}]}`
	each(t, script, scripted.Options{}, provider.Options{}, func(t *testing.T, p provider.Provider, srv *scripted.Server) {
		const n = 4
		errs := make(chan error, n)
		for range n {
			go func() {
				res, err := p.Stream(context.Background(), user("hi"), nil)
				if err == nil && res.Text != "same answer for all" {
					err = fmt.Errorf("text %q", res.Text)
				}
				errs <- err
			}()
		}
		for range n {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
		if got := len(srv.Requests()); got != n {
			t.Errorf("server got %d requests, want %d", got, n)
		}
	})
}

// TestNamedEndpoint: a provider given Options.Name (an extension's
// endpoint) is named by it in results and errors, reads no environment
// (no OPENAI_API_KEY reaches the endpoint) and points at no environment
// variable.
func TestNamedEndpoint(t *testing.T) {
	srv := serve(t, `{"steps": [{"when": {"any": true}, "reply": {"text": "ok"}}]}`, scripted.Options{})
	env := func(n string) string {
		if n == "OPENAI_API_KEY" {
			return "sk-canary-env"
		}
		return ""
	}
	p := provider.OpenAI(provider.Options{BaseURL: srv.URL() + "/v1/", Name: "ext:scripted", Getenv: env})
	if p.Name() != "ext:scripted" {
		t.Errorf("Name() = %q, want ext:scripted", p.Name())
	}
	if _, _, err := collect(t, p, user("hi")); err != nil {
		t.Fatal(err)
	}
	if h := srv.Requests()[0].Header.Get("Authorization"); strings.Contains(h, "sk-canary-env") {
		t.Errorf("the environment's key reached the endpoint: %q", h)
	}
	url := srv.URL()
	srv.Close()
	p = provider.OpenAI(provider.Options{BaseURL: url + "/v1/", Name: "ext:scripted", MaxRetries: -1})
	_, _, err := collect(t, p, user("hi"))
	if !errors.Is(err, provider.ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	if !strings.Contains(err.Error(), "could not reach the ext:scripted API") || strings.Contains(err.Error(), "OPENAI") {
		t.Errorf("error %q should name the endpoint and no environment variable", err)
	}
}
