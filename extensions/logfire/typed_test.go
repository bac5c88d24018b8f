package logfire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"yolop.dev/core"
	"yolop.dev/core/host"
	"yolop.dev/core/sdk"
	"yolop.dev/core/transporttest"
	"yolop.dev/core/yep"
	"yolop.dev/extensions/logfire/otlptest"
)

// Where a payload field shows in the span the fold makes of it, besides
// an attribute of that name.
const (
	inName     = "(name)"     // the span's name contains the value
	inStatus   = "(status)"   // the span's status is Error with the value as message
	inDuration = "(duration)" // the span lasts the value, in milliseconds
)

// fillPayload returns a value of type t with every field set from its
// JSON name: a string field "<name>-v", a number 12.5 or 7, a bool true,
// a []string {"<name>-v"}, raw JSON {"secret":"<name>-v"}.
func fillPayload(t reflect.Type) any {
	v := reflect.New(t).Elem()
	for i := range t.NumField() {
		name := jsonName(t.Field(i))
		f := v.Field(i)
		switch {
		case f.Type() == reflect.TypeFor[json.RawMessage]():
			f.SetBytes([]byte(`{"secret":"` + name + `-v"}`))
		case f.Kind() == reflect.String:
			f.SetString(name + "-v")
		case f.Kind() == reflect.Float64:
			f.SetFloat(12.5)
		case f.Kind() == reflect.Int64 || f.Kind() == reflect.Int:
			f.SetInt(7)
		case f.Kind() == reflect.Bool:
			f.SetBool(true)
		case f.Type() == reflect.TypeFor[[]string]():
			f.Set(reflect.ValueOf([]string{name + "-v"}))
		default:
			panic(fmt.Sprintf("fillPayload: %s.%s has a kind the test does not fill: add it", t.Name(), t.Field(i).Name))
		}
	}
	return v.Interface()
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

// TestFoldPayloadFields marshals each payload type of core/yep the fold
// reads, every field set, folds it, and finds each field where the fold
// maps it. The table names the payloads' JSON fields: a field renamed,
// added or removed in core/yep fails the test until the fold and this
// table follow it. A type this version does not define (plan.completed)
// is read as a phase: its duration and error.
func TestFoldPayloadFields(t *testing.T) {
	cases := []struct {
		typ   string
		data  reflect.Type
		start bool // a data-less *.started precedes it
		want  map[string][]string
		never []string // fields that must not show anywhere
	}{
		// Never completed: ended at session end.
		{typ: yep.TraceToolStarted, data: reflect.TypeFor[yep.ToolStartedData](), want: map[string][]string{
			"tool": {"gen_ai.tool.name", inName}, "capability": {"yolop.capability"}, "extension": {"yolop.extension"},
			"tool_call_id": {"gen_ai.tool.call.id"}, "narration": {"yolop.tool.narration"},
		}, never: []string{"args"}},
		// Its start lost: the span is rebuilt from the completion alone.
		{typ: yep.TraceToolCompleted, data: reflect.TypeFor[yep.ToolCompletedData](), want: map[string][]string{
			"tool": {"gen_ai.tool.name", inName}, "capability": {"yolop.capability"}, "extension": {"yolop.extension"},
			"tool_call_id": {"gen_ai.tool.call.id"}, "duration_ms": {"yolop.tool.duration_ms", inDuration},
			"is_error": {"yolop.tool.is_error"}, "status": {"yolop.tool.status", "error.type"}, "error": {inStatus},
		}},
		{typ: yep.TraceHookFired, data: reflect.TypeFor[yep.HookFiredData](), want: map[string][]string{
			"event": {"yolop.hook.event", inName}, "tool": {"gen_ai.tool.name"}, "capability": {"yolop.capability"},
			"extension": {"yolop.extension"}, "decision": {"yolop.hook.decision"}, "reason": {"yolop.hook.reason"},
			"error": {inStatus}, "on_error": {"yolop.hook.on_error"}, "duration_ms": {"yolop.hook.duration_ms", inDuration},
		}},
		{typ: yep.TraceLLMGeneration, data: reflect.TypeFor[yep.LLMGenerationData](), want: map[string][]string{
			"operation": {"gen_ai.operation.name", inName}, "model": {"gen_ai.request.model", inName},
			"response_model": {"gen_ai.response.model"}, "provider": {"gen_ai.provider.name"}, "response_id": {"gen_ai.response.id"},
			"input_tokens": {"gen_ai.usage.input_tokens"}, "cached_input_tokens": {"gen_ai.usage.cache_read.input_tokens"}, "output_tokens": {"gen_ai.usage.output_tokens"},
			"finish_reasons": {"gen_ai.response.finish_reasons"}, "duration_ms": {inDuration}, "error": {inStatus},
		}},
		{typ: yep.TraceTurnCompleted, data: reflect.TypeFor[yep.PhaseData](), start: true, want: map[string][]string{
			"duration_ms": {}, "error": {inStatus},
		}},
		// Its start lost: rebuilt from the phase's duration.
		{typ: yep.TraceReasonCompleted, data: reflect.TypeFor[yep.PhaseData](), want: map[string][]string{
			"duration_ms": {inDuration}, "error": {inStatus},
		}},
		{typ: "plan.completed", data: reflect.TypeFor[yep.PhaseData](), want: map[string][]string{
			"duration_ms": {inDuration}, "error": {inStatus},
		}},
	}
	for _, c := range cases {
		t.Run(c.typ, func(t *testing.T) {
			if info, ok := yep.EventFor(c.typ); ok && info.Data != c.data {
				t.Fatalf("yep.Events types %s by %v; the fold reads it as %v", c.typ, info.Data, c.data)
			}
			fields := map[string]bool{}
			for i := range c.data.NumField() {
				name := jsonName(c.data.Field(i))
				fields[name] = true
				if _, ok := c.want[name]; !ok && !contains(c.never, name) {
					t.Errorf("%s has the field %q the fold does not map: map it, then add it here", c.data.Name(), name)
				}
			}
			for name := range c.want {
				if !fields[name] {
					t.Errorf("the fold maps %q, which %s no longer has", name, c.data.Name())
				}
			}

			r := otlptest.New()
			defer r.Close()
			tp := newTestPipeline(t, r, "", ExportOptions{})
			payload := fillPayload(c.data)
			const turnSpan = "1111111111111111"
			span := "2222222222222222"
			if strings.HasPrefix(c.typ, "turn.") {
				span = turnSpan
			}
			if c.start {
				started := strings.TrimSuffix(c.typ, ".completed") + ".started"
				tp.fold.handle(ev(started, trace1, span, "", "1", nil))
			}
			tp.fold.handle(ev(c.typ, trace1, span, "", "1", payload))
			tp.fold.handle(ev(yep.TraceSessionCompleted, "", "", "", "", nil)) // ends a span left open
			if err := tp.shutdown(wait); err != nil {
				t.Fatal(err)
			}
			spans := r.Spans()
			if len(spans) != 1 {
				t.Fatalf("got %d spans, want 1:\n%s", len(spans), otlptest.Tree(spans))
			}
			s := spans[0]
			t.Logf("span %q status %s %q attrs %v", s.Name, s.StatusCode, s.StatusMessage, s.Attrs)
			v := reflect.ValueOf(payload)
			for i := range c.data.NumField() {
				name := jsonName(c.data.Field(i))
				val := fmt.Sprint(v.Field(i).Interface())
				if raw, ok := v.Field(i).Interface().(json.RawMessage); ok {
					val = string(raw)
				}
				for _, where := range c.want[name] {
					switch where {
					case inName:
						if !strings.Contains(s.Name, val) {
							t.Errorf("%s: span name %q does not hold %s", name, s.Name, val)
						}
					case inStatus:
						if s.StatusCode != "Error" || s.StatusMessage != val {
							t.Errorf("%s: status %s %q, want Error %q", name, s.StatusCode, s.StatusMessage, val)
						}
					case inDuration:
						if d := s.End.Sub(s.Start); d != time.Duration(12.5*float64(time.Millisecond)) {
							t.Errorf("%s: the span lasts %v, want 12.5ms", name, d)
						}
					default:
						if s.Attrs[where] != val {
							t.Errorf("%s: attribute %s = %q, want %q", name, where, s.Attrs[where], val)
						}
					}
				}
				if contains(c.never, name) {
					for k, a := range s.Attrs {
						if strings.Contains(a, name+"-v") {
							t.Errorf("%s shows in attribute %s = %q", name, k, a)
						}
					}
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestFoldHostSession folds what a real host.Session emits, subscribed
// to its event stream: a turn with a model generation, a tool call whose
// post_tool_use hook fails (warn), and one a pre_tool_use hook blocks.
// The spans carry what the host put in each typed payload.
func TestFoldHostSession(t *testing.T) {
	tr := &transporttest.Transport{Servers: map[string]transporttest.Server{
		"kit": transporttest.SDK(sdk.Info{}, func(s *sdk.Server) {
			s.Tool("echo", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
				return yep.ToolResult{Output: "hi"}, nil
			})
			s.Tool("guarded", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
				return yep.ToolResult{Output: "ran"}, nil
			})
			s.OnHook(yep.HookPreToolUse, "guarded", func(ctx context.Context, h *sdk.HookEvent) (yep.HookFireResult, error) {
				return yep.HookFireResult{Decision: yep.DecisionBlock, Reason: "no guarded calls"}, nil
			})
			s.OnHook(yep.HookPostToolUse, "echo", func(ctx context.Context, h *sdk.HookEvent) (yep.HookFireResult, error) {
				return yep.HookFireResult{}, errors.New("audit log unavailable")
			}, sdk.HookOptions{OnError: yep.HookOnErrorWarn})
		}),
	}}
	sess := host.NewSession(host.SessionOptions{
		SessionID: "sess-host",
		Grants: []host.Grant{{
			Name: "kit", ProtocolVersion: yep.ProtocolVersion, Server: core.ServerSpec{Name: "kit"},
			Tools: []host.ToolGrant{{Name: "echo"}, {Name: "guarded"}},
			Hooks: []host.HookGrant{
				{Event: yep.HookPreToolUse, Matcher: "guarded"},
				{Event: yep.HookPostToolUse, Matcher: "echo", OnError: yep.HookOnErrorWarn},
			},
		}},
		Transport: tr,
	})
	defer sess.Close()

	r := otlptest.New()
	defer r.Close()
	tp := newTestPipeline(t, r, "", ExportOptions{})
	// The subscriber's goroutine is the fold's one goroutine until Close
	// has delivered the last event.
	sess.Subscribe(func(e host.Event) { tp.fold.handle(e.Params()) })

	ctx := context.Background()
	if err := sess.Start(ctx); err != nil {
		t.Fatal(err)
	}
	sess.BeginTurn(ctx)
	turnTrace, turnSpan := sess.TurnSpan()
	sess.Emit(host.Event{Type: yep.TraceReasonStarted})
	sess.Emit(host.Event{Type: yep.TraceLLMGeneration, Data: yep.LLMGenerationData{
		Model: "claude-x", ResponseModel: "claude-x-1", Provider: "anthropic", ResponseID: "msg-1",
		InputTokens: 120, OutputTokens: 34, FinishReasons: []string{"tool_use"}, DurationMS: 250,
	}})
	sess.Emit(host.Event{Type: yep.TraceReasonCompleted, Data: yep.PhaseData{DurationMS: 260}})
	if res, err := sess.CallTool(ctx, "echo", "call-1", json.RawMessage(`{"text":"hi"}`), nil); err != nil || res.Output != "hi" {
		t.Fatalf("echo = %+v, %v", res, err)
	}
	if _, err := sess.CallTool(ctx, "guarded", "call-2", nil, nil); !errors.Is(err, host.ErrHookBlocked) {
		t.Fatalf("guarded: err = %v, want it blocked", err)
	}
	sess.EndTurn()
	sess.Close() // session.completed, then every event delivered
	if err := tp.shutdown(wait); err != nil {
		t.Fatal(err)
	}

	spans := r.Spans()
	t.Logf("received:\n%s", otlptest.Tree(spans, "gen_ai.tool.name", "yolop.tool.status", "yolop.hook.decision"))
	by := map[string]otlptest.Span{}
	for _, s := range spans {
		by[s.Name] = s
		if s.TraceID != turnTrace {
			t.Errorf("span %s in trace %s, want the turn's %s", s.Name, s.TraceID, turnTrace)
		}
		if s.Attrs["session.id"] != "sess-host" || s.Attrs["yolop.turn.id"] != "1" || s.Attrs["yolop.unpaired"] != "" {
			t.Errorf("span %s attrs %v", s.Name, s.Attrs)
		}
	}
	if len(spans) != 7 {
		t.Fatalf("received %d spans, want 7 (turn, reason, chat, two tools, two hooks)", len(spans))
	}
	if turn := by["turn"]; turn.SpanID != turnSpan || turn.ParentID != "" || turn.StatusCode == "Error" {
		t.Errorf("turn span %+v", turn)
	}
	for _, name := range []string{"reason", "chat claude-x", "execute_tool echo", "execute_tool guarded"} {
		if by[name].ParentID != turnSpan {
			t.Errorf("span %s has parent %s, want the turn %s", name, by[name].ParentID, turnSpan)
		}
	}

	want := func(s otlptest.Span, attrs map[string]string) {
		t.Helper()
		for k, v := range attrs {
			if s.Attrs[k] != v {
				t.Errorf("span %s: %s = %q, want %q", s.Name, k, s.Attrs[k], v)
			}
		}
	}
	gen := by["chat claude-x"]
	want(gen, map[string]string{
		"gen_ai.operation.name": "chat", "gen_ai.request.model": "claude-x", "gen_ai.response.model": "claude-x-1",
		"gen_ai.provider.name": "anthropic", "gen_ai.response.id": "msg-1", "gen_ai.usage.input_tokens": "120",
		"gen_ai.usage.output_tokens": "34", "gen_ai.response.finish_reasons": "[tool_use]",
	})
	if d := gen.End.Sub(gen.Start); d != 250*time.Millisecond {
		t.Errorf("generation span lasts %v, want 250ms", d)
	}

	echo := by["execute_tool echo"]
	want(echo, map[string]string{
		"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "echo", "gen_ai.tool.call.id": "call-1",
		"yolop.extension": "kit", "yolop.capability": "ext:kit", "yolop.tool.status": yep.ToolOK,
	})
	if echo.Attrs["yolop.tool.duration_ms"] == "" || echo.StatusCode == "Error" {
		t.Errorf("echo span: duration %q, status %s", echo.Attrs["yolop.tool.duration_ms"], echo.StatusCode)
	}
	if strings.Contains(fmt.Sprint(echo.Attrs), `"text"`) {
		t.Errorf("the tool's arguments became an attribute: %v", echo.Attrs)
	}

	guarded := by["execute_tool guarded"]
	want(guarded, map[string]string{
		"gen_ai.tool.name": "guarded", "gen_ai.tool.call.id": "call-2", "yolop.tool.status": yep.ToolBlocked,
		"yolop.tool.is_error": "true", "error.type": yep.ToolBlocked,
	})
	if guarded.StatusCode != "Error" || !strings.Contains(guarded.StatusMessage, "no guarded calls") {
		t.Errorf("blocked tool span: status %s %q", guarded.StatusCode, guarded.StatusMessage)
	}

	var pre, post otlptest.Span
	for _, s := range spans {
		switch {
		case s.Name == "hook "+yep.HookPreToolUse:
			pre = s
		case s.Name == "hook "+yep.HookPostToolUse:
			post = s
		}
	}
	if pre.ParentID != guarded.SpanID || post.ParentID != echo.SpanID {
		t.Errorf("hook spans under %s and %s, want the tool spans %s and %s", pre.ParentID, post.ParentID, guarded.SpanID, echo.SpanID)
	}
	want(pre, map[string]string{
		"yolop.hook.event": yep.HookPreToolUse, "gen_ai.tool.name": "guarded", "yolop.extension": "kit",
		"yolop.capability": "ext:kit", "yolop.hook.decision": yep.DecisionBlock, "yolop.hook.reason": "no guarded calls",
	})
	if pre.StatusCode == "Error" || pre.Attrs["yolop.hook.duration_ms"] == "" {
		t.Errorf("blocking hook span: status %s, duration %q", pre.StatusCode, pre.Attrs["yolop.hook.duration_ms"])
	}
	want(post, map[string]string{
		"yolop.hook.event": yep.HookPostToolUse, "gen_ai.tool.name": "echo", "yolop.hook.decision": "error",
		"yolop.hook.on_error": yep.HookOnErrorWarn, "error.type": "hook_error",
	})
	if post.StatusCode != "Error" || !strings.Contains(post.StatusMessage, "audit log unavailable") {
		t.Errorf("failed hook span: status %s %q", post.StatusCode, post.StatusMessage)
	}
}

// TestFoldApproval: a tool.approval event puts its decision on the tool
// call's span, as attributes and as a span event, so a trace shows who
// let a call run or stopped it.
func TestFoldApproval(t *testing.T) {
	r := otlptest.New()
	defer r.Close()
	tp := newTestPipeline(t, r, "", ExportOptions{})
	const span = "2222222222222222"
	tp.fold.handle(ev(yep.TraceToolStarted, trace1, span, "", "1", yep.ToolStartedData{Tool: "reverse", Extension: "echo", Narration: "Reverse abc"}))
	tp.fold.handle(ev(yep.TraceToolApproval, trace1, span, "", "1", yep.ToolApprovalData{Tool: "reverse", Extension: "echo", Version: "0.1.0",
		Decision: yep.ApprovalDenied, By: yep.ApprovalByUser, Reason: "not now"}))
	tp.fold.handle(ev(yep.TraceToolCompleted, trace1, span, "", "1", yep.ToolCompletedData{Tool: "reverse", Extension: "echo", Status: yep.ToolDenied, IsError: true}))
	if err := tp.shutdown(wait); err != nil {
		t.Fatal(err)
	}
	spans := r.Spans()
	if len(spans) != 1 {
		t.Fatalf("got %d spans, want 1:\n%s", len(spans), otlptest.Tree(spans))
	}
	s := spans[0]
	for k, want := range map[string]string{
		"yolop.approval.decision": "denied", "yolop.approval.by": "user", "yolop.approval.reason": "not now",
		"yolop.extension.version": "0.1.0", "yolop.tool.narration": "Reverse abc", "yolop.tool.status": "denied",
	} {
		if s.Attrs[k] != want {
			t.Errorf("attribute %s = %q, want %q (attrs %v)", k, s.Attrs[k], want, s.Attrs)
		}
	}
}
