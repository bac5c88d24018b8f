package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"yolop.dev/core/yep"
)

// Trace queues a trace event for a trace-declaring extension. It never
// blocks: when the queue is full the event is dropped and counted.
func (e *Extension) Trace(ev yep.TraceEventParams) {
	if e.traceQ == nil {
		return
	}
	c := e.current()
	if c == nil || !c.trace {
		return
	}
	ev.Data = e.scrubJSON(ev.Data)
	e.traceMu.RLock()
	defer e.traceMu.RUnlock()
	if e.traceClosed {
		return
	}
	select {
	case e.traceQ <- ev:
	default:
		e.stats.add(func(c *counters) { c.traceDropped++ })
	}
}

func (e *Extension) forwardTraces() {
	defer close(e.traceDone)
	for ev := range e.traceQ {
		e.mu.Lock()
		p := e.proc
		e.mu.Unlock()
		if p == nil || !p.contrib.trace {
			e.stats.add(func(c *counters) { c.traceDropped++ })
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if err := p.conn.Notify(ctx, yep.MethodTraceEvent, ev); err != nil {
			e.stats.add(func(c *counters) { c.traceDropped++ })
		}
		cancel()
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
}
