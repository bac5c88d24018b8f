package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"yolop.dev/core/internal/leakcheck"
	"yolop.dev/core/internal/testdeadline"
	"yolop.dev/core/yep"
)

// osPipesEnv, set in the environment, makes testPipe return OS pipes, on
// which callers read their own answers (callerread.go); TestOverOSPipes
// runs the whole package that way.
const osPipesEnv = "YOLOP_JSONRPC_TEST_OS_PIPES"

// testPipe returns an in-memory pipe, or an OS pipe under osPipesEnv.
func testPipe(t *testing.T) (io.ReadCloser, io.WriteCloser) {
	t.Helper()
	if os.Getenv(osPipesEnv) == "" {
		return io.Pipe()
	}
	return osPipe(t)
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

// TestOverOSPipes runs every test of the package again with its
// connections over OS pipes, so the whole suite covers both the reading
// goroutine's hand-off (in-memory pipes have no read deadlines) and
// callers reading their own answers.
func TestOverOSPipes(t *testing.T) {
	if os.Getenv(osPipesEnv) != "" {
		t.Skip("already running over OS pipes")
	}
	args := []string{"-test.run", ".", "-test.skip", "^TestOverOSPipes$|^Fuzz", "-test.count", "1"}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), osPipesEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the package's tests over OS pipes failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "PASS") {
		t.Fatalf("the package's tests over OS pipes did not report PASS:\n%s", out)
	}
}

// osPair connects two Conns over OS pipes; the client's callers read their
// own answers.
func osPair(t *testing.T, client, server Options) (*Conn, *Conn) {
	t.Helper()
	c, s := pairOver(t, func(t *testing.T) (io.ReadCloser, io.WriteCloser) { return osPipe(t) }, client, server)
	if c.cr.dl == nil {
		t.Fatal("a connection over an OS pipe does not let callers read")
	}
	return c, s
}

// longGrace keeps a parked role parked for the test, so what the test
// checks does not depend on how fast the machine is.
func longGrace(t *testing.T) { setGrace(t, time.Hour) }

// setGrace sets callerRoleGrace for the test. Call it before making the
// connections: it is restored after they are closed.
func setGrace(t *testing.T, d time.Duration) {
	old := callerRoleGrace
	callerRoleGrace = d
	t.Cleanup(func() { callerRoleGrace = old })
}

