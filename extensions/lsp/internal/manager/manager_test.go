package manager

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"yolop.dev/core/jsonrpc"
	"yolop.dev/extensions/lsp/internal/lsptest"
	"yolop.dev/extensions/lsp/internal/protocol"
)

func TestMain(m *testing.M) {
	lsptest.PutGoplsOnPath()
	goleak.VerifyTestMain(m)
}

func TestParseConfig(t *testing.T) {
	cfg, err := ParseConfig(json.RawMessage(`{
		"servers": {
			"go": {"command": "/opt/gopls", "args": ["-rpc.trace"]},
			"typescript": {"command": "/opt/bin/typescript-language-server"},
			"rust": {"command": "ra-multiplex"},
			"python": {"extensions": ["py"]},
			"zig": {"command": "zls", "extensions": [".zig"]},
			"c": {"disabled": true, "extensions": [".c"]}
		},
		"request_timeout_ms": 1234
	}`))
	if err != nil {
		t.Fatal(err)
	}
	if ts := cfg.Servers["typescript"]; ts.Args[0] != "--stdio" || ts.Install == "" {
		t.Errorf("the same server at another path lost its args: %+v", ts)
	}
	if r := cfg.Servers["rust"]; r.Args != nil || r.Install != "" || r.Extensions[0] != ".rs" {
		t.Errorf("another program inherited the default's args or install hint: %+v", r)
	}
	if g := cfg.Servers["go"]; g.Command != "/opt/gopls" || len(g.Args) != 1 || g.Extensions[0] != ".go" || g.Install == "" {
		t.Errorf("go override: %+v", g)
	}
	if p := cfg.Servers["python"]; p.Command != "pyright-langserver" || p.Args[0] != "--stdio" || p.Extensions[0] != ".py" || len(p.Extensions) != 1 {
		t.Errorf("python partial override: %+v", p)
	}
	if z := cfg.Servers["zig"]; z.Command != "zls" {
		t.Errorf("new server: %+v", z)
	}
	if py := DefaultServers()["typescript"]; py.Command != "typescript-language-server" || !strings.Contains(py.Install, "typescript@6") {
		t.Errorf("typescript default: %+v", py)
	}
	if cfg.RequestTimeout() != 1234*time.Millisecond || cfg.StartupTimeout() != time.Minute {
		t.Errorf("timeouts: %v %v", cfg.RequestTimeout(), cfg.StartupTimeout())
	}
	m := New("/w", cfg, Options{})
	if _, err := m.KeyFor("/w/x.c"); !errors.Is(err, ErrNoServer) {
		t.Errorf("a disabled server still handles .c: %v", err)
	}
	if k, _ := m.KeyFor("/w/a/B.PY"); k != "python" {
		t.Errorf("KeyFor(.PY) = %q", k)
	}
	for _, bad := range []string{`{"servers":{"new":{"extensions":[".x"]}}}`, `{"request_timeout_ms":-1}`, `{"servers":[]}`} {
		if _, err := ParseConfig(json.RawMessage(bad)); err == nil {
			t.Errorf("ParseConfig(%s) accepted", bad)
		}
	}
}

func TestSetConfig(t *testing.T) {
	base, _ := ParseConfig(nil)
	m := New(t.TempDir(), base, Options{})
	tighter, _ := ParseConfig(json.RawMessage(`{"request_timeout_ms":500}`))
	if m.SetConfig(tighter) {
		t.Fatal("a timeout change asked for a restart")
	}
	if m.Config().RequestTimeout() != 500*time.Millisecond {
		t.Fatal("timeout change not applied")
	}
	other, _ := ParseConfig(json.RawMessage(`{"servers":{"go":{"command":"gopls2"}}}`))
	if !m.SetConfig(other) {
		t.Fatal("a servers change did not ask for a restart")
	}
	if m.Config().Servers["go"].Command != "gopls" {
		t.Fatal("a servers change was applied live")
	}
}

