package sdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/internal/leakcheck"
	"yolop.dev/core/internal/testdeadline"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
)

// host is the host side of an in-process connection to a Server.
type host struct {
	*jsonrpc.Conn
	mu    sync.Mutex
	got   []string // methods the server sent to the host
	asked chan yep.UIAskParams
	done  chan error // ServeConn's result
	stdin io.Closer
}

func (h *host) Handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	h.mu.Lock()
	h.got = append(h.got, req.Method+" "+string(req.Params))
	h.mu.Unlock()
	if req.Method == yep.MethodUIAsk {
		var q yep.UIAskParams
		if err := json.Unmarshal(req.Params, &q); err != nil {
			return nil, err
		}
		if h.asked != nil {
			h.asked <- q
		}
		return yep.UIAskResult{Answer: "answer to " + q.Prompt}, nil
	}
	return nil, nil
}

func (h *host) received() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got)
}

// serve runs s over in-memory pipes and returns the host side. The server
// and the connection are stopped and waited for when the test ends.
func serve(t *testing.T, s *sdk.Server) *host {
	t.Helper()
	leakcheck.Check(t)
	serverIn, hostOut := io.Pipe()
	hostIn, serverOut := io.Pipe()
	h := &host{done: make(chan error, 1), stdin: hostOut}
	h.Conn = jsonrpc.NewConn(hostIn, hostOut, jsonrpc.Options{Handler: h, Closer: closers{hostOut, hostIn}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		h.done <- s.ServeConn(ctx, serverIn, serverOut)
		serverOut.Close()
	}()
	t.Cleanup(func() {
		cancel()
		h.Conn.Close()
		h.Conn.Wait()
		select {
		case <-h.done:
		case <-time.After(testdeadline.Left(t)):
			t.Error("ServeConn did not return")
		}
	})
	return h
}

type closers []io.Closer

func (c closers) Close() error {
	for _, x := range c {
		x.Close()
	}
	return nil
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testdeadline.Left(t))
	t.Cleanup(cancel)
	return ctx
}

func quiet() sdk.Options { return sdk.Options{Logger: hclog.NewNullLogger()} }

func (h *host) initialize(t *testing.T, caps ...string) yep.InitializeResult {
	t.Helper()
	var res yep.InitializeResult
	if err := h.Call(ctxT(t), yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: "1.0", Capabilities: caps}, &res); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return res
}

func (h *host) tool(t *testing.T, name string, args string) (yep.ToolResult, error) {
	t.Helper()
	var res yep.ToolResult
	err := h.Call(ctxT(t), yep.MethodToolCall, yep.ToolCallParams{ToolCallID: "t1", Name: name, Args: json.RawMessage(args)}, &res)
	return res, err
}

func wireCode(err error) int64 {
	var we *yep.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return 1
}

func echoTool(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
	var a struct{ Text string }
	if err := call.Bind(&a); err != nil {
		return yep.ToolResult{}, err
	}
	return yep.ToolResult{Output: a.Text}, nil
}

func TestNotInitialized(t *testing.T) {
	s := sdk.NewServer(sdk.Info{Name: "x"}, quiet())
	s.Tool("echo", echoTool)
	h := serve(t, s)
	for _, method := range []string{yep.MethodToolCall, yep.MethodHookFire, yep.MethodShutdown, "custom/thing"} {
		err := h.Call(ctxT(t), method, struct{}{}, nil)
		if wireCode(err) != yep.CodeNotInitialized || !strings.Contains(err.Error(), "initialize") {
			t.Errorf("%s before initialize: %v, want code %d", method, err, yep.CodeNotInitialized)
		}
	}
	h.initialize(t)
	if res, err := h.tool(t, "echo", `{"text":"ok"}`); err != nil || res.Output != "ok" {
		t.Fatalf("after initialize: %+v %v", res, err)
	}
	var res yep.InitializeResult
	if err := h.Call(ctxT(t), yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: "1.0"}, &res); wireCode(err) != yep.CodeInvalidRequest {
		t.Errorf("second initialize: %v, want invalid request", err)
	}
}

