package host

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"yolop.dev/core/yep"
)

// compileCounter is a SessionOptions.CompileArgs that counts compilations
// per schema and checks, wanting a "name" member when the schema says
// "required".
type compileCounter struct {
	mu       sync.Mutex
	compiled map[string]int
	checked  int
}

func (c *compileCounter) compile(schema json.RawMessage) (func(json.RawMessage) error, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.compiled == nil {
		c.compiled = map[string]int{}
	}
	c.compiled[string(schema)]++
	strict := strings.Contains(string(schema), "required")
	return func(args json.RawMessage) error {
		c.mu.Lock()
		c.checked++
		c.mu.Unlock()
		if !strict {
			return nil
		}
		return needName(args)
	}, nil
}

// Each tool's schema is compiled once however many calls and registry
// rebuilds the session sees: built-ins, and an
// extension's tools once for its approved grant. Arguments are checked
// once per call, and once more when a hook rewrote them.
func TestArgsSchemaCompiledOncePerGrant(t *testing.T) {
	c := &greetOnly{argsCap{mutateTo: json.RawMessage(`{"name":"y"}`)}}
	g := pyGrant(t, "srv", nil, "echo", "params")
	g.Tools[0].InputSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)
	g.Tools[1].InputSchema = json.RawMessage(`{"type":"object"}`)
	cc := &compileCounter{}
	s := newTestSession(t, SessionOptions{Builtins: []Capability{c}, Grants: []Grant{g}, CompileArgs: cc.compile})
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// Turning another extension on and off at every turn boundary makes
	// the session rebuild its tool registry each turn.
	other := pyGrant(t, "other", nil)
	const n = 100
	for i := range n {
		if i%2 == 0 {
			s.Activate(other)
		} else if !s.Deactivate("other") {
			t.Fatalf("turn %d: extension other is not in the session", i)
		}
		s.BeginTurn(ctx)
		if _, err := s.CallTool(ctx, "greet", "g", json.RawMessage(`{"name":"x"}`), nil); err != nil {
			t.Fatalf("greet %d: %v", i, err)
		}
		if res, err := s.CallTool(ctx, "echo", "e", json.RawMessage(`{"text":"hi"}`), nil); err != nil || res.Output != "hi" {
			t.Fatalf("echo %d = %+v, %v", i, res, err)
		}
		if _, err := s.CallTool(ctx, "params", "p", nil, nil); err != nil {
			t.Fatalf("params %d: %v", i, err)
		}
		s.EndTurn()
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	want := map[string]int{
		`{"type":"object","required":["name"]}`:                     1,
		`{"type":"object","properties":{"text":{"type":"string"}}}`: 1,
		`{"type":"object"}`: 1,
	}
	for schema, w := range want {
		if got := cc.compiled[schema]; got != w {
			t.Errorf("schema %s compiled %d times over %d calls, want %d", schema, got, n, w)
		}
	}
	if len(cc.compiled) != len(want) {
		t.Errorf("compiled schemas = %v, want only the three tools'", cc.compiled)
	}
	// greet: its arguments and the hook's rewrite; echo and params: one.
	if cc.checked != 4*n {
		t.Errorf("%d argument checks over %d rounds of three calls, want %d (one per call, one per rewrite)", cc.checked, n, 4*n)
	}
}

// greetOnly is argsCap whose hook rewrites the arguments of greet only.
type greetOnly struct{ argsCap }

func (*greetOnly) Hooks() []HookGrant {
	return []HookGrant{{Event: yep.HookPreToolUse, Matcher: "greet"}}
}