func TestMissingBinary(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.go"), []byte("package a\n"), 0o644)
	cfg, _ := ParseConfig(json.RawMessage(`{"servers":{"go":{"command":"gopls-not-installed-here","install":"go install golang.org/x/tools/gopls@latest"}}}`))
	var mu sync.Mutex
	var statuses []string
	m := New(root, cfg, Options{OnStatus: func(s string) { mu.Lock(); statuses = append(statuses, s); mu.Unlock() }})
	defer m.Shutdown()
	_, err := m.For(context.Background(), filepath.Join(root, "a.go"))
	if !errors.Is(err, ErrServerNotFound) {
		t.Fatalf("err = %v, want ErrServerNotFound", err)
	}
	want := "gopls-not-installed-here not found — install with `go install golang.org/x/tools/gopls@latest`"
	if err.Error() != want {
		t.Fatalf("message %q, want %q", err, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(statuses) != 1 || statuses[0] != "degraded: "+want {
		t.Fatalf("statuses %q", statuses)
	}
	if m.Status() != statuses[0] {
		t.Fatalf("Status() = %q", m.Status())
	}
}

func TestDefaultMissingMessage(t *testing.T) {
	e := &NotFoundError{Key: "go", Command: "gopls", Install: DefaultServers()["go"].Install}
	if got := "degraded: " + e.Error(); got != "degraded: gopls not found — install with `go install golang.org/x/tools/gopls@latest`" {
		t.Fatalf("status text %q", got)
	}
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d is still alive", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCrashRestartAndShutdown(t *testing.T) {
	lsptest.RequireGopls(t)
	root := lsptest.Fixture(t, "gomod")
	cfg, _ := ParseConfig(nil)
	m := New(root, cfg, Options{BackoffBase: 50 * time.Millisecond})
	ctx := context.Background()
	file := filepath.Join(root, "greet", "greet.go")
	h, err := m.For(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	if h.Name != "gopls" || h.Key != "go" {
		t.Fatalf("handle %+v", h)
	}
	if again, _ := m.For(ctx, filepath.Join(root, "uni", "uni.go")); again != h {
		t.Fatal("a second file of the same language started a second server")
	}
	doc, err := h.Client.Sync(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	pid := h.PID()

	// Freeze gopls so the request is surely pending, then kill it.
	syscall.Kill(-pid, syscall.SIGSTOP)
	errc := make(chan error, 1)
	go func() {
		var res any
		errc <- h.Client.Call(ctx, "textDocument/hover", protocol.TextDocumentPositionParams{
			TextDocument: protocol.TextDocumentIdentifier{URI: doc.URI}, Position: protocol.Position{Line: 6, Character: 6},
		}, &res)
	}()
	time.Sleep(100 * time.Millisecond)
	syscall.Kill(-pid, syscall.SIGKILL)
	err = <-errc
	var ee *ExitedError
	if !errors.Is(err, jsonrpc.ErrClosed) || !errors.As(err, &ee) || ee.Server != "gopls" || !strings.Contains(err.Error(), "gopls") {
		t.Fatalf("pending call failed with %v, want a closed error naming gopls", err)
	}
	waitGone(t, pid)

	h2, err := m.For(ctx, file)
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	if h2 == h || h2.PID() == pid {
		t.Fatal("the dead server was reused")
	}
	if _, err := h2.Client.Sync(ctx, file); err != nil {
		t.Fatal(err)
	}
	var syms []protocol.SymbolInformation
	if err := h2.Client.Call(ctx, "workspace/symbol", protocol.WorkspaceSymbolParams{Query: "Hello"}, &syms); err != nil || len(syms) == 0 {
		t.Fatalf("restarted server does not answer: %v %v", syms, err)
	}

	pid2 := h2.PID()
	m.Shutdown()
	waitGone(t, pid2)
	if _, err := m.For(ctx, file); !errors.Is(err, ErrClosed) {
		t.Fatalf("after shutdown: %v", err)
	}
}

func TestReroot(t *testing.T) {
	lsptest.RequireGopls(t)
	a := lsptest.Fixture(t, "gomod")
	b := lsptest.Fixture(t, "gomod")
	cfg, _ := ParseConfig(nil)
	m := New(a, cfg, Options{})
	defer m.Shutdown()
	ctx := context.Background()
	h, err := m.For(ctx, filepath.Join(a, "greet", "greet.go"))
	if err != nil {
		t.Fatal(err)
	}
	pid := h.PID()
	m.Reroot(b)
	waitGone(t, pid)
	if m.Root() != b {
		t.Fatal("root not changed")
	}
	h2, err := m.For(ctx, filepath.Join(b, "greet", "greet.go"))
	if err != nil {
		t.Fatal(err)
	}
	if h2.Client.Root() != b {
		t.Fatalf("new server rooted at %s, want %s", h2.Client.Root(), b)
	}
}

func TestScannerReportsChanges(t *testing.T) {
	root := t.TempDir()
	a := filepath.Join(root, "a.go")
	os.WriteFile(a, []byte("package a\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "node_modules"), 0o755)
	os.WriteFile(filepath.Join(root, "node_modules", "x.go"), []byte("package x\n"), 0o644)
	s := newScanner(root, []string{".go"}, time.Nanosecond, 100)
	if ev := s.scan(false); len(ev) != 0 {
		t.Fatalf("no change, events %v", ev)
	}
	os.WriteFile(a, []byte("package a\n\nvar X = 1\n"), 0o644)
	b := filepath.Join(root, "b.go")
	os.WriteFile(b, []byte("package a\n"), 0o644)
	ev := s.scan(false)
	want := map[protocol.DocumentURI]int{protocol.URIFromPath(a): protocol.FileChanged, protocol.URIFromPath(b): protocol.FileCreated}
	if len(ev) != 2 || want[ev[0].URI] != ev[0].Type || want[ev[1].URI] != ev[1].Type {
		t.Fatalf("events %v", ev)
	}
	os.Remove(b)
	os.WriteFile(a, []byte("package a\n\nvar X = 22\n"), 0o644)
	s.touch([]string{a})
	ev = s.scan(false)
	if len(ev) != 1 || ev[0].Type != protocol.FileDeleted {
		t.Fatalf("after delete and a touched write: %v", ev)
	}
	big := newScanner(root, []string{".go"}, time.Nanosecond, 0)
	if !big.disabled {
		t.Fatal("a workspace over MaxScanFiles is still scanned")
	}
}

func TestFailingServerBacksOff(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.go"), []byte("package a\n"), 0o644)
	cfg, _ := ParseConfig(json.RawMessage(`{"servers":{"go":{"command":"/bin/false"}}}`))
	m := New(root, cfg, Options{BackoffBase: time.Minute})
	defer m.Shutdown()
	ctx := context.Background()
	_, err := m.For(ctx, filepath.Join(root, "a.go"))
	if err == nil || !strings.Contains(err.Error(), "start language server false") {
		t.Fatalf("first start: %v", err)
	}
	// The retry waits out the backoff: a deadline shorter than it fails
	// while waiting, without spawning.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := m.For(short, filepath.Join(root, "a.go")); err == nil || !strings.Contains(err.Error(), "waiting to restart false after a crash") {
		t.Fatalf("retry inside the backoff: %v", err)
	}
}
