package jsonrpc

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"yolop.dev/core/internal/testdeadline"
	"yolop.dev/core/yep"
)

// A request cancelled while it waits for a handler slot never runs and is
// answered with the cancelled error, never with a null result.
func TestCancelWhileQueuedAnswersCancelled(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	send, recv, _ := raw(t, Options{
		MaxConcurrentHandlers: 1,
		Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			if req.Method == "block" {
				started <- struct{}{}
				<-release
			}
			return "ran", nil
		}),
	})
	send(`{"jsonrpc":"2.0","id":1,"method":"block"}`)
	<-started
	send(`{"jsonrpc":"2.0","id":2,"method":"queued"}`)
	send(`{"jsonrpc":"2.0","id":3,"method":"cancel","params":{"id":2}}`)
	got := map[string]string{}
	for range 2 {
		m := recv()
		got[fmt.Sprint(m["id"])] = fmt.Sprint(m["result"], m["error"])
	}
	close(release)
	m := recv()
	got[fmt.Sprint(m["id"])] = fmt.Sprint(m["result"], m["error"])
	if !strings.Contains(got["2"], fmt.Sprint(yep.CodeCancelled)) {
		t.Errorf("queued request answered %q, want the cancelled error", got["2"])
	}
	if got["3"] != "map[cancelled:true] <nil>" || got["1"] != "ran<nil>" {
		t.Errorf("answers = %v", got)
	}
}

// Workers are reused across requests, and at most MaxConcurrentHandlers
// of them stay idle; Close ends them all (the leak check would fail).
func TestWorkersAreReusedAndBounded(t *testing.T) {
	c, s := pair(t, Options{}, Options{
		MaxConcurrentHandlers: 4,
		Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			return "ok", nil
		}),
	})
	ctx := context.Background()
	if err := c.Call(ctx, "m", nil, nil); err != nil {
		t.Fatal(err)
	}
	first := runtime.NumGoroutine()
	for range 50 {
		if err := c.Call(ctx, "m", nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Sequential calls reuse the goroutines there are: the reader runs a
	// short request itself, or a worker answers and goes idle; none is
	// started per call.
	for deadline := time.Now().Add(testdeadline.Left(t)); ; time.Sleep(time.Millisecond) {
		n, now := idleWorkers(s), runtime.NumGoroutine()
		if n <= 4 && now <= first+4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 50 sequential calls: %d idle workers (want at most 4), goroutines %d → %d", n, first, now)
		}
	}
	before := runtime.NumGoroutine()
	errs := make(chan error, 32)
	for range 32 {
		go func() { errs <- c.Call(ctx, "m", nil, nil) }()
	}
	for range 32 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// Surplus workers exit once their request is answered; wait for it.
	deadline := time.Now().Add(testdeadline.Left(t))
	for {
		n, after := idleWorkers(s), runtime.NumGoroutine()
		if n <= 4 && after <= before+4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a burst of 32 calls: %d idle workers (want at most 4) and goroutines grew from %d to %d", n, before, after)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLongRequestsPassTheReadingRole: the reading goroutine runs a request
// itself, so a request that waits for something only a later message
// brings (a second request, or the answer to its own call back to the
// peer) must get the reading role passed on, or it would wait forever.
func TestLongRequestsPassTheReadingRole(t *testing.T) {
	second := make(chan struct{})
	var c *Conn
	c, _ = pair(t, Options{
		Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			return "pong", nil // the client answers the server's call back
		}),
	}, Options{
		Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			switch req.Method {
			case "first":
				// Waits for a request that arrives only after this one.
				select {
				case <-second:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return "first done", nil
			case "second":
				close(second)
				return "second done", nil
			case "callback":
				var got string
				if err := req.Conn.Call(ctx, "ping", nil, &got); err != nil {
					return nil, err
				}
				return got, nil
			}
			return nil, nil
		}),
	})
	ctx, cancel := context.WithTimeout(context.Background(), testdeadline.Left(t))
	defer cancel()
	firstDone := make(chan error, 1)
	go func() {
		var got string
		err := c.Call(ctx, "first", nil, &got)
		if err == nil && got != "first done" {
			err = fmt.Errorf("first = %q", got)
		}
		firstDone <- err
	}()
	// "first" is running (or about to) on the server's reader; "second"
	// can only be read once the role has passed on.
	var got string
	if err := c.Call(ctx, "second", nil, &got); err != nil || got != "second done" {
		t.Fatalf("second = %q, %v", got, err)
	}
	if err := <-firstDone; err != nil {
		t.Fatalf("first: %v", err)
	}
	if err := c.Call(ctx, "callback", nil, &got); err != nil || got != "pong" {
		t.Fatalf("a request calling back to the peer = %q, %v; its answer must be read while it runs", got, err)
	}
}

// idleWorkers returns how many workers wait for the reading role.
func idleWorkers(c *Conn) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.idle
}
