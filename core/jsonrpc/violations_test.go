package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/internal/leakcheck"
)

// bubbleConn is a Conn inside a synctest bubble, fed through an in-memory
// pipe: time stands still while it reads, so rate limits and windows are
// exact.
type bubbleConn struct {
	*Conn
	in   *io.PipeWriter
	logs *logBuf
}

type logBuf struct{ syncWriter }

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.(*strings.Builder).String()
}

// count returns how many log lines contain s.
func (l *logBuf) count(s string) int { return strings.Count(l.String(), s) }

func newBubbleConn(t *testing.T, opts Options) *bubbleConn {
	t.Helper()
	lb := &logBuf{syncWriter{w: &strings.Builder{}}}
	opts.Logger = hclog.New(&hclog.LoggerOptions{Output: lb, Level: hclog.Warn})
	inR, inW := io.Pipe()
	opts.Closer = inR
	c := NewConn(inR, io.Discard, opts)
	t.Cleanup(func() {
		inW.Close()
		c.Close()
		c.Wait()
	})
	return &bubbleConn{Conn: c, in: inW, logs: lb}
}

func (b *bubbleConn) send(t *testing.T, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(b.in, l+"\n"); err != nil {
			t.Fatalf("write %q: %v", l, err)
		}
	}
}

func garbage(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("garbage line %d", i)
	}
	return out
}

// TestNonJSONFloodIsRateLimited floods a connection with 20,000 lines that
// are not JSON (the violation limit off): a burst of warnings is logged,
// then one summary of the rest, not one warning per line.
func TestNonJSONFloodIsRateLimited(t *testing.T) {
	leakcheck.Check(t)
	synctest.Test(t, func(t *testing.T) {
		b := newBubbleConn(t, Options{MaxViolations: -1})
		b.send(t, garbage(20_000)...)
		b.in.Close()
		<-b.Done()
		b.Wait()
		if n := b.logs.count("skipping a line that is not JSON"); n != DefaultWarnBurst {
			t.Errorf("%d warnings for 20000 lines, want the burst of %d", n, DefaultWarnBurst)
		}
		if n := b.logs.count("suppressed 19990 protocol warnings"); n != 1 {
			t.Errorf("summary lines = %d, want 1; log:\n%.3000s", n, b.logs)
		}
		if lines := strings.Count(b.logs.String(), "\n"); lines != DefaultWarnBurst+1 {
			t.Errorf("%d log lines, want %d", lines, DefaultWarnBurst+1)
		}
	})
}

// TestWarningsRefillOverTime checks the rate after the burst: one more
// warning per interval, and the summary comes before the next warning.
func TestWarningsRefillOverTime(t *testing.T) {
	leakcheck.Check(t)
	synctest.Test(t, func(t *testing.T) {
		b := newBubbleConn(t, Options{MaxViolations: -1, WarnBurst: 2, WarnInterval: time.Second})
		b.send(t, garbage(5)...) // 2 logged, 3 suppressed
		synctest.Wait()
		time.Sleep(time.Second)
		b.send(t, "after a second") // summary, then this one
		synctest.Wait()
		got := b.logs.String()
		if n := b.logs.count("skipping a line that is not JSON"); n != 3 {
			t.Errorf("%d warnings, want 3:\n%s", n, got)
		}
		sum, last := strings.Index(got, "suppressed 3 protocol warnings"), strings.Index(got, "after a second")
		if sum < 0 || last < sum {
			t.Errorf("want the summary of 3 before the next warning:\n%s", got)
		}
	})
}

