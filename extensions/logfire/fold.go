package logfire

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
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
	data := eventData(ev)
	kind, phase := split(ev.Type)
	if info, known := yep.EventFor(ev.Type); known && !info.Forward {
		// A session event the host keeps from trace/event (such as
		// extension.started), when the fold reads a session's own stream:
		// no span's start or end.
		phase = ""
	}
	switch {
	case ev.Type == yep.TraceSessionCompleted:
		f.endAll(at, "the session ended")
	case kind == "session":
	case ev.Type == yep.TraceLLMGeneration:
		d, _ := data.(yep.LLMGenerationData)
		f.generation(ev, d, at)
	case ev.Type == yep.TraceHookFired:
		d, _ := data.(yep.HookFiredData)
		f.hook(ev, d, at)
	case ev.Type == yep.TraceToolApproval:
		d, _ := data.(yep.ToolApprovalData)
		f.approval(ev, d, at)
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

// eventData is an event's data decoded into its type's payload (a value
// such as yep.ToolCompletedData, the zero one when the data does not fit
// it), or nil when the event carries none. The data of a type this
// version does not define is read as yep.PhaseData, the shape every
// *.started/*.completed pair shares (a duration, an error), when it fits.
func eventData(ev yep.TraceEventParams) any {
	d, err := yep.DecodeEventData(ev.Type, ev.Data)
	if err != nil {
		info, _ := yep.EventFor(ev.Type)
		return reflect.Zero(info.Data).Interface()
	}
	raw, untyped := d.(json.RawMessage)
	if !untyped {
		return d
	}
	var p yep.PhaseData
	if json.Unmarshal(raw, &p) != nil {
		return nil // not an object, or not a phase's: nothing to map
	}
	return p
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

func (f *folder) start(ev yep.TraceEventParams, kind string, data any, at time.Time) {
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

func (f *folder) complete(ev yep.TraceEventParams, kind string, data any, at time.Time) {
	o := f.open[f.pairKey(ev, kind, false)]
	if o == nil {
		// Its start was lost (dropped on a full queue, or sent before this
		// server ran): rebuild the span from the duration the completion
		// carries, if it does.
		ms := outcomeOf(data).durationMS
		if ms <= 0 {
			f.unpairedCompletions++
			return
		}
		name, spanKind, attrs := f.describe(kind, ev, data)
		start := at.Add(-time.Duration(ms * float64(time.Millisecond)))
		_, span := f.tracer.Start(f.parent(ev, kind), name, trace.WithTimestamp(start), trace.WithSpanKind(spanKind), trace.WithAttributes(attrs...))
		o = &openSpan{span: span, kind: kind}
	}
	f.finish(o, data)
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

// describe names a started span and gives its first attributes. A tool
// span takes them from its tool.started, or from its tool.completed when
// the start was lost.
func (f *folder) describe(kind string, ev yep.TraceEventParams, data any) (string, trace.SpanKind, []attribute.KeyValue) {
	attrs := []attribute.KeyValue{attribute.String("session.id", f.session)}
	if ev.TurnID != "" {
		attrs = append(attrs, attribute.String("yolop.turn.id", ev.TurnID))
	}
	if kind == "tool" {
		var tool, callID, ext, capability, narration string
		switch d := data.(type) {
		case yep.ToolStartedData:
			tool, callID, ext, capability, narration = d.Tool, d.ToolCallID, d.Extension, d.Capability, d.Narration
		case yep.ToolCompletedData:
			tool, callID, ext, capability = d.Tool, d.ToolCallID, d.Extension, d.Capability
		}
		attrs = append(attrs,
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", tool),
		)
		attrs = appendStr(attrs, "gen_ai.tool.call.id", callID)
		attrs = appendStr(attrs, "yolop.extension", ext)
		attrs = appendStr(attrs, "yolop.capability", capability)
		attrs = appendStr(attrs, "yolop.tool.narration", narration)
		return "execute_tool " + tool, trace.SpanKindClient, attrs
	}
	// turn, reason, act, and any *.started this version does not know.
	return kind, trace.SpanKindInternal, attrs
}

// An outcome is what a completion says of its span.
type outcome struct {
	durationMS float64 // 0: not given
	err        string
	isError    bool
	status     string
}

// outcomeOf reads a completion's payload: a tool call's, or a phase's
// (turn, reason, act, and the pairs this version does not define).
func outcomeOf(data any) outcome {
	switch d := data.(type) {
	case yep.ToolCompletedData:
		return outcome{durationMS: d.DurationMS, err: d.Error, isError: d.IsError, status: d.Status}
	case yep.PhaseData:
		return outcome{durationMS: d.DurationMS, err: d.Error}
	}
	return outcome{}
}

// finish adds what a completion says: status, duration, error.
func (f *folder) finish(o *openSpan, data any) {
	if d, ok := data.(yep.ToolCompletedData); ok {
		var attrs []attribute.KeyValue
		attrs = appendStr(attrs, "yolop.extension", d.Extension)
		attrs = appendStr(attrs, "yolop.tool.status", d.Status)
		attrs = append(attrs, attribute.Float64("yolop.tool.duration_ms", d.DurationMS))
		if d.IsError {
			attrs = append(attrs, attribute.Bool("yolop.tool.is_error", true))
		}
		o.span.SetAttributes(attrs...)
	}
	out := outcomeOf(data)
	switch {
	case out.err != "":
		o.span.SetAttributes(attribute.String("error.type", out.errorType()))
		o.span.SetStatus(codes.Error, out.err)
	case out.isError:
		o.span.SetAttributes(attribute.String("error.type", out.errorType()))
		o.span.SetStatus(codes.Error, "the tool returned an error result")
	}
}

func (out outcome) errorType() string {
	if out.status != "" && out.status != yep.ToolOK {
		return out.status
	}
	return "error"
}

// generation is one llm.generation event: a span ending at the event's
// time, starting duration_ms before it, with the GenAI semantic-convention
// attributes the event carries.
func (f *folder) generation(ev yep.TraceEventParams, d yep.LLMGenerationData, at time.Time) {
	start := at
	if d.DurationMS > 0 {
		start = at.Add(-time.Duration(d.DurationMS * float64(time.Millisecond)))
	}
	op := first(d.Operation, "chat")
	name := op
	if d.Model != "" {
		name += " " + d.Model
	}
	attrs := []attribute.KeyValue{attribute.String("session.id", f.session), attribute.String("gen_ai.operation.name", op)}
	if ev.TurnID != "" {
		attrs = append(attrs, attribute.String("yolop.turn.id", ev.TurnID))
	}
	attrs = appendStr(attrs, "gen_ai.request.model", d.Model)
	attrs = appendStr(attrs, "gen_ai.response.model", d.ResponseModel)
	attrs = appendStr(attrs, "gen_ai.provider.name", d.Provider)
	attrs = appendStr(attrs, "gen_ai.response.id", d.ResponseID)
	if d.InputTokens != 0 {
		attrs = append(attrs, attribute.Int64("gen_ai.usage.input_tokens", d.InputTokens))
	}
	if d.CachedInputTokens != 0 {
		// Part of gen_ai.usage.input_tokens, as the convention counts it.
		attrs = append(attrs, attribute.Int64("gen_ai.usage.cache_read.input_tokens", d.CachedInputTokens))
	}
	if d.OutputTokens != 0 {
		attrs = append(attrs, attribute.Int64("gen_ai.usage.output_tokens", d.OutputTokens))
	}
	if len(d.FinishReasons) > 0 {
		attrs = append(attrs, attribute.StringSlice("gen_ai.response.finish_reasons", d.FinishReasons))
	}
	ctx := f.parent(ev, "llm")
	_, span := f.tracer.Start(ctx, name, trace.WithTimestamp(start), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	if d.Error != "" {
		span.SetAttributes(attribute.String("error.type", "error"))
		span.SetStatus(codes.Error, d.Error)
	}
	span.End(trace.WithTimestamp(at))
}

// hook is one hook.fired event: a span "hook <event>" under the tool
// call's span, ending at the event and starting duration_ms before it,
// with the hook's decision.
func (f *folder) hook(ev yep.TraceEventParams, d yep.HookFiredData, at time.Time) {
	start := at
	if d.DurationMS > 0 {
		start = at.Add(-time.Duration(d.DurationMS * float64(time.Millisecond)))
	}
	event := first(d.Event, "hook")
	attrs := []attribute.KeyValue{attribute.String("session.id", f.session), attribute.String("yolop.hook.event", event)}
	if ev.TurnID != "" {
		attrs = append(attrs, attribute.String("yolop.turn.id", ev.TurnID))
	}
	attrs = appendStr(attrs, "gen_ai.tool.name", d.Tool)
	attrs = appendStr(attrs, "yolop.extension", d.Extension)
	attrs = appendStr(attrs, "yolop.capability", d.Capability)
	attrs = appendStr(attrs, "yolop.hook.decision", d.Decision)
	attrs = appendStr(attrs, "yolop.hook.reason", d.Reason)
	attrs = appendStr(attrs, "yolop.hook.on_error", d.OnError)
	attrs = append(attrs, attribute.Float64("yolop.hook.duration_ms", d.DurationMS))
	_, span := f.tracer.Start(f.parent(ev, "hook"), "hook "+event, trace.WithTimestamp(start), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	if d.Error != "" {
		span.SetAttributes(attribute.String("error.type", "hook_error"))
		span.SetStatus(codes.Error, d.Error)
	}
	span.End(trace.WithTimestamp(at))
}

// approval is one tool.approval event: the decision on the tool call's
// span (yolop.approval.* attributes) and a span event "tool.approval" at
// the moment it was made; on the turn's span when the call's span is not
// open.
func (f *folder) approval(ev yep.TraceEventParams, d yep.ToolApprovalData, at time.Time) {
	var attrs []attribute.KeyValue
	attrs = appendStr(attrs, "yolop.approval.decision", d.Decision)
	attrs = appendStr(attrs, "yolop.approval.by", d.By)
	attrs = appendStr(attrs, "yolop.approval.reason", d.Reason)
	attrs = appendStr(attrs, "yolop.extension.version", d.Version)
	if o := f.byID[ev.SpanID]; o != nil && ev.SpanID != "" {
		o.span.SetAttributes(attrs...)
		o.span.AddEvent(ev.Type, trace.WithTimestamp(at), trace.WithAttributes(attrs...))
		return
	}
	attrs = appendStr(attrs, "gen_ai.tool.name", d.Tool)
	attrs = appendStr(attrs, "yolop.extension", d.Extension)
	if t := f.turns[ev.TurnID]; t != nil {
		t.span.AddEvent(ev.Type, trace.WithTimestamp(at), trace.WithAttributes(attrs...))
	}
}

// appendStr adds the attribute key=s, unless s is empty.
func appendStr(attrs []attribute.KeyValue, key, s string) []attribute.KeyValue {
	if s != "" {
		return append(attrs, attribute.String(key, s))
	}
	return attrs
}
