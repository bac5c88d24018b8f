package host

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

var errNotApproved = errors.New("bin/server changed since approval")

// Grant.Verify runs before every spawn — the first start, a crash respawn
// and a reload — and a failure keeps the server from starting at all.
func TestVerifyRunsBeforeEverySpawn(t *testing.T) {
	var calls atomic.Int32
	var tampered atomic.Bool
	g := pyGrant(t, "py", nil, "crash", "echo")
	g.Verify = func() error {
		calls.Add(1)
		if tampered.Load() {
			return errNotApproved
		}
		return nil
	}
	s := newTestSession(t, SessionOptions{Grants: []Grant{g}})
	e, _ := s.Extension("py")
	ctx := context.Background()
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("Verify ran %d times for the first spawn, want 1", n)
	}

	// The server crashes; meanwhile its files are tampered with. The
	// respawn must not run them.
	tampered.Store(true)
	if _, err := s.CallTool(ctx, "crash", "c", nil, nil); err == nil {
		t.Fatal("crash call succeeded")
	}
	_, err := s.CallTool(ctx, "echo", "e", json.RawMessage(`{"text":"x"}`), nil)
	if !errors.Is(err, errNotApproved) || !strings.Contains(err.Error(), `extension "py" not started`) {
		t.Fatalf("call after tampering = %v; want the verify error, naming the extension", err)
	}
	if pid := e.PID(); pid != 0 {
		t.Fatalf("a server runs (pid %d) though its verification failed", pid)
	}
	if st, reason := e.State(); st != StateDegraded || !strings.Contains(reason, errNotApproved.Error()) {
		t.Fatalf("state = %s (%s); want degraded with the verify error", st, reason)
	}
	before := calls.Load()

	// A reload checks again: still tampered, still refused.
	if err := e.Reload(ctx); !errors.Is(err, errNotApproved) {
		t.Fatalf("reload of a tampered extension = %v", err)
	}
	if calls.Load() == before {
		t.Fatal("reload did not run Verify")
	}

	// Repaired: the reload passes and the tool answers.
	tampered.Store(false)
	if err := e.Reload(ctx); err != nil {
		t.Fatalf("reload after repair: %v", err)
	}
	res, err := s.CallTool(ctx, "echo", "e2", json.RawMessage(`{"text":"back"}`), nil)
	if err != nil || res.Output != "back" {
		t.Fatalf("call after repair = %+v, %v", res, err)
	}
}
