package logfire

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"yolop.dev/core/yep"
)

// A folder turns trace events into spans: a *.started event starts a span
// and the *.completed (or *.ended) event with the same span_id ends it;
// llm.generation is a span of its own. Its methods are called from one
// goroutine at a time (the SDK's event goroutine, then shutdown).
type folder struct {
	tracer  trace.Tracer
	session string
	now     func() time.Time

	open  map[string]*openSpan // by pairing key
	byID  map[string]*openSpan // by the event's span_id, for parent references
	turns map[string]*openSpan // open turn spans by turn_id
	anon  map[string][]string  // pairing keys of events without a span_id, per type and turn

	unpairedCompletions int
}

type openSpan struct {
	span   trace.Span
	kind   string // the event type's prefix: turn, tool, reason, …
	key    string
	id     string // the event's span_id, if any
	turnID string
	ctx    context.Context // carries the span, for children
}

func newFolder(tracer trace.Tracer) *folder {
	return &folder{tracer: tracer, now: time.Now, open: map[string]*openSpan{}, byID: map[string]*openSpan{},
		turns: map[string]*openSpan{}, anon: map[string][]string{}}
}

// split cuts "tool.started" into "tool" and "started".
func split(typ string) (kind, phase string) {
	i := strings.LastIndexByte(typ, '.')
	if i < 0 {
		return typ, ""
	}
	return typ[:i], typ[i+1:]
}

func (f *folder) handle(ev yep.TraceEventParams) {
	if ev.SessionID != "" {
		f.session = ev.SessionID
	}
	at := f.now()
	if ev.Timestamp != "" {
		if t, err := time.Parse(time.RFC3339Nano, ev.Timestamp); err == nil {
			at = t
		}
	}
	var data map[string]any
	if len(ev.Data) > 0 {
		_ = json.Unmarshal(ev.Data, &data) // a non-object data carries nothing to map
	}
	kind, phase := split(ev.Type)
	switch {
	case ev.Type == yep.TraceSessionCompleted:
		f.endAll(at, "the session ended")
	case kind == "session":
	case ev.Type == yep.TraceLLMGeneration:
		f.generation(ev, data, at)
	case ev.Type == yep.TraceHookFired:
		f.hook(ev, data, at)
	case phase == "started":
		f.start(ev, kind, data, at)
	case phase == "completed" || phase == "ended":
		f.complete(ev, kind, data, at)
	default:
		// An event this version does not pair: a span event on its turn.
		if t := f.turns[ev.TurnID]; t != nil {
			t.span.AddEvent(ev.Type, trace.WithTimestamp(at))
		}
	}
}

// pairKey is what a *.started and its *.completed share: the span_id, or
// for events without one, a stack per type and turn.
func (f *folder) pairKey(ev yep.TraceEventParams, kind string, starting bool) string {
	if ev.SpanID != "" {
		return ev.SpanID
	}
	if kind == "turn" {
		return "turn\x00" + ev.TurnID
	}
	stack := kind + "\x00" + ev.TurnID
	if starting {
		key := fmt.Sprintf("%s\x00%d", stack, len(f.anon[stack]))
		f.anon[stack] = append(f.anon[stack], key)
		return key
	}
	keys := f.anon[stack]
	if len(keys) == 0 {
		return ""
	}
	f.anon[stack] = keys[:len(keys)-1]
	return keys[len(keys)-1]
}

// parent returns the context a new span of ev starts from: its parent
// (an open span, or a remote one named by parent_id) and the ids it takes.
func (f *folder) parent(ev yep.TraceEventParams, kind string) context.Context {
	ctx := context.Background()
	var parentSC trace.SpanContext
	if ev.ParentID != "" {
		if p := f.byID[ev.ParentID]; p != nil {
			ctx = p.ctx
			parentSC = p.span.SpanContext()
		} else {
			sid, ok := parseSpanID(ev.ParentID)
			if !ok {
				sid = derivedSpanID(f.session, ev.ParentID)
			}
			parentSC = trace.NewSpanContext(trace.SpanContextConfig{TraceID: f.traceID(ev, trace.SpanContext{}), SpanID: sid, TraceFlags: trace.FlagsSampled})
			ctx = trace.ContextWithRemoteSpanContext(ctx, parentSC)
		}
	} else if kind != "turn" {
		if t := f.turns[ev.TurnID]; t != nil {
			ctx = t.ctx
			parentSC = t.span.SpanContext()
		}
	}
	sid, ok := parseSpanID(ev.SpanID)
	if !ok {
		if ev.SpanID != "" {
			sid = derivedSpanID(f.session, ev.SpanID)
		} else {
			sid = randomSpanID()
		}
	}
	return withIDs(ctx, f.traceID(ev, parentSC), sid)
}

