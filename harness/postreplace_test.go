package harness_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"yolop.dev/agent"
	"yolop.dev/agent/provider"
	"yolop.dev/agent/scripted"
	"yolop.dev/core"
	"yolop.dev/core/host"
	"yolop.dev/core/sdk"
	"yolop.dev/core/transporttest"
	"yolop.dev/core/yep"
	"yolop.dev/harness"
	"yolop.dev/harness/record"
)

// original is what every tool of TestPostHookReplacementIsTheOnlyResult
// answers and the post_tool_use hook replaces; replaced is what it
// replaces it with.
const (
	original = "ORIGINAL-4711 the token the hook hides"
	replaced = "REPLACED by the redactor"
)

// postReplaceScript calls an extension tool, read_file and bash (whose
// output streams), each answering original, and ends once it read the
// replacement three times.
const postReplaceScript = `{"steps": [
	{"name": "extension tool", "when": {"user": "go"},
	 "reply": {"tool_calls": [{"name": "leaky", "arguments": {}}]}},
	{"name": "read_file", "when": {"tool_result": {"tool": "leaky", "contains": "REPLACED by the redactor"}},
	 "reply": {"tool_calls": [{"name": "read_file", "arguments": {"path": "secret.txt"}}]}},
	{"name": "bash", "when": {"tool_result": {"tool": "read_file", "contains": "REPLACED by the redactor"}},
	 "reply": {"tool_calls": [{"name": "bash", "arguments": {"command": "cat secret.txt"}}]}},
	{"name": "done", "when": {"tool_result": {"tool": "bash", "contains": "REPLACED by the redactor"}},
	 "reply": {"text": "all three were replaced"}}
]}`