func TestVersionNegotiation(t *testing.T) {
	for _, tc := range []struct {
		host, want string
		fails      bool
	}{
		{host: "1.0", want: "1.0"},
		{host: "1.7", want: yep.ProtocolVersion}, // minors are additive: the lower wins
		{host: "1.0", want: "1.0"},               // an older 1.x host is answered in its own minor
		{host: "", want: yep.ProtocolVersion},    // a missing version defaults to ours
		{host: "2.0", fails: true},
		{host: "0.9", fails: true},
		{host: "one", fails: true},
	} {
		t.Run(tc.host, func(t *testing.T) {
			s := sdk.NewServer(sdk.Info{Name: "v"}, quiet())
			s.Tool("echo", echoTool)
			h := serve(t, s)
			var res yep.InitializeResult
			err := h.Call(ctxT(t), yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: tc.host}, &res)
			if tc.fails {
				if err == nil {
					t.Fatalf("initialize %q succeeded, want an error", tc.host)
				}
				if !strings.Contains(err.Error(), tc.host) || !strings.Contains(err.Error(), yep.ProtocolVersion) {
					t.Errorf("error %q does not name both versions", err)
				}
				// The handshake failed, so the server stays uninitialized.
				if _, err := h.tool(t, "echo", `{}`); wireCode(err) != yep.CodeNotInitialized {
					t.Errorf("call after a failed handshake: %v", err)
				}
				return
			}
			if err != nil || res.ProtocolVersion != tc.want {
				t.Fatalf("initialize %q = %q, %v; want %q", tc.host, res.ProtocolVersion, err, tc.want)
			}
		})
	}
}

