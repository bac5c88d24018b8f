package host

import (
	"testing"
	"testing/synctest"
	"time"

	"yolop.dev/core/yep"
)

func due(q *traceQueue) bool {
	select {
	case <-q.wake:
		return true
	default:
		return false
	}
}

// TestTraceQueueBatchesATurn: a turn's events wait for its end, or for the
// linger after the first of them, and go out together.
func TestTraceQueueBatchesATurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newTraceQueue(1024)
		for _, typ := range []string{yep.TraceTurnStarted, yep.TraceToolStarted, yep.TraceToolCompleted} {
			if !q.add(yep.TraceEventParams{Type: typ}) {
				t.Fatalf("%s dropped", typ)
			}
		}
		time.Sleep(traceLinger / 2)
		synctest.Wait()
		if due(q) {
			t.Fatal("a batch went out before its turn ended or its linger passed")
		}
		q.add(yep.TraceEventParams{Type: yep.TraceTurnCompleted})
		if !due(q) {
			t.Fatal("turn.completed did not send the batch")
		}
		evs, closed := q.take(nil)
		if len(evs) != 4 || closed || evs[0].Type != yep.TraceTurnStarted || evs[3].Type != yep.TraceTurnCompleted {
			t.Fatalf("batch = %+v (closed %v), want the turn's four events in order", evs, closed)
		}

		// A long turn: its first events go after the linger, not at its end.
		q.add(yep.TraceEventParams{Type: yep.TraceTurnStarted})
		time.Sleep(traceLinger - time.Millisecond)
		synctest.Wait()
		if due(q) {
			t.Fatal("the linger ended early")
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if !due(q) {
			t.Fatal("an event waited past the linger")
		}
		if evs, _ := q.take(evs); len(evs) != 1 {
			t.Fatalf("batch = %+v, want one event", evs)
		}
		// Taking the batch disarms its linger.
		time.Sleep(2 * traceLinger)
		synctest.Wait()
		if due(q) {
			t.Fatal("an empty queue became due")
		}
	})
}

// TestTraceQueueBoundsAndClose: a full queue drops, a batch of
// traceBatch goes at once, and close hands over what is left.
func TestTraceQueueBoundsAndClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newTraceQueue(traceBatch + 1)
		for i := range traceBatch - 1 {
			q.add(yep.TraceEventParams{Type: yep.TraceLLMGeneration})
			if due(q) {
				t.Fatalf("due after %d events", i+1)
			}
		}
		q.add(yep.TraceEventParams{Type: yep.TraceLLMGeneration})
		if !due(q) {
			t.Fatalf("a batch of %d was not sent at once", traceBatch)
		}
		q.add(yep.TraceEventParams{Type: yep.TraceLLMGeneration})
		if q.add(yep.TraceEventParams{Type: yep.TraceLLMGeneration}) {
			t.Fatal("a full queue took an event")
		}
		q.close()
		if !due(q) {
			t.Fatal("close did not wake the forwarder")
		}
		evs, closed := q.take(nil)
		if !closed || len(evs) != traceBatch+1 {
			t.Fatalf("take after close = %d events, closed %v; want %d, true", len(evs), closed, traceBatch+1)
		}
		if q.add(yep.TraceEventParams{Type: yep.TraceTurnStarted}) {
			t.Fatal("a closed queue took an event")
		}
	})
}