// echoServer answers "echo" with its params and holds "hang" until it is
// cancelled, counting the cancellations.
func echoServer(cancelled *atomic.Int64) Options {
	return Options{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		switch req.Method {
		case "echo":
			return req.Params, nil
		case "hang":
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

func TestCallerReadsItsOwnAnswer(t *testing.T) {
	longGrace(t)
	var cancelled atomic.Int64
	c, _ := osPair(t, Options{}, echoServer(&cancelled))
	ctx := context.Background()
	echo(t, c, ctx, "first")  // read by the reading goroutine
	echo(t, c, ctx, "second") // back to back: the reading goroutine hands the role over
	if !c.cr.parkedNow() {
		t.Fatal("after the only call's answer the reading role is not parked for the next call")
	}
	before := c.cr.reads.Load()
	for i := range 20 {
		echo(t, c, ctx, fmt.Sprint("next ", i))
	}
	if got := c.cr.reads.Load() - before; got != 20 {
		t.Fatalf("%d of 20 back-to-back calls read their own answers, want all", got)
	}
}

// TestReadingCallerCancelled: a caller blocked reading for its answer
// returns at once when its context ends, the server's handler is
// cancelled, and the connection goes on working.
func TestReadingCallerCancelled(t *testing.T) {
	longGrace(t)
	var cancelled atomic.Int64
	c, _ := osPair(t, Options{}, echoServer(&cancelled))
	echo(t, c, context.Background(), "one")
	echo(t, c, context.Background(), "park the role")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	reads := c.cr.reads.Load()
	go func() { errc <- c.Call(ctx, "hang", nil, nil) }()
	waitFor(t, "the hanging call to read for its answer", func() bool { return c.cr.reads.Load() > reads })
	cancel()
	select {
	case err := <-errc:
		var ce *CancelledError
		if !errors.As(err, &ce) || !errors.Is(err, yep.ErrCancelled) {
			t.Fatalf("cancelled call returned %v, want a *CancelledError", err)
		}
	case <-time.After(testdeadline.Left(t)):
		t.Fatal("a caller reading for its answer did not return when cancelled")
	}
	waitFor(t, "the server's handler to be cancelled", func() bool { return cancelled.Load() == 1 })
	for i := range 5 {
		echo(t, c, context.Background(), fmt.Sprint("after ", i))
	}
}

// TestCloseInterruptsReadingCaller: Close fails a caller reading for its
// answer at once, even when closing does not end the stream (no Closer).
func TestCloseInterruptsReadingCaller(t *testing.T) {
	longGrace(t)
	leakcheck.Check(t)
	var cancelled atomic.Int64
	cr, sw := osPipe(t)
	sr, cw := osPipe(t)
	c := NewConn(cr, cw, Options{}) // no Closer: Close leaves the pipes open
	s := NewConn(sr, sw, echoServer(&cancelled))
	echo(t, c, context.Background(), "one")
	echo(t, c, context.Background(), "park the role")
	errc := make(chan error, 1)
	reads := c.cr.reads.Load()
	go func() { errc <- c.Call(context.Background(), "hang", nil, nil) }()
	waitFor(t, "the hanging call to read for its answer", func() bool { return c.cr.reads.Load() > reads })
	c.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("call during Close returned %v, want ErrClosed", err)
		}
	case <-time.After(testdeadline.Left(t)):
		t.Fatal("Close did not fail a caller reading for its answer")
	}
	s.Close()
	cw.Close()
	sw.Close() // the client's stream ends, so its reading ends
	c.Wait()
	s.Wait()
}

// TestParkedRoleReadsWhatArrives: with the grace as shipped, a
// notification the server sends just after its answer, while the caller's
// role may be parked, is still read.
func TestParkedRoleReadsWhatArrives(t *testing.T) {
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
			time.Sleep(time.Millisecond)
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

// TestReadingCallerInterruptedMidLine: a read interrupted halfway through
// a line resumes where it stopped. The line is the answer to the cancelled
// call; its second half must not be read as a line of its own (one
// violation ends this connection).
func TestReadingCallerInterruptedMidLine(t *testing.T) {
	longGrace(t)
	leakcheck.Check(t)
	inR, inW := osPipe(t)
	outR, outW := osPipe(t)
	c := NewConn(inR, outW, Options{Closer: multiCloser{outW, inR}, MaxViolations: 1})
	t.Cleanup(func() { c.Close(); c.Wait() })
	reqs := bufio.NewScanner(outR)
	nextID := func() string {
		t.Helper()
		if !reqs.Scan() {
			t.Fatal("no request from the connection")
		}
		var m struct{ ID json.RawMessage }
		if err := json.Unmarshal(reqs.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		return string(m.ID)
	}
	answer := func(id, text string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"result":` + text + `}` + "\n"
	}
	for range 2 { // the second, back to back, parks the role
		first := make(chan error, 1)
		go func() { first <- c.Call(context.Background(), "echo", nil, nil) }()
		io.WriteString(inW, answer(nextID(), `"one"`))
		if err := <-first; err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan error, 1)
	reads := c.cr.reads.Load()
	go func() { second <- c.Call(ctx, "echo", nil, nil) }()
	id := nextID()
	waitFor(t, "the second call to read for its answer", func() bool { return c.cr.reads.Load() > reads })
	line := answer(id, `"`+strings.Repeat("x", 300)+`"`)
	io.WriteString(inW, line[:150])
	time.Sleep(10 * time.Millisecond) // let the caller read the half line (the test passes either way)
	cancel()
	if err := <-second; !errors.Is(err, yep.ErrCancelled) {
		t.Fatalf("second call = %v, want cancelled", err)
	}
	if m := nextID(); m == "" {
		t.Fatal("no cancel sent")
	}
	io.WriteString(inW, line[150:])
	third := make(chan error, 1)
	go func() {
		var got string
		err := c.Call(context.Background(), "echo", nil, &got)
		if err == nil && got != "three" {
			err = fmt.Errorf("got %q", got)
		}
		third <- err
	}()
	io.WriteString(inW, answer(nextID(), `"three"`))
	if err := <-third; err != nil {
		t.Fatalf("call after the interrupted line: %v (connection: %v)", err, c.Err())
	}
}

// TestCallerReadsUnderConcurrency hammers one connection over OS pipes
// with concurrent calls, some cancelled at random points, some the server
// answers with notifications first: every call resolves, every answer
// reaches its own caller.
func TestCallerReadsUnderConcurrency(t *testing.T) {
	// A grace far over a loaded machine's round trip, so that callers do
	// read their own answers (the role goes to a caller only when its
	// answer follows the last sole answer within the grace), and sleeps
	// that outlast it now and then, so that parked roles time out too.
	const grace = 20 * time.Millisecond
	setGrace(t, grace)
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
			select {
			case <-time.After(time.Duration(rand.IntN(300)) * time.Microsecond):
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
				if rand.IntN(10) == 0 {
					time.Sleep(time.Duration(rand.Int64N(int64(2 * grace)))) // let a parked role time out
				}
			}
		}()
	}
	wg.Wait()
	if answered.Load()+cancelledN.Load() != callers*calls {
		t.Fatalf("%d answered + %d cancelled of %d calls", answered.Load(), cancelledN.Load(), callers*calls)
	}
	if answered.Load() == 0 || c.cr.reads.Load() == 0 {
		t.Fatalf("answered %d, caller reads %d: the test did not exercise caller reading", answered.Load(), c.cr.reads.Load())
	}
	// One more call after the storm: the connection still works.
	echo(t, c, context.Background(), "after")
}

// TestLineReaderResumesAfterDeadline: a read deadline's error in the middle
// of a line (also while skipping an oversized one) loses nothing.
func TestLineReaderResumesAfterDeadline(t *testing.T) {
	big := strings.Repeat("y", 75000) // over bufio's 64 KiB: skipped in several reads
	steps := []string{`{"a":`, "!", `1}` + "\n" + `{"b"`, "!", `:2}` + "\n", big[:40000], big[40000:70000], "!", big[70000:] + "\n" + `{"c":3}` + "\n"}
	r := NDJSON.NewReader(&scripted{steps: steps}, 100)
	var got []string
	for {
		msg, err := r.Read()
		var tl *TooLargeError
		switch {
		case err == nil:
			got = append(got, string(msg))
		case errors.Is(err, os.ErrDeadlineExceeded):
			got = append(got, "<interrupted>")
		case errors.As(err, &tl):
			got = append(got, fmt.Sprintf("<too large, prefix %d bytes>", len(tl.Prefix)))
		case err == io.EOF:
			want := []string{"<interrupted>", `{"a":1}`, "<interrupted>", `{"b":2}`, "<interrupted>", "<too large, prefix 1024 bytes>", `{"c":3}`}
			if strings.Join(got, " | ") != strings.Join(want, " | ") {
				t.Fatalf("read\n%q\nwant\n%q", got, want)
			}
			return
		default:
			t.Fatal(err)
		}
	}
}

// scripted is a reader that returns its steps one Read at a time, "!" as a
// read deadline's error.
type scripted struct{ steps []string }

func (s *scripted) Read(p []byte) (int, error) {
	if len(s.steps) == 0 {
		return 0, io.EOF
	}
	step := s.steps[0]
	if step == "!" {
		s.steps = s.steps[1:]
		return 0, os.ErrDeadlineExceeded
	}
	n := copy(p, step)
	if n == len(step) {
		s.steps = s.steps[1:]
	} else {
		s.steps[0] = step[n:]
	}
	return n, nil
}

// parkedNow reports whether the reading role is parked.
func (r *callerRole) parkedNow() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.parked
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testdeadline.Left(t))
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