// TestPostHookReplacementIsTheOnlyResult: a post_tool_use hook that
// replaces the result of an extension's tool and of the built-ins
// read_file and bash is the only result anything past the hook sees:
// the model's next requests, the session's events (a front-end's
// transcript, tool.update included — bash streams its output before the
// hook ran), the trace/event payloads a trace-declaring extension
// receives, and what Session.CallTool returns (the MCP gateway's answer).
func TestPostHookReplacementIsTheOnlyResult(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "secret.txt"), []byte(original+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		traced []string
	)
	servers := map[string]transporttest.Server{
		"leaky": transporttest.SDK(sdk.Info{}, func(s *sdk.Server) {
			s.Tool("leaky", func(context.Context, *sdk.ToolCall) (yep.ToolResult, error) {
				return yep.ToolResult{Output: original}, nil
			})
		}),
		"redactor": transporttest.SDK(sdk.Info{}, func(s *sdk.Server) {
			s.OnHook(yep.HookPostToolUse, "*", func(_ context.Context, ev *sdk.HookEvent) (yep.HookFireResult, error) {
				if ev.Result != nil && strings.Contains(ev.Result.Output, "ORIGINAL-4711") {
					return yep.HookFireResult{Decision: yep.DecisionMutate, Result: &yep.ToolResult{Output: replaced}}, nil
				}
				return yep.HookFireResult{Decision: yep.DecisionAllow}, nil
			}, sdk.HookOptions{OnError: yep.HookOnErrorBlock})
		}),
		"tracer": transporttest.SDK(sdk.Info{}, func(s *sdk.Server) {
			s.OnTrace(func(ev yep.TraceEventParams) {
				b, _ := json.Marshal(ev)
				mu.Lock()
				traced = append(traced, string(b))
				mu.Unlock()
			})
		}),
	}
	h, err := harness.Open(ctx, harness.Options{ConfigDir: t.TempDir(),
		Transports: map[string]core.Transport{"inproc": &transporttest.Transport{Servers: servers}}})
	if err != nil {
		t.Fatal(err)
	}
	grant := func(name string) host.Grant {
		return host.Grant{Name: name, Version: "1.0.0", ProtocolVersion: yep.ProtocolVersion,
			Server: core.ServerSpec{Name: name, Transport: "inproc"}}
	}
	leaky := grant("leaky")
	leaky.Tools = []host.ToolGrant{{Name: "leaky", Description: "answers a secret", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	redactor := grant("redactor")
	redactor.Hooks = []host.HookGrant{{Event: yep.HookPostToolUse, Matcher: "*", TimeoutMS: 5000, OnError: yep.HookOnErrorBlock}}
	tracer := grant("tracer")
	tracer.Trace = true
	recording := filepath.Join(t.TempDir(), "session.txtar")
	s, warnings := h.NewSession(ctx, harness.SessionOptions{CodingTools: true, WorkspaceRoot: ws, Record: recording,
		Extra: []host.Grant{leaky, redactor, tracer}})
	closed := false
	defer func() {
		if !closed {
			s.Close()
		}
	}()
	if len(warnings) != 0 {
		t.Fatalf("warnings: %q", warnings)
	}
	var events []string
	cancel := s.Subscribe(func(ev host.Event) {
		b, _ := json.Marshal(ev)
		mu.Lock()
		events = append(events, string(b))
		mu.Unlock()
	})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}

	script, err := scripted.Parse([]byte(postReplaceScript))
	if err != nil {
		t.Fatal(err)
	}
	srv := scripted.NewServer(script, scripted.Options{})
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	a, err := agent.New(agent.Options{Session: s.Session, Model: "scripted",
		Provider: provider.OpenAI(provider.Options{BaseURL: srv.URL() + "/v1/", APIKey: "k"})})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Turn(ctx, "go")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Verify(); err != nil {
		t.Error(err)
	}
	if res.Text != "all three were replaced" || res.ToolCalls != 3 {
		t.Errorf("turn = %+v", res)
	}
	// What the gateway answers is what CallTool returns.
	for _, name := range []string{"leaky", "read_file", "bash"} {
		args := map[string]string{"read_file": `{"path":"secret.txt"}`, "bash": `{"command":"cat secret.txt"}`}[name]
		r, err := s.CallTool(ctx, name, "direct-"+name, json.RawMessage(args), func(u yep.ToolUpdateParams) {
			if strings.Contains(u.Output, "ORIGINAL-4711") {
				t.Errorf("%s streamed the original to its caller: %q", name, u.Output)
			}
		})
		if err != nil || r.Output != replaced {
			t.Errorf("CallTool(%s) = %+v, %v; want %q", name, r, err, replaced)
		}
	}
	cancel()

	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests, want 4", len(reqs))
	}
	for i, r := range reqs {
		b, _ := json.Marshal(r.Chat)
		if strings.Contains(string(b), "ORIGINAL-4711") {
			t.Errorf("model request %d carries the original result:\n%s", i, b)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	sawCompleted := 0
	for _, e := range events {
		if strings.Contains(e, "ORIGINAL-4711") {
			t.Errorf("a session event carries the original result: %s", e)
		}
		if strings.Contains(e, `"`+yep.TraceToolCompleted+`"`) {
			sawCompleted++
		}
	}
	if sawCompleted < 6 {
		t.Errorf("%d tool.completed events, want 6", sawCompleted)
	}
	if len(traced) == 0 {
		t.Fatal("the tracer received no trace events")
	}
	for _, e := range traced {
		if strings.Contains(e, "ORIGINAL-4711") {
			t.Errorf("a trace event carries the original result: %s", e)
		}
	}

	// The recording replays each server's own dialogue: the original is in
	// the dialogue of the server that answered it and in the hook/fire
	// payloads of the hook that replaced it, nowhere else.
	mu.Unlock()
	s.Close()
	closed = true
	mu.Lock()
	data, err := os.ReadFile(recording)
	if err != nil {
		t.Fatal(err)
	}
	f, err := record.Parse(recording, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Dialogues) != 3 {
		t.Fatalf("%d dialogues recorded, want 3", len(f.Dialogues))
	}
	for _, d := range f.Dialogues {
		var all strings.Builder
		for _, m := range d.Messages {
			all.Write(m.Data)
		}
		has := strings.Contains(all.String(), "ORIGINAL-4711")
		if want := d.Name != "tracer"; has != want {
			t.Errorf("the recorded dialogue of %s holds the original: %v, want %v", d.Name, has, want)
		}
	}
}
