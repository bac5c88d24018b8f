package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/internal/leakcheck"
	"yolop.dev/core/internal/testdeadline"
	"yolop.dev/core/yep"
)

// pair connects two Conns over in-memory pipes.
func pair(t *testing.T, client, server Options) (*Conn, *Conn) {
	t.Helper()
	return pairOver(t, testPipe, client, server)
}

// pairOver connects two Conns over the pipes newPipe makes.
func pairOver(t *testing.T, newPipe func(*testing.T) (io.ReadCloser, io.WriteCloser), client, server Options) (*Conn, *Conn) {
	t.Helper()
	leakcheck.Check(t)
	cr, sw := newPipe(t)
	sr, cw := newPipe(t)
	client.Closer = multiCloser{cw, cr}
	server.Closer = multiCloser{sw, sr}
	c := NewConn(cr, cw, client)
	s := NewConn(sr, sw, server)
	t.Cleanup(func() {
		c.Close()
		s.Close()
		c.Wait()
		s.Wait()
	})
	return c, s
}

type multiCloser []io.Closer

func (m multiCloser) Close() error {
	for _, c := range m {
		c.Close()
	}
	return nil
}

// raw drives a Conn with hand-written lines: it returns a function that
// writes one line and a scanner over what the Conn sends back.
func raw(t *testing.T, opts Options) (send func(string), recv func() map[string]any, conn *Conn) {
	t.Helper()
	leakcheck.Check(t)
	inR, inW := testPipe(t)
	outR, outW := testPipe(t)
	opts.Closer = multiCloser{outW, inR}
	conn = NewConn(inR, outW, opts)
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	lines := make(chan string, 100)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	t.Cleanup(func() {
		inW.Close()
		conn.Close()
		outR.Close()
		conn.Wait()
		wg.Wait()
	})
	send = func(s string) {
		t.Helper()
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	recv = func() map[string]any {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("connection closed")
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("conn wrote non-JSON %q: %v", l, err)
			}
			return m
		case <-time.After(testdeadline.Left(t)):
			t.Fatal("no message from the connection")
		}
		return nil
	}
	return send, recv, conn
}

func echoHandler() Handler {
	return HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		switch req.Method {
		case "echo":
			return req.Params, nil
		case "fail":
			return nil, &yep.Error{Code: 42, Message: "it failed", Retryable: true}
		case "block":
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return nil, yep.Errorf(yep.CodeMethodNotFound, "method %q not found", req.Method)
	})
}

func TestCallEcho(t *testing.T) {
	c, _ := pair(t, Options{}, Options{Handler: echoHandler()})
	var got map[string]string
	if err := c.Call(context.Background(), "echo", map[string]string{"a": "b"}, &got); err != nil {
		t.Fatal(err)
	}
	if got["a"] != "b" {
		t.Fatalf("echo = %v, want a=b", got)
	}
	var rawRes json.RawMessage
	if err := c.Call(context.Background(), "echo", json.RawMessage(`[1,2]`), &rawRes); err != nil {
		t.Fatal(err)
	}
	if string(rawRes) != "[1,2]" {
		t.Fatalf("raw result = %s", rawRes)
	}
}

func TestErrorResponse(t *testing.T) {
	c, _ := pair(t, Options{}, Options{Handler: echoHandler()})
	err := c.Call(context.Background(), "fail", nil, nil)
	var we *yep.Error
	if !errors.As(err, &we) || we.Code != 42 || !we.Retryable || we.Message != "it failed" {
		t.Fatalf("err = %#v, want code 42 retryable", err)
	}
	err = c.Call(context.Background(), "nope", nil, nil)
	if !errors.Is(err, yep.ErrMethodNotFound) {
		t.Fatalf("unknown method: err = %v, want method not found", err)
	}
}

func TestOutOfOrderResponses(t *testing.T) {
	release := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if req.Method == "slow" {
			<-release
		}
		return req.Method, nil
	})
	c, _ := pair(t, Options{}, Options{Handler: h})
	slowDone := make(chan string, 1)
	go func() {
		var s string
		c.Call(context.Background(), "slow", nil, &s)
		slowDone <- s
	}()
	for i := 0; i < 5; i++ {
		var s string
		if err := c.Call(context.Background(), "fast", nil, &s); err != nil || s != "fast" {
			t.Fatalf("fast call %d = %q, %v", i, s, err)
		}
	}
	select {
	case <-slowDone:
		t.Fatal("slow call finished before it was released")
	default:
	}
	close(release)
	if s := <-slowDone; s != "slow" {
		t.Fatalf("slow = %q", s)
	}
}