// A schema that does not compile fails every call of its tool with
// ErrInvalidArgs naming the tool, and is not compiled again per call.
func TestArgsSchemaThatDoesNotCompile(t *testing.T) {
	compiles := 0
	compile := func(json.RawMessage) (func(json.RawMessage) error, error) {
		compiles++
		return nil, errors.New("the tool's input_schema is not a valid JSON Schema")
	}
	c := &argsCap{}
	s := NewSession(SessionOptions{Builtins: []Capability{c}, CompileArgs: compile})
	defer s.Close()
	for range 3 {
		_, err := s.CallTool(context.Background(), "greet", "c", json.RawMessage(`{"name":"x"}`), nil)
		if !errors.Is(err, ErrInvalidArgs) || !strings.Contains(err.Error(), `arguments of tool "greet": the tool's input_schema is not a valid JSON Schema`) {
			t.Fatalf("call with a broken schema = %v", err)
		}
	}
	if compiles != 1 || c.calls != 0 {
		t.Fatalf("compiled %d times, called %d times; want 1 and 0", compiles, c.calls)
	}
}

// A call without arguments reaches the server, its hooks and the
// tool.started trace event as {}, and the check sees {} too.
func TestNoArgsAreAnEmptyObjectEverywhere(t *testing.T) {
	dir := t.TempDir()
	hookFile := filepath.Join(dir, "hooks.jsonl")
	srv := pyGrant(t, "srv", map[string]any{"capabilities": []string{"tools", "hooks"}, "hook_file": hookFile,
		"capability_params": map[string]any{"hooks": []map[string]any{{"event": "pre_tool_use", "matcher": "*"}}}}, "params")
	srv.Hooks = []HookGrant{{Event: "pre_tool_use", Matcher: "*"}}
	var checked []string
	compile := func(json.RawMessage) (func(json.RawMessage) error, error) {
		return func(args json.RawMessage) error { checked = append(checked, string(args)); return nil }, nil
	}
	traceFile := filepath.Join(dir, "trace.jsonl")
	tr := pyGrant(t, "tracer", map[string]any{"capabilities": []string{"trace"}, "trace_file": traceFile})
	tr.Trace = true
	s := newTestSession(t, SessionOptions{Grants: []Grant{tr, srv}, CompileArgs: compile})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := s.CallTool(context.Background(), "params", "call-1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sent struct{ Args json.RawMessage }
	if err := json.Unmarshal([]byte(res.Output), &sent); err != nil || string(sent.Args) != "{}" {
		t.Errorf("the server got args %s (%v), want {}", sent.Args, err)
	}
	hooks, err := os.ReadFile(hookFile)
	if err != nil {
		t.Fatal(err)
	}
	var hp yep.HookFireParams
	var payload yep.HookPayload
	if err := json.Unmarshal(hooks, &hp); err != nil {
		t.Fatalf("hook/fire %s: %v", hooks, err)
	}
	if err := json.Unmarshal(hp.Payload, &payload); err != nil || string(payload.Args) != "{}" {
		t.Errorf("the hook got args %s (%v), want {}", payload.Args, err)
	}
	if strings.Join(checked, ",") != "{}" {
		t.Errorf("checked %q, want {} once", checked)
	}
	evs := readTraceFile(t, traceFile, 3)
	var started struct{ Args json.RawMessage }
	if err := json.Unmarshal(evs[0].Data, &started); evs[0].Type != yep.TraceToolStarted || err != nil || string(started.Args) != "{}" {
		t.Errorf("first trace event %s %s, want tool.started with args {}", evs[0].Type, evs[0].Data)
	}
}

// Arguments that are not JSON fail the call in a session without a
// validator too (one with a validator gets its error): no front-end needs
// a check of its own.
func TestArgsThatAreNotJSON(t *testing.T) {
	c := &argsCap{}
	s := NewSession(SessionOptions{Builtins: []Capability{c}})
	defer s.Close()
	_, err := s.CallTool(context.Background(), "greet", "c", json.RawMessage(`{not json`), nil)
	if !errors.Is(err, ErrInvalidArgs) || !strings.Contains(err.Error(), `arguments of tool "greet": not valid JSON: invalid character`) || c.calls != 0 {
		t.Errorf("call with arguments that are not JSON = %v (called %d times)", err, c.calls)
	}
}