func TestCapabilitiesDeriveFromRegistrations(t *testing.T) {
	noop := func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) { return yep.ToolResult{}, nil }
	allow := func(ctx context.Context, h *sdk.HookEvent) (yep.HookFireResult, error) {
		return yep.HookFireResult{}, nil
	}
	for _, tc := range []struct {
		name   string
		info   sdk.Info
		setup  func(s *sdk.Server)
		caps   []string
		params string
	}{
		{"nothing", sdk.Info{}, func(s *sdk.Server) {}, []string{"cancel"}, `null`},
		{"tool", sdk.Info{}, func(s *sdk.Server) { s.Tool("a", noop) }, []string{"tools", "cancel"}, `{"tools":[{"name":"a"}]}`},
		{"streaming tool", sdk.Info{}, func(s *sdk.Server) { s.Tool("a", noop); s.StreamingTool("b", noop) },
			[]string{"tools", "streaming", "cancel"}, `{"tools":[{"name":"a"},{"name":"b"}]}`},
		{"hooks", sdk.Info{}, func(s *sdk.Server) {
			s.OnHook(yep.HookPreToolUse, "bash*", allow, sdk.HookOptions{TimeoutMS: 500, OnError: "block"})
			s.OnHook(yep.HookPostToolUse, "*", allow)
		}, []string{"hooks", "cancel"}, `{"hooks":[{"event":"pre_tool_use","matcher":"bash*","timeout_ms":500,"on_error":"block"},{"event":"post_tool_use","matcher":"*"}]}`},
		{"static prompt", sdk.Info{}, func(s *sdk.Server) { s.Prompt("be <nice>") }, []string{"prompt", "cancel"}, `{"prompt":{"static":"be <nice>"}}`},
		{"dynamic prompt", sdk.Info{}, func(s *sdk.Server) {
			s.Prompt("fallback")
			s.DynamicPrompt(func(context.Context, yep.PromptContributionParams) (string, error) { return "", nil })
		}, []string{"prompt", "dynamic_prompt", "cancel"}, `{"prompt":{"static":"fallback","dynamic":true}}`},
		{"commands and mcp", sdk.Info{}, func(s *sdk.Server) {
			s.Command("greet", "say hi", func(context.Context, string) (yep.CommandExecuteResult, error) {
				return yep.CommandExecuteResult{}, nil
			})
			s.MCPServer(yep.MCPServerDecl{Name: "docs", Type: "stdio", Command: "docs-mcp"})
		}, []string{"mcp_servers", "commands", "cancel"}, `{"commands":[{"name":"greet","description":"say hi"}],"mcp_servers":[{"name":"docs","type":"stdio","command":"docs-mcp"}]}`},
		{"trace and config", sdk.Info{}, func(s *sdk.Server) {
			s.OnTrace(func(yep.TraceEventParams) {})
			s.OnConfigChanged(func(context.Context, json.RawMessage) (bool, error) { return false, nil })
			s.OnConfig(func(json.RawMessage) error { return nil }) // no token
			s.OnWorkspaceChanged(func(string) {})                  // no token
		}, []string{"trace", "cancel", "config"}, `null`},
		{"opt-ins", sdk.Info{Status: true, UIAsk: true, Log: true}, func(s *sdk.Server) {}, []string{"ui_ask", "cancel", "status", "log"}, `null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := sdk.NewServer(tc.info, quiet())
			tc.setup(s)
			h := serve(t, s)
			res := h.initialize(t)
			if !slices.Equal(res.Capabilities, tc.caps) {
				t.Errorf("capabilities = %v, want %v", res.Capabilities, tc.caps)
			}
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			enc.Encode(res.CapabilityParams)
			if got := strings.TrimSpace(b.String()); got != tc.params {
				t.Errorf("capability_params = %s\nwant %s", got, tc.params)
			}
		})
	}
}

func TestRegistrationPanics(t *testing.T) {
	noop := func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) { return yep.ToolResult{}, nil }
	allow := func(ctx context.Context, h *sdk.HookEvent) (yep.HookFireResult, error) {
		return yep.HookFireResult{}, nil
	}
	for name, f := range map[string]func(s *sdk.Server){
		"duplicate tool": func(s *sdk.Server) { s.Tool("a", noop); s.StreamingTool("a", noop) },
		"empty tool":     func(s *sdk.Server) { s.Tool("", noop) },
		"bad glob":       func(s *sdk.Server) { s.OnHook(yep.HookPreToolUse, "[", allow) },
		"bad on_error":   func(s *sdk.Server) { s.OnHook(yep.HookPreToolUse, "*", allow, sdk.HookOptions{OnError: "ignore"}) },
		"duplicate hook": func(s *sdk.Server) {
			s.OnHook(yep.HookPreToolUse, "*", allow)
			s.OnHook(yep.HookPreToolUse, "*", allow)
		},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f(sdk.NewServer(sdk.Info{}, quiet()))
		})
	}
}

func TestRegisterAfterServePanics(t *testing.T) {
	s := sdk.NewServer(sdk.Info{}, quiet())
	h := serve(t, s)
	h.initialize(t)
	defer func() {
		if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "after Serve") {
			t.Errorf("late Tool: recover() = %v", p)
		}
	}()
	s.Tool("late", echoTool)
}

func TestOnConfig(t *testing.T) {
	t.Run("receives initialize.config once", func(t *testing.T) {
		var calls []string
		s := sdk.NewServer(sdk.Info{}, quiet())
		s.OnConfig(func(cfg json.RawMessage) error {
			calls = append(calls, string(cfg))
			return nil
		})
		s.Tool("echo", echoTool)
		h := serve(t, s)
		var res yep.InitializeResult
		if err := h.Call(ctxT(t), yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: "1.0", Config: json.RawMessage(`{"endpoint":"http://127.0.0.1:1"}`)}, &res); err != nil {
			t.Fatal(err)
		}
		h.tool(t, "echo", `{}`)
		if want := []string{`{"endpoint":"http://127.0.0.1:1"}`}; !slices.Equal(calls, want) {
			t.Errorf("OnConfig calls = %v, want %v", calls, want)
		}
	})
	t.Run("an error fails initialize", func(t *testing.T) {
		s := sdk.NewServer(sdk.Info{Name: "cfg"}, quiet())
		s.OnConfig(func(cfg json.RawMessage) error { return errors.New("endpoint is required") })
		s.Tool("echo", echoTool)
		h := serve(t, s)
		err := h.Call(ctxT(t), yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: "1.0"}, nil)
		if wireCode(err) != yep.CodeInvalidParams || !strings.Contains(err.Error(), "endpoint is required") || !strings.Contains(err.Error(), `"cfg"`) {
			t.Errorf("initialize with a rejected config: %v", err)
		}
		if _, err := h.tool(t, "echo", `{}`); wireCode(err) != yep.CodeNotInitialized {
			t.Errorf("call after a rejected config: %v", err)
		}
	})
}

func TestOnConfigChanged(t *testing.T) {
	s := sdk.NewServer(sdk.Info{}, quiet())
	var seen []string
	s.OnConfigChanged(func(ctx context.Context, cfg json.RawMessage) (bool, error) {
		seen = append(seen, string(cfg))
		var c struct{ Mode string }
		if err := json.Unmarshal(cfg, &c); err != nil {
			return false, err
		}
		if c.Mode == "broken" {
			return false, errors.New("mode broken is not supported")
		}
		return c.Mode == "new-binary", nil
	})
	h := serve(t, s)
	h.initialize(t)
	for _, tc := range []struct{ cfg, status, err string }{
		{`{"mode":"fast"}`, yep.ConfigOK, ""},
		{`{"mode":"new-binary"}`, yep.ConfigRestartRequired, ""},
		{`{"mode":"broken"}`, "", "mode broken is not supported"},
	} {
		var res yep.ConfigChangedResult
		err := h.Call(ctxT(t), yep.MethodConfigChanged, yep.ConfigChangedParams{Config: json.RawMessage(tc.cfg)}, &res)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want %q", tc.cfg, err, tc.err)
			}
			continue
		}
		if err != nil || res.Status != tc.status {
			t.Errorf("%s: %+v %v, want %s", tc.cfg, res, err, tc.status)
		}
	}
	if len(seen) != 3 {
		t.Errorf("handler saw %v", seen)
	}
}

func TestOnTraceInOrderWithoutBlockingTheReader(t *testing.T) {
	const n = 300
	release := make(chan struct{})
	got := make(chan string, n)
	var workspaces []string
	s := sdk.NewServer(sdk.Info{}, quiet())
	s.Tool("echo", echoTool)
	s.OnTrace(func(ev yep.TraceEventParams) {
		if ev.SpanID == "0" {
			<-release // a slow exporter
		}
		got <- ev.SpanID
	})
	s.OnWorkspaceChanged(func(root string) { workspaces = append(workspaces, root) })
	h := serve(t, s)
	h.initialize(t)
	for i := range n {
		if i == n/2 {
			h.Notify(ctxT(t), yep.MethodWorkspaceChanged, yep.WorkspaceChangedParams{WorkspaceRoot: "/w2"})
		}
		if err := h.Notify(ctxT(t), yep.MethodTraceEvent, yep.TraceEventParams{Type: yep.TraceToolStarted, SpanID: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	// The first callback is still blocked, yet requests are answered.
	if res, err := h.tool(t, "echo", `{"text":"live"}`); err != nil || res.Output != "live" {
		t.Fatalf("call while OnTrace blocks: %+v %v", res, err)
	}
	close(release)
	for i := range n {
		if id := <-got; id != fmt.Sprint(i) {
			t.Fatalf("trace event %d delivered as %s: out of order", i, id)
		}
	}
	if !slices.Equal(workspaces, []string{"/w2"}) {
		t.Errorf("workspace roots = %v", workspaces)
	}
}

func TestNeverSendsWhatTheHostDidNotAdvertise(t *testing.T) {
	var errs []error
	s := sdk.NewServer(sdk.Info{Name: "quiet", Status: true, UIAsk: true, Log: true}, quiet())
	s.StreamingTool("try", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
		_, askErr := s.Ask(ctx, yep.UIAskParams{Prompt: "name?"})
		errs = append(errs, s.Status("busy"), askErr, call.Update("1"), call.Progress(1, 2, "half"))
		s.Log("info", "falls back to stderr")
		return yep.ToolResult{Output: "done"}, nil
	})
	h := serve(t, s)
	h.initialize(t, yep.CapCancel) // no status, ui_ask, log or streaming
	if res, err := h.tool(t, "try", `{}`); err != nil || res.Output != "done" {
		t.Fatalf("%+v %v", res, err)
	}
	for i, err := range errs {
		if !errors.Is(err, sdk.ErrNotAdvertised) {
			t.Errorf("call %d: err = %v, want ErrNotAdvertised", i, err)
		}
	}
	if got := h.received(); len(got) != 0 {
		t.Errorf("the server sent %v to a host that did not advertise them", got)
	}
}

func TestNotDeclaredIsRefusedLocally(t *testing.T) {
	var errs []error
	s := sdk.NewServer(sdk.Info{Name: "plain"}, quiet())
	s.Tool("try", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
		_, askErr := s.Ask(ctx, yep.UIAskParams{Prompt: "?"})
		errs = append(errs, s.Status("x"), askErr, call.Update("1"))
		return yep.ToolResult{}, nil
	})
	h := serve(t, s)
	h.initialize(t, yep.CapStatus, yep.CapUIAsk, yep.CapStreaming, yep.CapLog)
	if _, err := h.tool(t, "try", `{}`); err != nil {
		t.Fatal(err)
	}
	for i, err := range errs {
		if !errors.Is(err, sdk.ErrNotDeclared) {
			t.Errorf("call %d: err = %v, want ErrNotDeclared", i, err)
		}
	}
	if got := h.received(); len(got) != 0 {
		t.Errorf("the server sent %v without declaring them", got)
	}
	if err := sdk.NewServer(sdk.Info{Status: true}, quiet()).Status("x"); !errors.Is(err, sdk.ErrNotInitialized) {
		t.Errorf("Status before serving: %v", err)
	}
}

func TestAskStatusLogRoundTrip(t *testing.T) {
	var logged bytes.Buffer
	s := sdk.NewServer(sdk.Info{Name: "asker", Status: true, UIAsk: true, Log: true}, sdk.Options{Logger: hclog.New(&hclog.LoggerOptions{Output: &logged})})
	s.StreamingTool("ask", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
		if err := s.Status("asking"); err != nil {
			return yep.ToolResult{}, err
		}
		if err := call.Update("asking"); err != nil {
			return yep.ToolResult{}, err
		}
		ans, err := s.Ask(ctx, yep.UIAskParams{Prompt: "token?", Secret: true})
		if err != nil {
			return yep.ToolResult{}, err
		}
		s.Log("warn", "got an answer", "len", len(ans.Answer), "err", errors.New("none"))
		return yep.ToolResult{Output: ans.Answer}, nil
	})
	h := serve(t, s)
	h.asked = make(chan yep.UIAskParams, 1)
	h.initialize(t, yep.CapStatus, yep.CapUIAsk, yep.CapLog, yep.CapStreaming)
	var updates []string
	var res yep.ToolResult
	err := h.CallWith(ctxT(t), yep.MethodToolCall, yep.ToolCallParams{Name: "ask"}, &res, jsonrpc.CallOptions{
		OnNotify: func(method string, params json.RawMessage) { updates = append(updates, method+" "+string(params)) },
	})
	if err != nil || res.Output != "answer to token?" {
		t.Fatalf("ask = %+v %v", res, err)
	}
	if q := <-h.asked; !q.Secret || q.Prompt != "token?" {
		t.Errorf("host was asked %+v", q)
	}
	if len(updates) != 1 || !strings.Contains(updates[0], `"output":"asking"`) {
		t.Errorf("updates = %v", updates)
	}
	want := []string{
		`status/changed {"text":"asking"}`,
		`ui/ask {"prompt":"token?","secret":true}`,
		`log {"level":"warn","message":"got an answer","fields":{"err":"none","len":16}}`,
	}
	if got := h.received(); !slices.Equal(got, want) {
		t.Errorf("host received\n%v\nwant\n%v", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if logged.Len() != 0 {
		t.Errorf("logged locally although the host takes logs: %s", logged.String())
	}
}

func TestHandlerPanicIsRecovered(t *testing.T) {
	s := sdk.NewServer(sdk.Info{Name: "boom"}, quiet())
	s.Tool("explode", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) { panic("wires crossed") })
	s.Tool("echo", echoTool)
	s.OnHook(yep.HookPreToolUse, "*", func(ctx context.Context, h *sdk.HookEvent) (yep.HookFireResult, error) { panic("hook broke") })
	h := serve(t, s)
	h.initialize(t)
	_, err := h.tool(t, "explode", `{}`)
	if wireCode(err) != yep.CodeInternalError || !strings.Contains(err.Error(), `tool "explode"`) || !strings.Contains(err.Error(), "wires crossed") {
		t.Errorf("panicking tool: %v", err)
	}
	err = h.Call(ctxT(t), yep.MethodHookFire, yep.HookFireParams{Event: yep.HookPreToolUse, ToolName: "echo"}, nil)
	if wireCode(err) != yep.CodeInternalError || !strings.Contains(err.Error(), "hook pre_tool_use") {
		t.Errorf("panicking hook: %v", err)
	}
	if res, err := h.tool(t, "echo", `{"text":"alive"}`); err != nil || res.Output != "alive" {
		t.Errorf("after panics: %+v %v", res, err)
	}
}

func TestToolErrors(t *testing.T) {
	s := sdk.NewServer(sdk.Info{Name: "e"}, quiet())
	s.Tool("fails", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
		return yep.ToolResult{}, errors.New("file not found: a.txt")
	})
	s.Tool("refuses", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
		return yep.ToolResult{}, &yep.Error{Code: 7, Message: "quota", Retryable: true}
	})
	s.Tool("echo", echoTool)
	h := serve(t, s)
	h.initialize(t)
	if res, err := h.tool(t, "fails", `{}`); err != nil || !res.IsError || res.Output != "file not found: a.txt" {
		t.Errorf("plain error: %+v %v, want an is_error result", res, err)
	}
	_, err := h.tool(t, "refuses", `{}`)
	var we *yep.Error
	if !errors.As(err, &we) || we.Code != 7 || !we.Retryable {
		t.Errorf("wire error: %v", err)
	}
	_, err = h.tool(t, "missing", `{}`)
	if wireCode(err) != yep.CodeInvalidParams || !strings.Contains(err.Error(), `"missing"`) || !strings.Contains(err.Error(), "echo") {
		t.Errorf("unknown tool: %v", err)
	}
	if res, err := h.tool(t, "echo", `{"text":1}`); err != nil || !res.IsError || !strings.Contains(res.Output, "decoding arguments") {
		t.Errorf("bad args: %+v %v", res, err)
	}
}

func TestCancelAnswersCancelled(t *testing.T) {
	started := make(chan struct{})
	stopped := make(chan error, 1)
	s := sdk.NewServer(sdk.Info{}, quiet())
	s.Tool("wait", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
		close(started)
		<-ctx.Done()
		stopped <- ctx.Err()
		return yep.ToolResult{Output: "finished anyway"}, nil // ignored: the call was cancelled
	})
	s.Tool("echo", echoTool)
	h := serve(t, s)
	h.initialize(t)
	var id yep.ID
	errc := make(chan error, 1)
	go func() {
		errc <- h.CallWith(context.Background(), yep.MethodToolCall, yep.ToolCallParams{Name: "wait"}, nil, jsonrpc.CallOptions{OnID: func(i yep.ID) { id = i }})
	}()
	<-started
	// Cancel by hand, as any host would, to see the raw answer.
	var cr yep.CancelResult
	if err := h.Call(ctxT(t), yep.MethodCancel, yep.CancelParams{ID: id}, &cr); err != nil || !cr.Cancelled {
		t.Fatalf("cancel = %+v %v", cr, err)
	}
	if err := <-stopped; !errors.Is(err, context.Canceled) {
		t.Errorf("handler context: %v", err)
	}
	if err := <-errc; wireCode(err) != yep.CodeCancelled {
		t.Errorf("cancelled call answered %v, want the cancelled error", err)
	}
	if res, err := h.tool(t, "echo", `{"text":"next"}`); err != nil || res.Output != "next" {
		t.Errorf("after cancel: %+v %v", res, err)
	}
}

func TestHooks(t *testing.T) {
	s := sdk.NewServer(sdk.Info{}, quiet())
	var order []string
	s.OnHook(yep.HookPreToolUse, "bash*", func(ctx context.Context, h *sdk.HookEvent) (yep.HookFireResult, error) {
		order = append(order, "bash*:"+h.ToolName)
		var a struct{ Cmd string }
		if err := h.Bind(&a); err != nil {
			return yep.HookFireResult{}, err
		}
		if strings.HasPrefix(a.Cmd, "rm") {
			return yep.HookFireResult{Decision: yep.DecisionBlock, Reason: "no rm"}, nil
		}
		return yep.HookFireResult{Decision: yep.DecisionMutate, Args: json.RawMessage(`{"cmd":"` + a.Cmd + ` --dry-run"}`), Reason: "dry run"}, nil
	})
	s.OnHook(yep.HookPreToolUse, "*", func(ctx context.Context, h *sdk.HookEvent) (yep.HookFireResult, error) {
		order = append(order, "*:"+h.ToolName+":"+string(h.Args))
		return yep.HookFireResult{}, nil
	})
	s.OnHook(yep.HookPostToolUse, "*", func(ctx context.Context, h *sdk.HookEvent) (yep.HookFireResult, error) {
		return yep.HookFireResult{Decision: yep.DecisionMutate, Result: &yep.ToolResult{Output: strings.ToUpper(h.Result.Output)}}, nil
	})
	h := serve(t, s)
	h.initialize(t)
	fire := func(event, tool, matcher, args string, result *yep.ToolResult) yep.HookFireResult {
		t.Helper()
		payload, _ := json.Marshal(yep.HookPayload{Args: json.RawMessage(args), Result: result})
		var res yep.HookFireResult
		if err := h.Call(ctxT(t), yep.MethodHookFire, yep.HookFireParams{Event: event, ToolName: tool, Matcher: matcher, Payload: payload}, &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	// Without a matcher, every subscription whose glob matches fires, in
	// registration order, each seeing the previous mutation.
	res := fire(yep.HookPreToolUse, "bash_exec", "", `{"cmd":"ls"}`, nil)
	if res.Decision != yep.DecisionMutate || string(res.Args) != `{"cmd":"ls --dry-run"}` {
		t.Errorf("mutate: %+v", res)
	}
	if want := []string{"bash*:bash_exec", `*:bash_exec:{"cmd":"ls --dry-run"}`}; !slices.Equal(order, want) {
		t.Errorf("order = %v, want %v", order, want)
	}
	order = nil
	if res := fire(yep.HookPreToolUse, "bash", "", `{"cmd":"rm -rf /"}`, nil); res.Decision != yep.DecisionBlock || res.Reason != "no rm" {
		t.Errorf("block: %+v", res)
	}
	if len(order) != 1 {
		t.Errorf("a block must stop later subscriptions: %v", order)
	}
	// With a matcher, only that subscription fires.
	order = nil
	if res := fire(yep.HookPreToolUse, "bash", "*", `{"cmd":"rm"}`, nil); res.Decision != yep.DecisionAllow {
		t.Errorf("matcher *: %+v", res)
	}
	if want := []string{`*:bash:{"cmd":"rm"}`}; !slices.Equal(order, want) {
		t.Errorf("order = %v, want %v", order, want)
	}
	if res := fire(yep.HookPostToolUse, "read", "", `{}`, &yep.ToolResult{Output: "abc"}); res.Result == nil || res.Result.Output != "ABC" {
		t.Errorf("post_tool_use mutate: %+v", res)
	}
	if res := fire("unknown_event", "read", "", `{}`, nil); res.Decision != yep.DecisionAllow {
		t.Errorf("no subscription: %+v, want allow", res)
	}
}

func TestPromptAndCommand(t *testing.T) {
	s := sdk.NewServer(sdk.Info{Name: "pc"}, quiet())
	s.Prompt("static")
	s.DynamicPrompt(func(ctx context.Context, p yep.PromptContributionParams) (string, error) {
		return fmt.Sprintf("turn %d of %s", p.Turn, p.SessionID), nil
	})
	s.Command("greet", "", func(ctx context.Context, args string) (yep.CommandExecuteResult, error) {
		if args == "" {
			return yep.CommandExecuteResult{}, errors.New("whom should I greet?")
		}
		return yep.CommandExecuteResult{Success: true, Message: "hi " + args}, nil
	})
	h := serve(t, s)
	h.initialize(t)
	var pr yep.PromptContributionResult
	if err := h.Call(ctxT(t), yep.MethodPromptContribution, yep.PromptContributionParams{SessionID: "s", Turn: 3}, &pr); err != nil || pr.Text != "turn 3 of s" {
		t.Errorf("prompt/contribution = %+v %v", pr, err)
	}
	for _, tc := range []struct {
		name, args string
		want       yep.CommandExecuteResult
	}{
		{"greet", "bob", yep.CommandExecuteResult{Success: true, Message: "hi bob"}},
		{"pc:greet", "amy", yep.CommandExecuteResult{Success: true, Message: "hi amy"}},
		{"greet", "", yep.CommandExecuteResult{Message: "whom should I greet?"}},
	} {
		var res yep.CommandExecuteResult
		if err := h.Call(ctxT(t), yep.MethodCommandExecute, yep.CommandExecuteParams{Name: tc.name, Arguments: tc.args}, &res); err != nil || res != tc.want {
			t.Errorf("%s %q = %+v %v, want %+v", tc.name, tc.args, res, err, tc.want)
		}
	}
	if err := h.Call(ctxT(t), yep.MethodCommandExecute, yep.CommandExecuteParams{Name: "nope"}, nil); wireCode(err) != yep.CodeInvalidParams || !strings.Contains(err.Error(), "greet") {
		t.Errorf("unknown command: %v", err)
	}
}

func TestShutdownThenExit(t *testing.T) {
	ctxDone := make(chan error, 1)
	started := make(chan struct{})
	s := sdk.NewServer(sdk.Info{}, quiet())
	s.Tool("wait", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
		close(started)
		<-ctx.Done()
		ctxDone <- ctx.Err()
		return yep.ToolResult{}, ctx.Err()
	})
	h := serve(t, s)
	h.initialize(t)
	// A call still running at exit is cancelled and waited for.
	go h.Call(context.Background(), yep.MethodToolCall, yep.ToolCallParams{Name: "wait"}, nil)
	<-started
	if err := h.Call(ctxT(t), yep.MethodShutdown, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := h.tool(t, "wait", `{}`); wireCode(err) != yep.CodeInvalidRequest {
		t.Errorf("call after shutdown: %v", err)
	}
	if err := h.Notify(ctxT(t), yep.MethodExit, nil); err != nil {
		t.Fatal(err)
	}
	if err := <-h.done; err != nil {
		t.Errorf("ServeConn after exit = %v, want nil", err)
	}
	if err := <-ctxDone; !errors.Is(err, context.Canceled) {
		t.Errorf("in-flight handler: %v", err)
	}
	h.done <- nil // for the cleanup
}

func TestStdinEOF(t *testing.T) {
	s := sdk.NewServer(sdk.Info{}, quiet())
	s.Tool("echo", echoTool)
	h := serve(t, s)
	h.initialize(t)
	h.stdin.Close()
	if err := <-h.done; err != nil {
		t.Errorf("ServeConn after EOF = %v, want nil", err)
	}
	h.done <- nil
	if err := sdk.NewServer(sdk.Info{}, quiet()).ServeConn(context.Background(), strings.NewReader(""), io.Discard); err != nil {
		t.Errorf("ServeConn on empty input = %v", err)
	}
}

func TestServeConnTwice(t *testing.T) {
	s := sdk.NewServer(sdk.Info{}, quiet())
	if err := s.ServeConn(context.Background(), strings.NewReader(""), io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := s.ServeConn(context.Background(), strings.NewReader(""), io.Discard); err == nil {
		t.Error("a second ServeConn succeeded")
	}
}

// TestTraceContextReachesHandlers checks that the traceparent and
// tracestate of tool/call and hook/fire reach the handler's context as
// sent, in both the fast and the general decoder, and that a request
// without them leaves the context empty.
func TestTraceContextReachesHandlers(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	s := sdk.NewServer(sdk.Info{}, quiet())
	s.Tool("ctx", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
		return yep.ToolResult{Output: sdk.TraceParent(ctx) + "|" + sdk.TraceState(ctx)}, nil
	})
	s.OnHook(yep.HookPreToolUse, "*", func(ctx context.Context, h *sdk.HookEvent) (yep.HookFireResult, error) {
		return yep.HookFireResult{Decision: yep.DecisionBlock, Reason: sdk.TraceParent(ctx) + "|" + sdk.TraceState(ctx)}, nil
	})
	h := serve(t, s)
	h.initialize(t)
	for _, c := range []struct {
		name   string
		params any
		want   string
	}{
		{"typed", yep.ToolCallParams{Name: "ctx", TraceParent: tp, TraceState: "v=1"}, tp + "|v=1"},
		// An escaped string takes the general decoder.
		{"escaped", json.RawMessage(`{"name":"ctx","traceparent":"` + tp + `","tracestate":"a=\u0062"}`), tp + "|a=b"},
		{"absent", yep.ToolCallParams{Name: "ctx"}, "|"},
	} {
		var res yep.ToolResult
		if err := h.Call(ctxT(t), yep.MethodToolCall, c.params, &res); err != nil || res.Output != c.want {
			t.Errorf("%s: tool/call = %+v, %v; want output %q", c.name, res, err, c.want)
		}
	}
	var hr yep.HookFireResult
	if err := h.Call(ctxT(t), yep.MethodHookFire, yep.HookFireParams{Event: yep.HookPreToolUse, ToolName: "x", TraceParent: tp}, &hr); err != nil || hr.Reason != tp+"|" {
		t.Errorf("hook/fire = %+v, %v; want reason %q", hr, err, tp+"|")
	}
}

func TestWithTraceContext(t *testing.T) {
	ctx := context.Background()
	if got := sdk.WithTraceContext(ctx, "", ""); got != ctx {
		t.Error("empty strings must leave the context as it is")
	}
	ctx = sdk.WithTraceContext(ctx, "00-a-b-01", "k=v")
	if sdk.TraceParent(ctx) != "00-a-b-01" || sdk.TraceState(ctx) != "k=v" {
		t.Errorf("got %q %q", sdk.TraceParent(ctx), sdk.TraceState(ctx))
	}
	if sdk.TraceParent(context.Background()) != "" {
		t.Error("a plain context has no traceparent")
	}
}
