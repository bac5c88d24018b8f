package host

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core"
	"yolop.dev/core/internal/leakcheck"
	"yolop.dev/core/sdk"
	"yolop.dev/core/transporttest"
	"yolop.dev/core/yep"
)

// A logWaiter records log output and lets a test wait for a line: a log
// line as an event to wait on, instead of a sleep.
type logWaiter struct {
	mu      sync.Mutex
	b       strings.Builder
	changed chan struct{}
}

func newLogWaiter() *logWaiter { return &logWaiter{changed: make(chan struct{})} }

// logger returns an info-level logger writing to w.
func (w *logWaiter) logger() hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Output: w, Level: hclog.Info})
}

func (w *logWaiter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	close(w.changed)
	w.changed = make(chan struct{})
	return len(p), nil
}

// waitFor blocks until the output holds want n times.
func (w *logWaiter) waitFor(want string, n int) {
	for {
		w.mu.Lock()
		got, changed := strings.Count(w.b.String(), want), w.changed
		w.mu.Unlock()
		if got >= n {
			return
		}
		<-changed
	}
}

func (w *logWaiter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func checkTimeoutError(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
	if !errors.Is(err, ErrToolTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v: want it to match ErrToolTimeout and context.DeadlineExceeded", err)
	}
	if errors.Is(err, yep.ErrCancelled) || errors.Is(err, context.Canceled) {
		t.Errorf("err = %v: a timeout must not read as a user cancel", err)
	}
	var te *ToolTimeoutError
	if !errors.As(err, &te) {
		t.Errorf("err = %v (%T), want a *ToolTimeoutError", err, err)
	}
}

// TestToolTimeoutFromManifestAndSession runs a real server's tool that
// only ends when cancelled, under the manifest's timeout_ms, the session's
// ToolTimeout, or both: the smaller explicit value applies, the error says
// how long that was and is not a cancel, and the server is still sent
// cancel.
func TestToolTimeoutFromManifestAndSession(t *testing.T) {
	for _, tc := range []struct {
		name      string
		timeoutMS int
		session   time.Duration
		want      string
	}{
		{"manifest only", 200, 0, `tool "slow" timed out after 200ms`},
		{"session lowers the manifest", 600_000, 300 * time.Millisecond, `tool "slow" timed out after 300ms`},
		{"manifest below the session", 200, time.Hour, `tool "slow" timed out after 200ms`},
		{"session only", 0, 250 * time.Millisecond, `tool "slow" timed out after 250ms`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := newLogWaiter()
			g := pyGrant(t, "py", nil)
			g.Tools = []ToolGrant{{Name: "slow", TimeoutMS: tc.timeoutMS}}
			s := newTestSession(t, SessionOptions{
				Grants:      []Grant{g},
				ToolTimeout: tc.session,
				Logger:      logs.logger(),
			})
			_, err := s.CallTool(context.Background(), "slow", "s", nil, nil)
			checkTimeoutError(t, err, tc.want)
			logs.waitFor("py: slow cancelled", 1) // the server reports, through the log notification, that it was cancelled
		})
	}
}