func TestCallCancelSendsCancelAndResolvesPromptly(t *testing.T) {
	handlerCancelled := make(chan struct{})
	started := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		close(started)
		<-ctx.Done()
		close(handlerCancelled)
		return nil, ctx.Err()
	})
	c, _ := pair(t, Options{}, Options{Handler: h})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctx, "block", nil, nil) }()
	<-started
	cancel()
	err := <-errc
	if !errors.Is(err, yep.ErrCancelled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want cancelled and context.Canceled", err)
	}
	select {
	case <-handlerCancelled:
	case <-time.After(testdeadline.Left(t)):
		t.Fatal("the server's handler context was never cancelled")
	}
}

func TestIncomingCancel(t *testing.T) {
	send, recv, _ := raw(t, Options{Handler: echoHandler()})
	send(`{"jsonrpc":"2.0","id":"abc","method":"block"}`)
	send(`{"jsonrpc":"2.0","id":99,"method":"cancel","params":{"id":"abc"}}`)
	got := map[string]map[string]any{}
	for i := 0; i < 2; i++ {
		m := recv()
		got[fmt.Sprint(m["id"])] = m
	}
	if r := got["99"]["result"].(map[string]any); r["cancelled"] != true {
		t.Fatalf("cancel answer = %v, want cancelled:true", got["99"])
	}
	e := got["abc"]["error"].(map[string]any)
	if e["code"].(float64) != float64(yep.CodeCancelled) || e["message"] != "cancelled" {
		t.Fatalf("aborted call answer = %v, want error cancelled", got["abc"])
	}
}

func TestCancelUnknownID(t *testing.T) {
	send, recv, _ := raw(t, Options{Handler: echoHandler()})
	send(`{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"id":12345}}`)
	m := recv()
	if r := m["result"].(map[string]any); r["cancelled"] != false {
		t.Fatalf("got %v, want cancelled:false", m)
	}
}

