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
	for range 50 {
		if err := c.Call(ctx, "m", nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	// The worker that answered goes idle just after its reply is written.
	for deadline := time.Now().Add(testdeadline.Left(t)); ; time.Sleep(time.Millisecond) {
		n := s.idle.Load()
		if n >= 1 && n <= 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d idle workers after sequential calls, want 1 to 4", n)
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
		n, after := s.idle.Load(), runtime.NumGoroutine()
		if n <= 4 && after <= before+4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a burst of 32 calls: %d idle workers (want at most 4) and goroutines grew from %d to %d", n, before, after)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
