package host

import (
	"context"
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
