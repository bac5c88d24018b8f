package host

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"yolop.dev/core/yep"
)

var traceparentRE = regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$`)

// readTraceFile waits until the trace file holds n events of the given
// types (session events aside) and returns them.
func readTraceFile(t *testing.T, path string, n int) []yep.TraceEventParams {
	t.Helper()
	deadline := time.Now().Add(untilDeadline(t))
	for {
		data, _ := os.ReadFile(path)
		var evs []yep.TraceEventParams
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var ev yep.TraceEventParams
			if json.Unmarshal([]byte(l), &ev) == nil && !strings.HasPrefix(ev.Type, "session.") {
				evs = append(evs, ev)
			}
		}
		if len(evs) >= n {
			return evs
		}
		if time.Now().After(deadline) {
			t.Fatalf("trace events = %+v, want %d", evs, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestToolSpanIDsReachServerHooksAndTraceEvents is the host half of
// stitching: the traceparent of tool/call and of its hook/fire names the
// host's tool span, and the tool.started/completed events carry the same
// span id under the turn's span, in the turn's trace.
func TestToolSpanIDsReachServerHooksAndTraceEvents(t *testing.T) {
	dir := t.TempDir()
	traceFile, hookFile := filepath.Join(dir, "trace.jsonl"), filepath.Join(dir, "hooks.jsonl")
	tr := pyGrant(t, "tracer", map[string]any{"capabilities": []string{"trace"}, "trace_file": traceFile})
	tr.Trace = true
	srv := pyGrant(t, "srv", map[string]any{"capabilities": []string{"tools", "hooks"}, "hook_file": hookFile,
		"capability_params": map[string]any{"hooks": []map[string]any{{"event": "pre_tool_use", "matcher": "*"}, {"event": "post_tool_use", "matcher": "*"}}}}, "params")
	srv.Hooks = []HookGrant{{Event: "pre_tool_use", Matcher: "*"}, {Event: "post_tool_use", Matcher: "*"}}
	s := newTestSession(t, SessionOptions{Grants: []Grant{tr, srv}})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	turn := s.BeginTurn(context.Background())
	traceID, turnSpanID := s.TurnSpan()
	res, err := s.CallTool(context.Background(), "params", "call-1", json.RawMessage(`{}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	s.EndTurn()
	if a, b := s.TurnSpan(); a != "" || b != "" {
		t.Errorf("TurnSpan after EndTurn = %q %q, want empty", a, b)
	}
	var sent yep.ToolCallParams
	if err := json.Unmarshal([]byte(res.Output), &sent); err != nil {
		t.Fatal(err)
	}
	m := traceparentRE.FindStringSubmatch(sent.TraceParent)
	if m == nil {
		t.Fatalf("tool/call traceparent = %q", sent.TraceParent)
	}
	if m[1] != traceID || m[3] != "01" {
		t.Errorf("traceparent %q: want trace %s, sampled (a trace consumer is enabled)", sent.TraceParent, traceID)
	}
	toolSpanID := m[2]

	hooks, _ := os.ReadFile(hookFile)
	lines := strings.Split(strings.TrimSpace(string(hooks)), "\n")
	if len(lines) != 2 {
		t.Fatalf("hook firings: %q", hooks)
	}
	for _, l := range lines {
		var hp yep.HookFireParams
		if err := json.Unmarshal([]byte(l), &hp); err != nil || hp.TraceParent != sent.TraceParent {
			t.Errorf("hook/fire %s: traceparent %q, want the tool call's %q", l, hp.TraceParent, sent.TraceParent)
		}
	}

	evs := readTraceFile(t, traceFile, 6)
	// The hooks' spans (hook.fired) have ids of their own: "new" stands
	// for any id that is none of the others.
	want := []struct{ typ, span, parent string }{
		{yep.TraceTurnStarted, turnSpanID, ""},
		{yep.TraceToolStarted, toolSpanID, turnSpanID},
		{yep.TraceHookFired, "new", toolSpanID},
		{yep.TraceHookFired, "new", toolSpanID},
		{yep.TraceToolCompleted, toolSpanID, turnSpanID},
		{yep.TraceTurnCompleted, turnSpanID, ""},
	}
	for i, w := range want {
		ev := evs[i]
		span := w.span
		if span == "new" && ev.SpanID != "" && ev.SpanID != toolSpanID && ev.SpanID != turnSpanID {
			span = ev.SpanID
		}
		if ev.Type != w.typ || ev.TraceID != traceID || ev.SpanID != span || ev.ParentID != w.parent || ev.TurnID != "1" || turn != 1 {
			t.Errorf("event %d = %+v; want %s span %s parent %s in trace %s, turn 1", i, ev, w.typ, w.span, w.parent, traceID)
		}
	}
	var done map[string]any
	if err := json.Unmarshal(evs[4].Data, &done); err != nil {
		t.Fatal(err)
	}
	if done["tool"] != "params" || done["extension"] != "srv" || done["capability"] != "ext:srv" || done["status"] != "ok" ||
		done["is_error"] != false || done["tool_call_id"] != "call-1" {
		t.Errorf("tool.completed data = %v", done)
	}
	if _, ok := done["duration_ms"].(float64); !ok {
		t.Errorf("tool.completed has no duration_ms: %v", done)
	}
}

