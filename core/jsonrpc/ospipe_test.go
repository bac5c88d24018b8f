package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"yolop.dev/core/internal/leakcheck"
	"yolop.dev/core/internal/testdeadline"
	"yolop.dev/core/yep"
)

// Connections over OS pipes, as a server's stdin and stdout are: the
// reading works the same as over in-memory pipes (one reading mode for
// every stream), and these tests hold it to that on the kind of stream
// production sessions use.

// testPipe returns an in-memory pipe.
func testPipe(t *testing.T) (io.ReadCloser, io.WriteCloser) {
	t.Helper()
	return io.Pipe()
}

func osPipe(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// osPair connects two Conns over OS pipes.
func osPair(t *testing.T, client, server Options) (*Conn, *Conn) {
	t.Helper()
	return pairOver(t, func(t *testing.T) (io.ReadCloser, io.WriteCloser) { return osPipe(t) }, client, server)
}

// echoServer answers "echo" with its params and holds "hang" until it is
// cancelled, saying on started when it is held and counting the
// cancellations.
func echoServer(started chan<- struct{}, cancelled *atomic.Int64) Options {
	return Options{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		switch req.Method {
		case "echo":
			return req.Params, nil
		case "hang":
			started <- struct{}{}
			<-ctx.Done()
			cancelled.Add(1)
			return nil, ctx.Err()
		}
		return nil, yep.ErrMethodNotFound
	})}
}

func echo(t *testing.T, c *Conn, ctx context.Context, s string) {
	t.Helper()
	var got string
	if err := c.Call(ctx, "echo", s, &got); err != nil || got != s {
		t.Fatalf("echo %q = %q, %v", s, got, err)
	}
}

// TestCancelledCallOverOSPipes: a call blocked waiting for its answer
// returns at once when its context ends, the server's handler is
// cancelled, and the connection goes on working.
func TestCancelledCallOverOSPipes(t *testing.T) {
	var cancelled atomic.Int64
	started := make(chan struct{}, 1)
	c, _ := osPair(t, Options{}, echoServer(started, &cancelled))
	echo(t, c, context.Background(), "one")
	echo(t, c, context.Background(), "two")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctx, "hang", nil, nil) }()
	<-started
	cancel()
	select {
	case err := <-errc:
		var ce *CancelledError
		if !errors.As(err, &ce) || !errors.Is(err, yep.ErrCancelled) {
			t.Fatalf("cancelled call returned %v, want a *CancelledError", err)
		}
	case <-time.After(testdeadline.Left(t)):
		t.Fatal("a call waiting for its answer did not return when cancelled")
	}
	// The cancel is a request; its answer is read once the handler ended.
	echo(t, c, context.Background(), "after the cancel")
	for i := range 5 {
		echo(t, c, context.Background(), fmt.Sprint("after ", i))
	}
	if cancelled.Load() != 1 {
		t.Fatalf("the server's handler was cancelled %d times, want 1", cancelled.Load())
	}
}

// TestCloseFailsPendingCallOverOSPipes: Close fails a call waiting for its
// answer at once, even when closing does not end the stream (no Closer),
// and Wait returns once the stream ends.
func TestCloseFailsPendingCallOverOSPipes(t *testing.T) {
	leakcheck.Check(t)
	var cancelled atomic.Int64
	started := make(chan struct{}, 1)
	cr, sw := osPipe(t)
	sr, cw := osPipe(t)
	c := NewConn(cr, cw, Options{}) // no Closer: Close leaves the pipes open
	s := NewConn(sr, sw, echoServer(started, &cancelled))
	echo(t, c, context.Background(), "one")
	echo(t, c, context.Background(), "two")
	errc := make(chan error, 1)
	go func() { errc <- c.Call(context.Background(), "hang", nil, nil) }()
	<-started
	c.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("call during Close returned %v, want ErrClosed", err)
		}
	case <-time.After(testdeadline.Left(t)):
		t.Fatal("Close did not fail a call waiting for its answer")
	}
	s.Close()
	cw.Close()
	sw.Close() // the client's stream ends, so its reading ends
	c.Wait()
	s.Wait()
}

// TestNotificationAfterTheOnlyAnswerIsRead: a notification the server
// sends just after its answer to the only pending call is still read.
func TestNotificationAfterTheOnlyAnswerIsRead(t *testing.T) {
	got := make(chan string, 1)
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	c, _ := osPair(t, Options{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		got <- req.Method
		return nil, nil
	})}, Options{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = req.Conn.Notify(context.Background(), "later", nil)
		}()
		return req.Params, nil
	})})
	echo(t, c, context.Background(), "one")
	select {
	case m := <-got:
		if m != "later" {
			t.Fatalf("handler got %q", m)
		}
	case <-time.After(testdeadline.Left(t)):
		t.Fatal("a notification sent after the only answer was never read")
	}
}

// TestConcurrentCallsOverOSPipes hammers one connection over OS pipes
// with concurrent calls, some cancelled at random points, some the server
// answers with notifications first: every call resolves, every answer
// reaches its own caller.
func TestConcurrentCallsOverOSPipes(t *testing.T) {
	var notes atomic.Int64
	c, _ := osPair(t, Options{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		notes.Add(1)
		return nil, nil
	})}, Options{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if req.Method == "note-then-echo" {
			if err := req.Conn.Notify(ctx, "note", nil); err != nil {
				return nil, err
			}
		}
		if rand.IntN(4) == 0 {
			// Past roleHandoffDelay now and then, so the reading role
			// passes on while a request runs.
			select {
			case <-time.After(time.Duration(rand.IntN(1000)) * time.Microsecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return req.Params, nil
	})})
	const callers, calls = 8, 150
	var wg sync.WaitGroup
	var answered, cancelledN atomic.Int64
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if rand.IntN(5) == 0 {
					ctx, cancel = context.WithTimeout(ctx, time.Duration(rand.IntN(200))*time.Microsecond)
				}
				method := "echo"
				if rand.IntN(3) == 0 {
					method = "note-then-echo"
				}
				want := fmt.Sprintf("%d/%d", g, i)
				var got string
				err := c.Call(ctx, method, want, &got)
				cancel()
				switch {
				case err == nil && got == want:
					answered.Add(1)
				case err == nil:
					t.Errorf("call %s got another call's answer %q", want, got)
				case errors.Is(err, yep.ErrCancelled):
					cancelledN.Add(1)
				default:
					t.Errorf("call %s: %v", want, err)
				}
			}
		}()
	}
	wg.Wait()
	if answered.Load()+cancelledN.Load() != callers*calls {
		t.Fatalf("%d answered + %d cancelled of %d calls", answered.Load(), cancelledN.Load(), callers*calls)
	}
	if answered.Load() == 0 {
		t.Fatal("no call was answered")
	}
	// One more call after the storm: the connection still works.
	echo(t, c, context.Background(), "after")
}
