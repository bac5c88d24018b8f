package logfire

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// A queue is a [sdktrace.SpanProcessor] that batches ended spans for an
// exporter through a bounded channel. OnEnd never blocks: when the channel
// is full the span is dropped and counted.
//
// Why not sdktrace.BatchSpanProcessor? It drops the same way, but keeps the
// count to itself and hands export errors to the global otel error
// handler; the extension needs both, per export, to report a failing
// endpoint as its status and to say how much was lost.
type queue struct {
	export    func(ctx context.Context, batch []sdktrace.ReadOnlySpan) error
	batchSize int
	interval  time.Duration
	onDrop    func(total int64)

	spans    chan sdktrace.ReadOnlySpan
	flushReq chan chan struct{}
	stop     chan struct{}
	done     chan struct{}
	// exportCtx bounds exports; Shutdown cancels it at its deadline so a
	// blackholed endpoint cannot hold the shutdown.
	exportCtx    context.Context
	cancelExport context.CancelFunc

	stopped  atomic.Bool
	stopOnce sync.Once
	dropped  atomic.Int64
	exported atomic.Int64
	failed   atomic.Int64
}

// queueOptions size a queue. Zero values take the defaults in newQueue.
type queueOptions struct {
	// Size bounds the spans waiting for export. Zero means 2048.
	Size int
	// BatchSize is the most spans per export. Zero means 512.
	BatchSize int
	// Interval is how long a partial batch waits. Zero means 1s.
	Interval time.Duration
}

func newQueue(o queueOptions, export func(context.Context, []sdktrace.ReadOnlySpan) error, onDrop func(int64)) *queue {
	if o.Size <= 0 {
		o.Size = 2048
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 512
	}
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	q := &queue{
		export: export, batchSize: o.BatchSize, interval: o.Interval, onDrop: onDrop,
		spans: make(chan sdktrace.ReadOnlySpan, o.Size), flushReq: make(chan chan struct{}),
		stop: make(chan struct{}), done: make(chan struct{}), exportCtx: ctx, cancelExport: cancel,
	}
	go q.run()
	return q
}

// OnStart implements [sdktrace.SpanProcessor].
func (q *queue) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd implements [sdktrace.SpanProcessor]: it queues the span, or drops
// and counts it when the queue is full or shut down.
func (q *queue) OnEnd(s sdktrace.ReadOnlySpan) {
	if !q.stopped.Load() {
		select {
		case q.spans <- s:
			return
		default:
		}
	}
	n := q.dropped.Add(1)
	if q.onDrop != nil {
		q.onDrop(n)
	}
}

// ForceFlush implements [sdktrace.SpanProcessor]: it exports what is
// queued, waiting at most until ctx ends.
func (q *queue) ForceFlush(ctx context.Context) error {
	ack := make(chan struct{})
	select {
	case q.flushReq <- ack:
	case <-q.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ack:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown implements [sdktrace.SpanProcessor]: it stops taking spans,
// exports what is queued, and returns when that is done or ctx ends, in
// which case the export in flight is abandoned.
func (q *queue) Shutdown(ctx context.Context) error {
	q.stopOnce.Do(func() {
		q.stopped.Store(true)
		close(q.stop)
	})
	select {
	case <-q.done:
		return nil
	case <-ctx.Done():
		q.cancelExport()
		<-q.done
		return ctx.Err()
	}
}

// Dropped is how many spans were dropped so far.
func (q *queue) Dropped() int64 { return q.dropped.Load() }

// Exported is how many spans the endpoint accepted so far.
func (q *queue) Exported() int64 { return q.exported.Load() }

// Failed is how many spans were lost in exports that failed after their
// retries.
func (q *queue) Failed() int64 { return q.failed.Load() }

func (q *queue) run() {
	defer close(q.done)
	defer q.cancelExport()
	batch := make([]sdktrace.ReadOnlySpan, 0, q.batchSize)
	tick := time.NewTicker(q.interval)
	defer tick.Stop()
	send := func() {
		if len(batch) == 0 {
			return
		}
		if err := q.export(q.exportCtx, batch); err == nil {
			q.exported.Add(int64(len(batch)))
		} else {
			q.failed.Add(int64(len(batch)))
		}
		clear(batch)
		batch = batch[:0]
	}
	drain := func() {
		for {
			select {
			case s := <-q.spans:
				batch = append(batch, s)
				if len(batch) == q.batchSize {
					send()
				}
			default:
				send()
				return
			}
		}
	}
	for {
		select {
		case s := <-q.spans:
			batch = append(batch, s)
			if len(batch) == q.batchSize {
				send()
			}
		case <-tick.C:
			send()
		case ack := <-q.flushReq:
			drain()
			close(ack)
		case <-q.stop:
			drain()
			return
		}
	}
}