// TestUntracedSessionSendsAnUnsampledTraceparent: with no trace consumer
// the call still carries a valid traceparent, flagged not sampled, and a
// call outside a turn gets a trace of its own.
func TestUntracedSessionSendsAnUnsampledTraceparent(t *testing.T) {
	s := newTestSession(t, SessionOptions{Grants: []Grant{pyGrant(t, "srv", nil, "params")}})
	seen := map[string]bool{}
	for i := 0; i < 2; i++ {
		res, err := s.CallTool(context.Background(), "params", "c", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var sent yep.ToolCallParams
		json.Unmarshal([]byte(res.Output), &sent)
		m := traceparentRE.FindStringSubmatch(sent.TraceParent)
		if m == nil || m[3] != "00" {
			t.Fatalf("traceparent = %q, want a valid one flagged 00", sent.TraceParent)
		}
		seen[m[1]] = true
	}
	if len(seen) != 2 {
		t.Error("two calls outside a turn shared a trace id")
	}
}

// TestAgentLoopEventsJoinTheTurn: an event that names no trace, traced
// while a turn is in progress, becomes a child of the turn's span.
func TestAgentLoopEventsJoinTheTurn(t *testing.T) {
	traceFile := filepath.Join(t.TempDir(), "trace.jsonl")
	tr := pyGrant(t, "tracer", map[string]any{"capabilities": []string{"trace"}, "trace_file": traceFile})
	tr.Trace = true
	s := newTestSession(t, SessionOptions{Grants: []Grant{tr}})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.BeginTurn(context.Background())
	traceID, turnSpanID := s.TurnSpan()
	span := NewSpanID()
	s.Trace(yep.TraceEventParams{Type: yep.TraceReasonStarted, SpanID: span})
	s.Trace(yep.TraceEventParams{Type: yep.TraceLLMGeneration, ParentID: span, Data: json.RawMessage(`{"model":"m"}`)})
	s.EndTurn()
	s.Trace(yep.TraceEventParams{Type: yep.TraceLLMGeneration})
	evs := readTraceFile(t, traceFile, 5)
	if ev := evs[1]; ev.TraceID != traceID || ev.ParentID != turnSpanID || ev.TurnID != "1" {
		t.Errorf("reason.started = %+v, want a child of the turn", ev)
	}
	if ev := evs[2]; ev.TraceID != traceID || ev.ParentID != span {
		t.Errorf("llm.generation = %+v, want its own parent kept", ev)
	}
	if ev := evs[4]; ev.TraceID != "" || ev.ParentID != "" {
		t.Errorf("an event between turns = %+v, want no ids filled in", ev)
	}
}

func TestNewIDs(t *testing.T) {
	for i := 0; i < 100; i++ {
		tid, sid := NewTraceID(), NewSpanID()
		if !traceparentRE.MatchString(TraceParent(tid, sid, i%2 == 0)) {
			t.Fatalf("TraceParent(%q, %q) is not a valid traceparent", tid, sid)
		}
	}
}

// TestCloseDeliversQueuedTraceEvents: the events queued when the session
// closes (the last turn's, session.completed) reach the trace consumer
// before it is told to shut down, so its final flush has them.
func TestCloseDeliversQueuedTraceEvents(t *testing.T) {
	for i := range 5 {
		traceFile := filepath.Join(t.TempDir(), "trace.jsonl")
		tr := pyGrant(t, "tracer", map[string]any{"capabilities": []string{"trace"}, "trace_file": traceFile})
		tr.Trace = true
		s := newTestSession(t, SessionOptions{Grants: []Grant{tr}})
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		for range 20 {
			s.BeginTurn(context.Background())
			s.EndTurn()
		}
		s.Close()
		data, _ := os.ReadFile(traceFile)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		var last yep.TraceEventParams
		json.Unmarshal([]byte(lines[len(lines)-1]), &last)
		if len(lines) != 42 || last.Type != yep.TraceSessionCompleted {
			t.Fatalf("round %d: the server got %d events ending with %q; want 42 ending with session.completed", i, len(lines), last.Type)
		}
	}
}

// TestHookFiringsAreTraced: every hook/fire of a tool call is a
// hook.fired event, a span of its own under the call's tool span, naming
// the hook's event, its extension and the decision, with its duration.
func TestHookFiringsAreTraced(t *testing.T) {
	dir := t.TempDir()
	traceFile := filepath.Join(dir, "trace.jsonl")
	tr := pyGrant(t, "tracer", map[string]any{"capabilities": []string{"trace"}, "trace_file": traceFile})
	tr.Trace = true
	srv := pyGrant(t, "guard", map[string]any{"capabilities": []string{"tools", "hooks"},
		"capability_params": map[string]any{"hooks": []map[string]any{{"event": "pre_tool_use", "matcher": "*"}, {"event": "post_tool_use", "matcher": "*"}}}}, "echo")
	srv.Hooks = []HookGrant{{Event: "pre_tool_use", Matcher: "*"}, {Event: "post_tool_use", Matcher: "*"}}
	s := newTestSession(t, SessionOptions{Grants: []Grant{tr, srv}})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.BeginTurn(context.Background())
	traceID, _ := s.TurnSpan()
	if _, err := s.CallTool(context.Background(), "echo", "call-m", json.RawMessage(`{"text":"mutate"}`), nil); err != nil {
		t.Fatal(err)
	}
	var blocked *HookBlockedError
	if _, err := s.CallTool(context.Background(), "echo", "call-f", json.RawMessage(`{"text":"forbidden"}`), nil); !errors.As(err, &blocked) {
		t.Fatalf("forbidden call: %v, want blocked", err)
	}
	s.EndTurn()

	// turn, then per call tool.started, the hooks, tool.completed.
	evs := readTraceFile(t, traceFile, 9)
	type hook struct{ event, decision, reason, tool string }
	var got []hook
	toolSpan := ""
	for _, ev := range evs {
		switch ev.Type {
		case yep.TraceToolStarted:
			toolSpan = ev.SpanID
		case yep.TraceHookFired:
			var d map[string]any
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			if ev.TraceID != traceID || ev.ParentID != toolSpan || ev.SpanID == "" || ev.SpanID == toolSpan || ev.TurnID != "1" {
				t.Errorf("hook.fired %+v: want a span of its own in trace %s under the tool span %s, turn 1", ev, traceID, toolSpan)
			}
			if d["extension"] != "guard" || d["capability"] != "ext:guard" {
				t.Errorf("hook.fired data %v: want extension guard", d)
			}
			if _, ok := d["duration_ms"].(float64); !ok {
				t.Errorf("hook.fired data %v: no duration_ms", d)
			}
			reason, _ := d["reason"].(string)
			got = append(got, hook{d["event"].(string), d["decision"].(string), reason, d["tool"].(string)})
		}
	}
	want := []hook{
		{"pre_tool_use", "mutate", "", "echo"},
		{"post_tool_use", "mutate", "", "echo"},
		{"pre_tool_use", "block", "forbidden word", "echo"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("hook.fired events = %+v\nwant %+v", got, want)
	}
}