// traceID is the event's trace: its trace_id, its parent's, or one derived
// from its turn (or the session, outside a turn).
func (f *folder) traceID(ev yep.TraceEventParams, parent trace.SpanContext) trace.TraceID {
	if tid, ok := parseTraceID(ev.TraceID); ok {
		return tid
	}
	if parent.IsValid() {
		return parent.TraceID()
	}
	return derivedTraceID(f.session, ev.TurnID)
}

func (f *folder) start(ev yep.TraceEventParams, kind string, data map[string]any, at time.Time) {
	key := f.pairKey(ev, kind, true)
	if old := f.open[key]; old != nil {
		f.end(old, at, "a second "+ev.Type+" arrived for the same span")
	}
	ctx := f.parent(ev, kind)
	name, spanKind, attrs := f.describe(kind, ev, data)
	ctx, span := f.tracer.Start(ctx, name, trace.WithTimestamp(at), trace.WithSpanKind(spanKind), trace.WithAttributes(attrs...))
	o := &openSpan{span: span, kind: kind, key: key, id: ev.SpanID, turnID: ev.TurnID, ctx: ctx}
	f.open[key] = o
	if ev.SpanID != "" {
		f.byID[ev.SpanID] = o
	}
	if kind == "turn" {
		f.turns[ev.TurnID] = o
	}
}

func (f *folder) complete(ev yep.TraceEventParams, kind string, data map[string]any, at time.Time) {
	o := f.open[f.pairKey(ev, kind, false)]
	if o == nil {
		// Its start was lost (dropped on a full queue, or sent before this
		// server ran): rebuild the span from the duration the completion
		// carries, if it does.
		ms, ok := data["duration_ms"].(float64)
		if !ok {
			f.unpairedCompletions++
			return
		}
		name, spanKind, attrs := f.describe(kind, ev, data)
		start := at.Add(-time.Duration(ms * float64(time.Millisecond)))
		_, span := f.tracer.Start(f.parent(ev, kind), name, trace.WithTimestamp(start), trace.WithSpanKind(spanKind), trace.WithAttributes(attrs...))
		o = &openSpan{span: span, kind: kind}
	}
	f.finish(o, kind, data)
	o.span.End(trace.WithTimestamp(at))
	f.forget(o)
}

func (f *folder) forget(o *openSpan) {
	delete(f.open, o.key)
	if o.id != "" && f.byID[o.id] == o {
		delete(f.byID, o.id)
	}
	if o.kind == "turn" && f.turns[o.turnID] == o {
		delete(f.turns, o.turnID)
	}
}

// end ends an unpaired span with an error status.
func (f *folder) end(o *openSpan, at time.Time, why string) {
	o.span.SetAttributes(attribute.Bool("yolop.unpaired", true))
	o.span.SetStatus(codes.Error, fmt.Sprintf("%s.started was never completed: %s", o.kind, why))
	o.span.End(trace.WithTimestamp(at))
	f.forget(o)
}

// endAll ends every open span, children before their parents.
func (f *folder) endAll(at time.Time, why string) {
	var turns, others []*openSpan
	for _, o := range f.open {
		if o.kind == "turn" {
			turns = append(turns, o)
		} else {
			others = append(others, o)
		}
	}
	for _, o := range append(others, turns...) {
		f.end(o, at, why)
	}
	clear(f.anon)
}

// describe names a started span and gives its first attributes.
func (f *folder) describe(kind string, ev yep.TraceEventParams, data map[string]any) (string, trace.SpanKind, []attribute.KeyValue) {
	attrs := []attribute.KeyValue{attribute.String("session.id", f.session)}
	if ev.TurnID != "" {
		attrs = append(attrs, attribute.String("yolop.turn.id", ev.TurnID))
	}
	switch kind {
	case "tool":
		tool := str(data, "tool")
		attrs = append(attrs,
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", tool),
		)
		attrs = appendStr(attrs, "gen_ai.tool.call.id", data, "tool_call_id")
		attrs = appendStr(attrs, "yolop.extension", data, "extension")
		attrs = appendStr(attrs, "yolop.capability", data, "capability")
		return "execute_tool " + tool, trace.SpanKindClient, attrs
	}
	// turn, reason, act, and any *.started this version does not know.
	return kind, trace.SpanKindInternal, attrs
}

// finish adds what a completion says: status, duration, error.
func (f *folder) finish(o *openSpan, kind string, data map[string]any) {
	if kind == "tool" {
		var attrs []attribute.KeyValue
		attrs = appendStr(attrs, "yolop.extension", data, "extension")
		attrs = appendStr(attrs, "yolop.tool.status", data, "status")
		if ms, ok := data["duration_ms"].(float64); ok {
			attrs = append(attrs, attribute.Float64("yolop.tool.duration_ms", ms))
		}
		if isErr, _ := data["is_error"].(bool); isErr {
			attrs = append(attrs, attribute.Bool("yolop.tool.is_error", true))
		}
		o.span.SetAttributes(attrs...)
	}
	msg := str(data, "error")
	isErr, _ := data["is_error"].(bool)
	switch {
	case msg != "":
		o.span.SetAttributes(attribute.String("error.type", errorType(data)))
		o.span.SetStatus(codes.Error, msg)
	case isErr:
		o.span.SetAttributes(attribute.String("error.type", errorType(data)))
		o.span.SetStatus(codes.Error, "the tool returned an error result")
	}
}

