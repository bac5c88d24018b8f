package logfire

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"yolop.dev/core/yep"
	"yolop.dev/extensions/logfire/otlptest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// wait bounds every wait on the receiver: a guard against a hang, never a
// measurement.
const wait = 30 * time.Second

// testPipeline is a pipeline exporting to r, and the statuses it reported.
type testPipeline struct {
	*pipeline
	fold *folder

	mu       sync.Mutex
	statuses []string
	warnings []string
}

func newTestPipeline(t *testing.T, r *otlptest.Receiver, token string, o ExportOptions) *testPipeline {
	t.Helper()
	st, err := resolve(json.RawMessage(`{"endpoint":"`+r.URL()+`","service_name":"yolop-test"}`), func(k string) string {
		if k == TokenEnv {
			return token
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	tp := &testPipeline{}
	p, err := newPipeline(st, "test", o, func(s string) {
		tp.mu.Lock()
		tp.statuses = append(tp.statuses, s)
		tp.mu.Unlock()
	}, func(msg string, kv ...any) {
		b, _ := json.Marshal(kv)
		tp.mu.Lock()
		tp.warnings = append(tp.warnings, msg+" "+string(b))
		tp.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	tp.pipeline = p
	tp.fold = newFolder(p.provider.Tracer("test"))
	return tp
}

func (tp *testPipeline) Statuses() []string {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return append([]string(nil), tp.statuses...)
}

func ev(typ, trace, span, parent, turn string, data any) yep.TraceEventParams {
	e := yep.TraceEventParams{Type: typ, SessionID: "sess-1", TraceID: trace, SpanID: span, ParentID: parent, TurnID: turn,
		Timestamp: time.Now().UTC().Format(time.RFC3339Nano)}
	if data != nil {
		e.Data, _ = json.Marshal(data)
	}
	return e
}

const (
	trace1 = "4bf92f3577b34da6a3ce929d0e0e4736"
	turn1  = "00f067aa0ba902b7"
	tool1  = "a2fb4a1d1a96d312"
	tool2  = "b7ad6b7169203331"
	trace2 = "0af7651916cd43dd8448eb211c80319c"
	turn2  = "c3f067aa0ba902b8"
	tool3  = "e457b5a2e4d86bd1"
)

// TestFoldSession folds a session's events the way the host sends them and
// checks the spans an OTLP endpoint receives: one trace per turn under the
// host's ids, children under the turn, tool and GenAI attributes, errors,
// and an unpaired start ended with an error at session end.
func TestFoldSession(t *testing.T) {
	r := otlptest.New()
	defer r.Close()
	tp := newTestPipeline(t, r, "tok-123", ExportOptions{BatchInterval: 10 * time.Millisecond})
	f := tp.fold
	for _, e := range []yep.TraceEventParams{
		ev(yep.TraceSessionStarted, "", "", "", "", nil),
		ev(yep.TraceTurnStarted, trace1, turn1, "", "1", nil),
		ev(yep.TraceReasonStarted, trace1, "", turn1, "1", nil),
		ev(yep.TraceLLMGeneration, trace1, "", turn1, "1", yep.LLMGenerationData{
			Model: "claude-x", Provider: "anthropic", InputTokens: 120, OutputTokens: 34, DurationMS: 250,
			FinishReasons: []string{"tool_use"},
		}),
		ev(yep.TraceReasonCompleted, trace1, "", turn1, "1", nil),
		ev(yep.TraceActStarted, trace1, "", turn1, "1", nil),
		ev(yep.TraceToolStarted, trace1, tool1, turn1, "1", yep.ToolStartedData{Tool: "echo", Extension: "echo", Capability: "ext:echo", ToolCallID: "call-1", Args: json.RawMessage(`{"text":"hi"}`)}),
		ev(yep.TraceToolCompleted, trace1, tool1, turn1, "1", yep.ToolCompletedData{Tool: "echo", Extension: "echo", DurationMS: 1.5, IsError: false, Status: yep.ToolOK}),
		ev(yep.TraceToolStarted, trace1, tool2, turn1, "1", yep.ToolStartedData{Tool: "fail", Extension: "echo"}),
		ev(yep.TraceToolCompleted, trace1, tool2, turn1, "1", yep.ToolCompletedData{Tool: "fail", Extension: "echo", DurationMS: 2.0, IsError: true, Status: yep.ToolTimeout, Error: `tool "fail" timed out after 1s`}),
		ev(yep.TraceActCompleted, trace1, "", turn1, "1", nil),
		ev(yep.TraceTurnCompleted, trace1, turn1, "", "1", nil),
		ev(yep.TraceTurnStarted, trace2, turn2, "", "2", nil),
		ev(yep.TraceToolStarted, trace2, tool3, turn2, "2", yep.ToolStartedData{Tool: "count", Extension: "echo"}),
		ev(yep.TraceSessionCompleted, "", "", "", "", nil),
	} {
		f.handle(e)
	}
	if err := tp.shutdown(wait); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	spans := r.Spans()
	by := map[string]otlptest.Span{}
	for _, s := range spans {
		by[s.Name] = s
	}
	t.Logf("received:\n%s", otlptest.Tree(spans, "gen_ai.tool.name", "yolop.tool.status"))
	if len(spans) != 8 {
		t.Fatalf("received %d spans, want 8:\n%s", len(spans), otlptest.Tree(spans))
	}

	turn := spans[0]
	for _, s := range spans {
		if s.SpanID == turn1 {
			turn = s
		}
	}
	if turn.SpanID != turn1 || turn.TraceID != trace1 || turn.ParentID != "" || turn.Name != "turn" || turn.StatusCode == "Error" {
		t.Errorf("turn span %+v; want the host's ids, a root, no error", turn)
	}
	if turn.Service != "yolop-test" || turn.Attrs["session.id"] != "sess-1" || turn.Attrs["yolop.turn.id"] != "1" {
		t.Errorf("turn span resource/attributes: service %q attrs %v", turn.Service, turn.Attrs)
	}
	for _, name := range []string{"reason", "act"} {
		if s := by[name]; s.ParentID != turn1 || s.TraceID != trace1 {
			t.Errorf("%s span: parent %s trace %s; want the turn's", name, s.ParentID, s.TraceID)
		}
	}

	echo := by["execute_tool echo"]
	if echo.SpanID != tool1 || echo.ParentID != turn1 || echo.TraceID != trace1 || echo.Kind != "Client" {
		t.Errorf("tool span ids %+v; want span %s under %s", echo, tool1, turn1)
	}
	for k, v := range map[string]string{
		"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "echo", "gen_ai.tool.call.id": "call-1",
		"yolop.extension": "echo", "yolop.capability": "ext:echo", "yolop.tool.status": "ok", "yolop.tool.duration_ms": "1.5",
	} {
		if echo.Attrs[k] != v {
			t.Errorf("tool span %s = %q, want %q", k, echo.Attrs[k], v)
		}
	}
	if echo.StatusCode == "Error" {
		t.Errorf("a successful tool span has status %s", echo.StatusCode)
	}
	if _, ok := echo.Attrs["args"]; ok {
		t.Error("the tool's arguments became an attribute")
	}

	fail := by["execute_tool fail"]
	if fail.StatusCode != "Error" || !strings.Contains(fail.StatusMessage, "timed out") || fail.Attrs["error.type"] != "timeout" {
		t.Errorf("failed tool span: status %s %q, error.type %q", fail.StatusCode, fail.StatusMessage, fail.Attrs["error.type"])
	}

	gen := by["chat claude-x"]
	for k, v := range map[string]string{
		"gen_ai.operation.name": "chat", "gen_ai.request.model": "claude-x", "gen_ai.provider.name": "anthropic",
		"gen_ai.usage.input_tokens": "120", "gen_ai.usage.output_tokens": "34", "gen_ai.response.finish_reasons": "[tool_use]",
	} {
		if gen.Attrs[k] != v {
			t.Errorf("generation span %s = %q, want %q", k, gen.Attrs[k], v)
		}
	}
	if gen.ParentID != turn1 || gen.End.Sub(gen.Start) != 250*time.Millisecond {
		t.Errorf("generation span: parent %s, duration %v; want %s and 250ms", gen.ParentID, gen.End.Sub(gen.Start), turn1)
	}

	// Turn 2 never completed: both its spans end at session end, as errors.
	for _, s := range spans {
		if s.TraceID != trace2 {
			continue
		}
		if s.StatusCode != "Error" || !strings.Contains(s.StatusMessage, "never completed") || s.Attrs["yolop.unpaired"] != "true" {
			t.Errorf("unpaired span %s: status %s %q", s.Name, s.StatusCode, s.StatusMessage)
		}
	}
	if c := by["execute_tool count"]; c.ParentID != turn2 || c.SpanID != tool3 {
		t.Errorf("unpaired tool span %+v", c)
	}

	// The export itself: protobuf, gzip, the token as the bare
	// Authorization value, to /v1/traces.
	for _, req := range r.Requests() {
		if req.Path != "/v1/traces" || req.ContentType != "application/x-protobuf" || req.ContentEncoding != "gzip" || req.Authorization != "tok-123" {
			t.Errorf("export request %+v", req)
		}
	}
}

// TestFoldLostStart rebuilds a span whose *.started was lost from the
// duration its *.completed carries, and counts a completion that cannot be
// rebuilt.
func TestFoldLostStart(t *testing.T) {
	r := otlptest.New()
	defer r.Close()
	tp := newTestPipeline(t, r, "", ExportOptions{})
	tp.fold.handle(ev(yep.TraceToolCompleted, trace1, tool1, turn1, "1", yep.ToolCompletedData{Tool: "echo", DurationMS: 40.0, Status: yep.ToolOK}))
	tp.fold.handle(ev(yep.TraceReasonCompleted, trace1, "", turn1, "1", nil))
	if err := tp.shutdown(wait); err != nil {
		t.Fatal(err)
	}
	spans := r.Spans()
	if len(spans) != 1 {
		t.Fatalf("got %d spans, want the rebuilt tool span:\n%s", len(spans), otlptest.Tree(spans))
	}
	s := spans[0]
	if s.Name != "execute_tool echo" || s.SpanID != tool1 || s.ParentID != turn1 || s.TraceID != trace1 || s.End.Sub(s.Start) != 40*time.Millisecond {
		t.Errorf("rebuilt span %+v", s)
	}
	if tp.fold.unpairedCompletions != 1 {
		t.Errorf("unpaired completions %d, want 1", tp.fold.unpairedCompletions)
	}
	if r.Requests()[0].Authorization != "" {
		t.Error("an Authorization header was sent without a token")
	}
}

// TestFoldLegacyIDs maps ids that are no W3C ids (an older host's tool
// call ids) to stable span ids, so parent references still resolve.
func TestFoldLegacyIDs(t *testing.T) {
	r := otlptest.New()
	defer r.Close()
	tp := newTestPipeline(t, r, "", ExportOptions{})
	tp.fold.handle(ev(yep.TraceTurnStarted, "", "", "", "7", nil))
	tp.fold.handle(ev(yep.TraceToolStarted, "", "call-7", "", "7", yep.ToolStartedData{Tool: "echo"}))
	tp.fold.handle(ev(yep.TraceToolCompleted, "", "call-7", "", "7", yep.ToolCompletedData{Tool: "echo"}))
	tp.fold.handle(ev(yep.TraceTurnCompleted, "", "", "", "7", nil))
	if err := tp.shutdown(wait); err != nil {
		t.Fatal(err)
	}
	spans := r.Spans()
	if len(spans) != 2 {
		t.Fatalf("got %d spans:\n%s", len(spans), otlptest.Tree(spans))
	}
	tool, turn := spans[0], spans[1]
	if tool.ParentID != turn.SpanID || tool.TraceID != turn.TraceID || tool.SpanID != derivedSpanID("sess-1", "call-7").String() {
		t.Errorf("tool %+v under turn %+v", tool, turn)
	}
	if turn.TraceID != derivedTraceID("sess-1", "7").String() || turn.StatusCode == "Error" {
		t.Errorf("turn %+v", turn)
	}
}
