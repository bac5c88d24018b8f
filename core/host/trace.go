package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/yep"
)

// Trace queues a trace event for a trace-declaring extension. It never
// blocks: when the queue is full the event is dropped and counted.
//
// Events are sent in batches, one write each: a batch goes when a turn or
// the session ends, when it fills, or traceLinger after its first event,
// whichever comes first. A turn's events then cost its consumer one
// wake-up after the turn instead of one per event during it, when the
// consumer's work would share the CPU with the turn's own tool calls.
func (e *Extension) Trace(ev yep.TraceEventParams) {
	if e.traces == nil {
		return
	}
	c := e.current()
	if c == nil || !c.trace {
		return
	}
	ev.Data = e.scrubJSON(ev.Data)
	if !e.traces.add(ev) {
		e.stats.add(func(c *counters) { c.traceDropped++ })
	}
}

// traceLinger is the longest a trace event waits for the rest of its batch.
const traceLinger = 20 * time.Millisecond

// traceBatch is how many events make a batch that goes at once.
const traceBatch = 64

// A traceQueue holds the trace events not yet sent to one extension.
type traceQueue struct {
	max  int           // queued events at most; more are dropped
	wake chan struct{} // one slot: a batch is due or the queue closed
	done chan struct{} // closed when the forwarder has returned

	mu     sync.Mutex
	events []yep.TraceEventParams
	timer  *time.Timer // the linger of the oldest queued event
	armed  bool
	closed bool
}

func newTraceQueue(max int) *traceQueue {
	q := &traceQueue{max: max, wake: make(chan struct{}, 1), done: make(chan struct{})}
	q.timer = time.AfterFunc(time.Hour, q.signal)
	q.timer.Stop()
	return q
}

// add queues ev, reporting false if it was dropped (full or closed).
func (q *traceQueue) add(ev yep.TraceEventParams) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || len(q.events) >= q.max {
		return false
	}
	q.events = append(q.events, ev)
	switch {
	case endsBatch(ev.Type) || len(q.events) >= traceBatch:
		q.signal()
	case !q.armed:
		q.armed = true
		q.timer.Reset(traceLinger)
	}
	return true
}

// endsBatch reports whether an event of type t closes a batch: the end of
// a turn or of the session, after which nothing follows soon.
func endsBatch(t string) bool {
	return t == yep.TraceTurnCompleted || t == yep.TraceSessionCompleted
}

func (q *traceQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// close stops taking events; the forwarder sends what is queued and
// returns.
func (q *traceQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

// take swaps the queued events for spare (emptied), reporting whether the
// queue is closed.
func (q *traceQueue) take(spare []yep.TraceEventParams) ([]yep.TraceEventParams, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	evs := q.events
	q.events = spare[:0]
	if q.armed {
		q.armed = false
		q.timer.Stop()
	}
	return evs, q.closed
}

func (e *Extension) forwardTraces() {
	q := e.traces
	defer close(q.done)
	var spare []yep.TraceEventParams
	for {
		<-q.wake
		evs, closed := q.take(spare)
		if len(evs) > 0 {
			e.sendTraces(evs)
		}
		clear(evs) // drop the events' data
		spare = evs
		if closed {
			return
		}
	}
}

// sendTraces writes one batch to the running server, counting the events
// as dropped if there is none or the write fails.
func (e *Extension) sendTraces(evs []yep.TraceEventParams) {
	e.mu.Lock()
	p := e.proc
	e.mu.Unlock()
	if p == nil || !p.contrib.trace {
		e.stats.add(func(c *counters) { c.traceDropped += int64(len(evs)) })
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := jsonrpc.NotifyEach(ctx, p.conn, yep.MethodTraceEvent, evs); err != nil {
		e.stats.add(func(c *counters) { c.traceDropped += int64(len(evs)) })
	}
}

// The host's spans. Every turn is a trace with a root span, and every tool
// call a span in it (a call outside a turn gets a trace of its own). Their
// W3C ids go into the trace events (trace_id, span_id, parent_id) and, as
// a traceparent, into the tool/call and hook/fire requests, so a trace
// consumer can export the host's spans under those ids and a server's own
// spans become their children in the same trace.

// NewTraceID returns a random W3C trace id: 32 lowercase hex digits, never
// all zero. An agent loop above the host uses it with [NewSpanID] for the
// events it traces itself.
func NewTraceID() string { return randomHex(16) }

// NewSpanID returns a random W3C span id: 16 lowercase hex digits, never
// all zero.
func NewSpanID() string { return randomHex(8) }

func randomHex(n int) string {
	b := make([]byte, n)
	for {
		rand.Read(b) // never fails (crypto/rand since Go 1.24)
		for _, c := range b {
			if c != 0 {
				return hex.EncodeToString(b)
			}
		}
	}
}

// TraceParent formats a W3C traceparent (version 00) for a span; sampled
// sets the flag that says the span is being recorded.
func TraceParent(traceID, spanID string, sampled bool) string {
	flags := "00"
	if sampled {
		flags = "01"
	}
	return "00-" + traceID + "-" + spanID + "-" + flags
}

// turnSpan is the trace context of the turn in progress.
type turnSpan struct {
	traceID, spanID string
	start           time.Time
}

// fireHook fires one hook subscription of a tool call. When anything
// reads the session's events, a hook.fired event follows the answer: a
// span of its own, child of the call's tool span, with the hook's event,
// extension, decision ("error" when the hook failed) and duration.
func (s *Session) fireHook(ctx context.Context, h hookTarget, tool toolSpan, turn int, p yep.HookFireParams) (yep.HookFireResult, error) {
	if !tool.observed {
		res, err := h.cap.FireHook(ctx, h.sub, p)
		s.hooks.fired(h, err)
		return res, err
	}
	start := time.Now()
	res, err := h.cap.FireHook(ctx, h.sub, p)
	s.hooks.fired(h, err)
	data := yep.HookFiredData{Event: p.Event, Tool: p.ToolName, Capability: h.cap.Name(), Decision: res.Decision, Reason: res.Reason,
		DurationMS: float64(time.Since(start).Microseconds()) / 1000}
	if e, ok := h.cap.(*Extension); ok {
		data.Extension = e.ExtName()
	}
	if err != nil {
		data.Decision, data.Error, data.OnError = "error", err.Error(), h.sub.OnError
	}
	ev := Event{Type: yep.TraceHookFired, TraceID: tool.turn.traceID, SpanID: NewSpanID(), ParentID: tool.spanID, Data: data}
	if tool.turn.spanID != "" {
		ev.TurnID = fmt.Sprint(turn)
	}
	s.Emit(ev)
	return res, err
}