func errorType(data map[string]any) string {
	if s := str(data, "status"); s != "" && s != "ok" {
		return s
	}
	return "error"
}

// generation is one llm.generation event: a span ending at the event's
// time, starting duration_ms before it, with the GenAI semantic-convention
// attributes the event carries.
func (f *folder) generation(ev yep.TraceEventParams, data map[string]any, at time.Time) {
	start := at
	if ms, ok := data["duration_ms"].(float64); ok && ms > 0 {
		start = at.Add(-time.Duration(ms * float64(time.Millisecond)))
	}
	op := first(str(data, "operation"), "chat")
	model := str(data, "model")
	name := op
	if model != "" {
		name += " " + model
	}
	attrs := []attribute.KeyValue{attribute.String("session.id", f.session), attribute.String("gen_ai.operation.name", op)}
	if ev.TurnID != "" {
		attrs = append(attrs, attribute.String("yolop.turn.id", ev.TurnID))
	}
	attrs = appendStr(attrs, "gen_ai.request.model", data, "model")
	attrs = appendStr(attrs, "gen_ai.response.model", data, "response_model")
	attrs = appendStr(attrs, "gen_ai.provider.name", data, "provider")
	attrs = appendStr(attrs, "gen_ai.response.id", data, "response_id")
	for k, key := range map[string]string{"input_tokens": "gen_ai.usage.input_tokens", "output_tokens": "gen_ai.usage.output_tokens"} {
		if n, ok := data[k].(float64); ok {
			attrs = append(attrs, attribute.Int64(key, int64(n)))
		}
	}
	if rs, ok := data["finish_reasons"].([]any); ok {
		var reasons []string
		for _, r := range rs {
			if s, ok := r.(string); ok {
				reasons = append(reasons, s)
			}
		}
		attrs = append(attrs, attribute.StringSlice("gen_ai.response.finish_reasons", reasons))
	}
	ctx := f.parent(ev, "llm")
	_, span := f.tracer.Start(ctx, name, trace.WithTimestamp(start), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	if msg := str(data, "error"); msg != "" {
		span.SetAttributes(attribute.String("error.type", "error"))
		span.SetStatus(codes.Error, msg)
	}
	span.End(trace.WithTimestamp(at))
}

// hook is one hook.fired event: a span "hook <event>" under the tool
// call's span, ending at the event and starting duration_ms before it,
// with the hook's decision.
func (f *folder) hook(ev yep.TraceEventParams, data map[string]any, at time.Time) {
	start := at
	if ms, ok := data["duration_ms"].(float64); ok && ms > 0 {
		start = at.Add(-time.Duration(ms * float64(time.Millisecond)))
	}
	event := first(str(data, "event"), "hook")
	attrs := []attribute.KeyValue{attribute.String("session.id", f.session), attribute.String("yolop.hook.event", event)}
	if ev.TurnID != "" {
		attrs = append(attrs, attribute.String("yolop.turn.id", ev.TurnID))
	}
	attrs = appendStr(attrs, "gen_ai.tool.name", data, "tool")
	attrs = appendStr(attrs, "yolop.extension", data, "extension")
	attrs = appendStr(attrs, "yolop.capability", data, "capability")
	attrs = appendStr(attrs, "yolop.hook.decision", data, "decision")
	attrs = appendStr(attrs, "yolop.hook.reason", data, "reason")
	attrs = appendStr(attrs, "yolop.hook.on_error", data, "on_error")
	if ms, ok := data["duration_ms"].(float64); ok {
		attrs = append(attrs, attribute.Float64("yolop.hook.duration_ms", ms))
	}
	_, span := f.tracer.Start(f.parent(ev, "hook"), "hook "+event, trace.WithTimestamp(start), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	if msg := str(data, "error"); msg != "" {
		span.SetAttributes(attribute.String("error.type", "hook_error"))
		span.SetStatus(codes.Error, msg)
	}
	span.End(trace.WithTimestamp(at))
}

func str(data map[string]any, k string) string {
	s, _ := data[k].(string)
	return s
}

func appendStr(attrs []attribute.KeyValue, key string, data map[string]any, k string) []attribute.KeyValue {
	if s := str(data, k); s != "" {
		return append(attrs, attribute.String(key, s))
	}
	return attrs
}
