//go:build linux

package stdio_test

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core"
	"yolop.dev/transport/stdio"
)

func ctxBackground() context.Context { return context.Background() }

// testBinary is this test binary, re-executed as a fake server.
func testBinary(t testing.TB) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return self
}

// fakeSpec returns a spec that runs the named fake server.
func fakeSpec(t testing.TB, name, mode string, env map[string]string) core.ServerSpec {
	t.Helper()
	// GORACE: a -race binary otherwise sleeps a second at exit.
	e := map[string]string{fakeEnv: mode, "GORACE": "atexit_sleep_ms=0"}
	for k, v := range env {
		e[k] = v
	}
	return core.ServerSpec{Name: name, Command: testBinary(t), Env: e}
}

// logBuffer is a goroutine-safe log sink.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func captureLogger() (hclog.Logger, *logBuffer) {
	buf := &logBuffer{}
	return hclog.New(&hclog.LoggerOptions{Name: "host", Output: buf, Level: hclog.Trace}), buf
}

// start starts spec and registers a Kill as cleanup.
func start(t *testing.T, tr *stdio.Transport, spec core.ServerSpec) core.Instance {
	t.Helper()
	inst, err := tr.Start(context.Background(), spec)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { inst.Kill() })
	return inst
}

// procGone reports whether pid is no longer running: absent from /proc, or
// a zombie (dead, waiting for a reaper that is not us).
func procGone(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return os.IsNotExist(err)
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false
	}
	state := s[i+2]
	return state == 'Z' || state == 'X'
}

// hangGuard bounds a wait only so that a broken test fails instead of
// hanging; it is no performance threshold, and generous because process
// start and exit can take seconds on a loaded machine.
const hangGuard = time.Minute

// waitGone polls until pid is gone, for up to hangGuard.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !procGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) is still running", what, pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// within runs f and fails the test if it has not returned within
// hangGuard (a hang guard, not a timing assertion).
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(hangGuard):
		t.Fatalf("%s did not return", what)
	}
}