func TestGarbageBlankAndCRLFLinesAreSkipped(t *testing.T) {
	var logs bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Output: &syncWriter{w: &logs}, Level: hclog.Warn})
	send, recv, _ := raw(t, Options{Handler: echoHandler(), Logger: log})
	send(`this is not json`)
	send(``)
	send(`   `)
	send(`{"half":`)
	send(`{"jsonrpc":"2.0","id":7,"method":"echo","params":"ok"}` + "\r")
	m := recv()
	if m["id"].(float64) != 7 || m["result"] != "ok" {
		t.Fatalf("got %v, want the request after the garbage answered", m)
	}
	if !strings.Contains(logs.String(), "not JSON") {
		t.Fatalf("garbage line was not logged; log:\n%s", logs.String())
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func TestInvalidEnvelopes(t *testing.T) {
	send, recv, _ := raw(t, Options{Handler: echoHandler()})
	cases := []struct {
		line string
		code float64
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"echo","METHOD":"x"}`, float64(yep.CodeInvalidRequest)},
		{`{"jsonrpc":"2.0","id":2,"method":"echo","method":"fail"}`, float64(yep.CodeInvalidRequest)},
		{`{"jsonrpc":"1.0","id":3,"method":"echo"}`, float64(yep.CodeInvalidRequest)},
		{`{"jsonrpc":"2.0","id":4,"method":5}`, float64(yep.CodeInvalidRequest)},
		{`{"jsonrpc":"2.0","id":5,"method":"echo","result":1}`, float64(yep.CodeInvalidRequest)},
		{`{"jsonrpc":"2.0","id":6,"method":"nope"}`, float64(yep.CodeMethodNotFound)},
	}
	for _, tc := range cases {
		send(tc.line)
		m := recv()
		e, ok := m["error"].(map[string]any)
		if !ok || e["code"].(float64) != tc.code {
			t.Errorf("%s: got %v, want error code %v", tc.line, m, tc.code)
		}
	}
	// The connection is still alive.
	send(`{"jsonrpc":"2.0","id":8,"method":"echo","params":1}`)
	if m := recv(); m["id"].(float64) != 8 || m["result"].(float64) != 1 {
		t.Fatalf("got %v", m)
	}
}

func TestIDsEchoedExactly(t *testing.T) {
	leakcheck.Check(t)
	in := strings.NewReader(`{"jsonrpc":"2.0","id":123456789012345678901,"method":"echo"}` + "\n" +
		`{"jsonrpc":"2.0","id":"x-1","method":"echo"}` + "\n")
	var out syncWriter
	var buf bytes.Buffer
	out.w = &buf
	c := NewConn(in, &out, Options{Handler: echoHandler()})
	<-c.Done()
	c.Wait()
	got := buf.String()
	for _, want := range []string{`"id":123456789012345678901,`, `"id":"x-1",`} {
		if !strings.Contains(got, want) {
			t.Errorf("responses %q do not echo %s exactly", got, want)
		}
	}
}

func TestNotificationsCorrelateByRequestID(t *testing.T) {
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		for i := 0; i < 50; i++ {
			req.Conn.Notify(ctx, "tool/update", map[string]any{"request_id": json.RawMessage(req.ID), "output": fmt.Sprint(i)})
		}
		// An update for some other id goes to the plain handler.
		req.Conn.Notify(ctx, "tool/update", map[string]any{"request_id": 999999, "output": "stray"})
		return "done", nil
	})
	var stray atomic.Int32
	client := Options{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		stray.Add(1)
		return nil, nil
	})}
	c, _ := pair(t, client, Options{Handler: h})
	var got []string
	var res string
	err := c.CallWith(context.Background(), "run", nil, &res, CallOptions{OnNotify: func(method string, params json.RawMessage) {
		var u struct{ Output string }
		json.Unmarshal(params, &u)
		got = append(got, u.Output)
	}})
	if err != nil || res != "done" {
		t.Fatalf("call = %q, %v", res, err)
	}
	if len(got) != 50 {
		t.Fatalf("got %d updates before the result, want 50", len(got))
	}
	for i, g := range got {
		if g != fmt.Sprint(i) {
			t.Fatalf("update %d = %q: out of order", i, g)
		}
	}
	if stray.Load() != 1 {
		t.Fatalf("uncorrelated notification reached the handler %d times, want 1", stray.Load())
	}
}

func TestPeerGoneFailsEveryPendingCall(t *testing.T) {
	leakcheck.Check(t)
	cr, sw := testPipe(t)
	sr, cw := testPipe(t)
	c := NewConn(cr, cw, Options{
		Closer:   multiCloser{cw, cr},
		PeerGone: func(err error) error { return fmt.Errorf("extension %q exited (exit status 3): %w", "demo", err) },
	})
	// The "server" reads requests and never answers, then dies.
	reqs := make(chan struct{}, 10)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(sr)
		for sc.Scan() {
			reqs <- struct{}{}
		}
	}()
	const n = 5
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() { errs <- c.Call(context.Background(), "x", nil, nil) }()
	}
	for i := 0; i < n; i++ {
		<-reqs
	}
	sw.Close() // the peer goes away
	for i := 0; i < n; i++ {
		select {
		case err := <-errs:
			if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "exit status 3") {
				t.Fatalf("err = %v, want ErrClosed naming the exit status", err)
			}
		case <-time.After(testdeadline.Left(t)):
			t.Fatal("a pending call hung after the peer went away")
		}
	}
	if err := c.Call(context.Background(), "x", nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after close = %v", err)
	}
	c.Close()
	sr.Close()
	c.Wait()
	wg.Wait()
}

func TestOversizedResponseFailsOnlyItsCall(t *testing.T) {
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if req.Method == "huge" {
			return strings.Repeat("x", 10_000), nil
		}
		return "small", nil
	})
	c, _ := pair(t, Options{MaxMessageSize: 4096}, Options{Handler: h})
	err := c.Call(context.Background(), "huge", nil, nil)
	var we *yep.Error
	if !errors.As(err, &we) || we.Code != yep.CodeMessageTooLarge {
		t.Fatalf("huge: err = %v, want message-too-large", err)
	}
	var s string
	if err := c.Call(context.Background(), "small", nil, &s); err != nil || s != "small" {
		t.Fatalf("call after the oversized one = %q, %v", s, err)
	}
}

func TestOversizedRequestIsAnswered(t *testing.T) {
	send, recv, _ := raw(t, Options{Handler: echoHandler(), MaxMessageSize: 1 << 16})
	send(`{"jsonrpc":"2.0","id":5,"method":"echo","params":"` + strings.Repeat("y", 1<<17) + `"}`)
	m := recv()
	e := m["error"].(map[string]any)
	if m["id"].(float64) != 5 || e["code"].(float64) != float64(yep.CodeMessageTooLarge) {
		t.Fatalf("got %v, want id 5 answered message-too-large", m)
	}
	send(`{"jsonrpc":"2.0","id":6,"method":"echo","params":1}`)
	if m := recv(); m["id"].(float64) != 6 {
		t.Fatalf("connection did not recover: %v", m)
	}
}

func TestHandlerConcurrencyIsBounded(t *testing.T) {
	var running, peak atomic.Int32
	release := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		<-release
		running.Add(-1)
		return nil, nil
	})
	c, _ := pair(t, Options{}, Options{Handler: h, MaxConcurrentHandlers: 3})
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); c.Call(context.Background(), "x", nil, nil) }()
	}
	for running.Load() < 3 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	close(release)
	wg.Wait()
	if p := peak.Load(); p != 3 {
		t.Fatalf("peak concurrent handlers = %d, want 3", p)
	}
}

func TestOverloadIsRetryable(t *testing.T) {
	release := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		<-release
		return nil, nil
	})
	c, _ := pair(t, Options{}, Options{Handler: h, MaxConcurrentHandlers: 1, MaxQueuedRequests: 2})
	errs := make(chan error, 3)
	for i := 0; i < 3; i++ {
		go func() { errs <- c.Call(context.Background(), "x", nil, nil) }()
	}
	err := <-errs
	var we *yep.Error
	if !errors.As(err, &we) || we.Code != yep.CodeOverloaded || !we.Retryable {
		t.Fatalf("third call = %v, want retryable overloaded", err)
	}
	close(release)
	<-errs
	<-errs
}

func TestContentLengthFraming(t *testing.T) {
	c, _ := pair(t, Options{Framer: ContentLength}, Options{Framer: ContentLength, Handler: echoHandler()})
	var got string
	if err := c.Call(context.Background(), "echo", "héllo\nworld", &got); err != nil || got != "héllo\nworld" {
		t.Fatalf("echo = %q, %v", got, err)
	}
}

func TestLSPStyleCancelNotification(t *testing.T) {
	cancelled := make(chan struct{})
	started := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return nil, ctx.Err()
	})
	lsp := Options{Framer: ContentLength, CancelMethod: "$/cancelRequest", CancelNotification: true}
	srv := lsp
	srv.Handler = h
	c, _ := pair(t, lsp, srv)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctx, "textDocument/definition", nil, nil) }()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, yep.ErrCancelled) {
		t.Fatalf("err = %v", err)
	}
	select {
	case <-cancelled:
	case <-time.After(testdeadline.Left(t)):
		t.Fatal("$/cancelRequest did not cancel the handler")
	}
}

type countingWriter struct {
	mu     sync.Mutex
	w      io.Writer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.writes++
	c.mu.Unlock()
	return c.w.Write(p)
}

// TestNotifyEachIsOneWrite: a batch of notifications reaches the peer in
// order, as separate notifications, from one write, in both framings.
func TestNotifyEachIsOneWrite(t *testing.T) {
	for _, framer := range []Framer{NDJSON, ContentLength} {
		t.Run(fmt.Sprintf("%T", framer), func(t *testing.T) {
			ar, bw := io.Pipe()
			br, aw := io.Pipe()
			got := make(chan string, 8)
			b := NewConn(br, bw, Options{Framer: framer, Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
				var p struct{ N string }
				_ = json.Unmarshal(req.Params, &p)
				got <- req.Method + ":" + p.N
				return nil, nil
			})})
			cw := &countingWriter{w: aw}
			a := NewConn(ar, cw, Options{Framer: framer})
			defer func() {
				a.Close()
				b.Close()
				aw.Close()
				bw.Close()
				a.Wait()
				b.Wait()
			}()
			params := []struct{ N string }{{"one"}, {"two"}, {"three"}}
			if err := NotifyEach(context.Background(), a, "ev", params); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"ev:one", "ev:two", "ev:three"} {
				if g := <-got; g != want {
					t.Fatalf("got %q, want %q", g, want)
				}
			}
			if cw.writes != 1 {
				t.Fatalf("%d writes for a batch of three, want 1", cw.writes)
			}
			if err := NotifyEach(context.Background(), a, "ev", []any{func() {}}); err == nil {
				t.Fatal("a params value that does not encode was sent")
			}
			if cw.writes != 1 {
				t.Fatal("a batch that failed to encode was written")
			}
		})
	}
}
