package sdk

import (
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// maxQueuedEvents bounds the trace/event and workspace/changed callbacks
// waiting to run; beyond it trace events, which are observe-only, are
// dropped with a warning.
const maxQueuedEvents = 4096

// eventQueue runs notification callbacks (trace/event, workspace/changed)
// in arrival order on one goroutine, so the connection's reader never
// waits for them.
type eventQueue struct {
	log  hclog.Logger
	max  int
	wake chan struct{}
	done chan struct{}

	mu      sync.Mutex
	q       []func()
	closed  bool
	dropped int
}

func newEventQueue(log hclog.Logger, max int) *eventQueue {
	e := &eventQueue{log: log, max: max, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go e.run()
	return e
}

// push queues f. A droppable callback is dropped when the queue is full;
// others are always queued.
func (e *eventQueue) push(droppable bool, f func()) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	if droppable && len(e.q) >= e.max {
		e.dropped++
		n := e.dropped
		e.mu.Unlock()
		if n == 1 || n%1000 == 0 {
			e.log.Warn("OnTrace is too slow: dropping trace events", "dropped", n, "queued", e.max)
		}
		return
	}
	e.q = append(e.q, f)
	e.mu.Unlock()
	e.signal()
}

// close runs what is still queued and stops the goroutine.
func (e *eventQueue) close() {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	e.closed = true
	e.mu.Unlock()
	e.signal()
	<-e.done
}

// signal wakes the goroutine, unless a wake-up is already pending.
func (e *eventQueue) signal() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

func (e *eventQueue) run() {
	defer close(e.done)
	for range e.wake {
		for {
			e.mu.Lock()
			batch, closed := e.q, e.closed
			e.q = nil
			e.mu.Unlock()
			if len(batch) == 0 {
				if closed {
					return
				}
				break
			}
			for _, f := range batch {
				e.call(f)
			}
		}
	}
}

func (e *eventQueue) call(f func()) {
	defer func() {
		if p := recover(); p != nil {
			e.log.Error("event callback panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		}
	}()
	f()
}