// TestViolationLimitEndsTheConnection sends lines that are not JSON: the
// limit counts within a sliding window, and reaching it ends the
// connection with a *ProtocolError that pending calls report too.
func TestViolationLimitEndsTheConnection(t *testing.T) {
	leakcheck.Check(t)
	synctest.Test(t, func(t *testing.T) {
		b := newBubbleConn(t, Options{})
		errc := make(chan error, 1)
		go func() { errc <- b.Call(context.Background(), "pending", nil, nil) }()

		b.send(t, garbage(60)...)
		synctest.Wait()
		time.Sleep(DefaultViolationWindow + time.Second) // the first 60 age out
		b.send(t, garbage(60)...)
		synctest.Wait()
		time.Sleep(DefaultViolationWindow / 2)
		b.send(t, garbage(39)...) // 99 within the window
		synctest.Wait()
		select {
		case <-b.Done():
			t.Fatalf("ended after 99 violations within the window: %v", b.Err())
		default:
		}
		b.send(t, "the last straw")
		<-b.Done()

		var pe *ProtocolError
		if err := b.Err(); !errors.As(err, &pe) || !errors.Is(err, ErrProtocolViolations) {
			t.Fatalf("Err = %v, want a *ProtocolError", err)
		}
		want := `stopped after 100 protocol violations within 10s; last: a line that is not JSON: "the last straw"`
		if pe.Error() != want || !pe.NotJSON {
			t.Errorf("ProtocolError = %q (NotJSON %v), want %q", pe, pe.NotJSON, want)
		}
		err := <-errc
		if !errors.Is(err, ErrClosed) || !errors.As(err, &pe) {
			t.Errorf("pending call = %v, want ErrClosed caused by the ProtocolError", err)
		}
		if n := b.logs.count("ending the connection"); n != 1 {
			t.Errorf("want one error line saying why the connection ended:\n%s", b.logs)
		}
	})
}

// TestInvalidMessagesCountAsViolations ends a connection with invalid
// messages (not only non-JSON lines), and reports the last one.
func TestInvalidMessagesCountAsViolations(t *testing.T) {
	leakcheck.Check(t)
	synctest.Test(t, func(t *testing.T) {
		b := newBubbleConn(t, Options{MaxViolations: 3})
		b.send(t, `[1]`, `{"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"2.0","id":2,"result":1,"error":{}}`)
		<-b.Done()
		var pe *ProtocolError
		if !errors.As(b.Err(), &pe) || pe.NotJSON || !strings.Contains(pe.Last, "an invalid message (invalid response: both result and error)") {
			t.Fatalf("Err = %v, want a ProtocolError naming the invalid response", b.Err())
		}
	})
}

// TestReportedViolationsCount: violations a handler reports, from
// notifications on the reading goroutine and from requests running
// concurrently, are rate-limited like the connection's own, reach
// OnViolation, and end the connection at the limit naming the last one.
func TestReportedViolationsCount(t *testing.T) {
	leakcheck.Check(t)
	synctest.Test(t, func(t *testing.T) {
		var seen atomic.Int64
		refuse := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			req.Conn.ReportViolation("dropped " + req.Method + ": not granted")
			return nil, nil
		})
		b := newBubbleConn(t, Options{Handler: refuse, MaxViolations: 30, WarnBurst: 5, OnViolation: func() { seen.Add(1) }})
		for i := range 15 {
			b.send(t, `{"jsonrpc":"2.0","method":"status/changed","params":{}}`,
				fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ui/ask","params":{}}`, i))
		}
		<-b.Done()
		b.in.Close()
		b.Wait()
		var pe *ProtocolError
		if err := b.Err(); !errors.As(err, &pe) || !strings.HasPrefix(pe.Last, "dropped ") || !strings.HasSuffix(pe.Last, ": not granted") || pe.NotJSON {
			t.Fatalf("Err = %v, want a ProtocolError naming a reported violation", err)
		}
		if n := seen.Load(); n != 30 {
			t.Errorf("OnViolation saw %d violations, want the 30 of the limit", n)
		}
		if warned, summary := b.logs.count("[WARN]  dropped "), b.logs.count("suppressed 25 protocol warnings"); warned != 5 || summary != 1 {
			t.Errorf("logged %d warnings and %d summaries of 25, want the burst of 5 and one summary\n%s", warned, summary, b.logs)
		}
	})
}