// TestDefaultToolTimeout runs, on a fake clock, a tool with no timeout_ms
// in a session with no ToolTimeout: it is stopped after 10 minutes, and
// its handler's context is cancelled. A user cancel still reads as one.
func TestDefaultToolTimeout(t *testing.T) {
	leakcheck.Check(t)
	synctest.Test(t, func(t *testing.T) {
		cancelled := make(chan time.Duration, 2)
		srv := sdkServer(func(s *sdk.Server) {
			s.Tool("block", func(ctx context.Context, _ *sdk.ToolCall) (yep.ToolResult, error) {
				start := time.Now()
				<-ctx.Done()
				cancelled <- time.Since(start)
				return yep.ToolResult{}, ctx.Err()
			})
		})
		s := newMemSession(t, SessionOptions{
			Grants: []Grant{{Name: "ext", ProtocolVersion: "1.0", Tools: []ToolGrant{{Name: "block"}}}},
		}, map[string]transporttest.Server{"ext": srv})
		start := time.Now()
		_, err := s.CallTool(context.Background(), "block", "b", nil, nil)
		checkTimeoutError(t, err, `tool "block" timed out after 10m0s`)
		if d := time.Since(start); d != DefaultToolTimeout {
			t.Errorf("the call ended after %s, want %s", d, DefaultToolTimeout)
		}
		if d := <-cancelled; d != DefaultToolTimeout {
			t.Errorf("the server's handler was cancelled after %s, want %s", d, DefaultToolTimeout)
		}

		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Minute, cancel)
		_, err = s.CallTool(ctx, "block", "b2", nil, nil)
		if !errors.Is(err, yep.ErrCancelled) || errors.Is(err, ErrToolTimeout) {
			t.Errorf("user cancel = %v, want a cancel, not a timeout", err)
		}
		<-cancelled
	})
}

func TestEffectiveToolTimeout(t *testing.T) {
	for _, tc := range []struct {
		timeoutMS int
		session   time.Duration
		want      time.Duration
	}{
		{0, 0, DefaultToolTimeout},
		{0, 5 * time.Minute, 5 * time.Minute},
		{0, time.Hour, time.Hour},
		{30 * 60_000, 0, 30 * time.Minute},
		{30 * 60_000, 5 * time.Minute, 5 * time.Minute},
		{60_000, time.Hour, time.Minute},
		{-5, 0, DefaultToolTimeout},
	} {
		if got := effectiveToolTimeout(tc.timeoutMS, tc.session); got != tc.want {
			t.Errorf("effectiveToolTimeout(%d ms, session %s) = %s, want %s", tc.timeoutMS, tc.session, got, tc.want)
		}
	}
}

// slowStart is a transport whose Start takes a while before the server
// runs, as a WASM compile on a loaded machine does.
type slowStart struct {
	core.Transport
	delay time.Duration
}

func (t slowStart) Start(ctx context.Context, spec core.ServerSpec) (core.Instance, error) {
	select {
	case <-time.After(t.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return t.Transport.Start(ctx, spec)
}

// TestHandshakeTimeoutCountsFromTheRunningServer: a transport that takes
// longer to start the server than the handshake timeout (host work, not the
// server's) does not degrade the extension; a server that then does not
// answer initialize is timed out the full handshake timeout after it runs.
func TestHandshakeTimeoutCountsFromTheRunningServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		silent := func(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
			_, _ = io.Copy(io.Discard, stdin)
			return nil
		}
		tr := slowStart{delay: 3 * DefaultHandshakeTimeoutForTest, Transport: &transporttest.Transport{Servers: map[string]transporttest.Server{
			"ext":    sdkServer(func(s *sdk.Server) {}),
			"silent": silent,
		}}}
		for _, name := range []string{"ext", "silent"} {
			e := NewExtension(Grant{Name: name, ProtocolVersion: "1.0"}, ExtensionOptions{Transport: tr})
			start := time.Now()
			err := e.Start(context.Background())
			took := time.Since(start)
			switch name {
			case "ext":
				if err != nil {
					t.Errorf("a slow transport start degraded the extension: %v", err)
				}
				if st, reason := e.State(); st != StateReady {
					t.Errorf("state = %v (%s), want ready", st, reason)
				}
			case "silent":
				if !errors.Is(err, ErrHandshakeTimeout) {
					t.Errorf("silent server: err = %v, want the handshake timeout", err)
				}
				if want := tr.delay + DefaultHandshakeTimeoutForTest; took != want {
					t.Errorf("silent server timed out after %s, want start %s + handshake %s", took, tr.delay, DefaultHandshakeTimeoutForTest)
				}
			}
			e.Stop()
		}
	})
}

// DefaultHandshakeTimeoutForTest is ExtensionOptions.HandshakeTimeout's
// zero-value default.
const DefaultHandshakeTimeoutForTest = 10 * time.Second
