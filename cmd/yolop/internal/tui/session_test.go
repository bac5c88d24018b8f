package tui

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"yolop.dev/harness"
	"yolop.dev/harness/repl"
)

// echoPackage builds core's echo example into a package directory: its
// plugin.json and its server in bin/.
func echoPackage(t *testing.T) string {
	t.Helper()
	manifest, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "core", "examples", "echo", "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "bin", "yolop-extension-echo")
	if b, err := exec.Command("go", "build", "-o", out, "yolop.dev/core/examples/echo").CombinedOutput(); err != nil {
		t.Fatalf("building the echo server: %v\n%s", err, b)
	}
	return dir
}

// askerPackage is core/host's python3 test server as a package with the
// ask and status tools.
func askerPackage(t *testing.T) string {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "core", "host", "testdata", "server.py"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	manifest := `{"name":"asker","version":"0.1.0","yolop":{"protocol_version":"1.0",
	  "capabilityServer":{"command":"python3","args":["-u",` + strconv.Quote(script) + `],"env":{"YEP_TEST_SPEC":"{\"capabilities\":[\"tools\",\"ui_ask\",\"status\"]}"}},
	  "sandbox":{"fs":[{"path":` + strconv.Quote(script) + `}]},
	  "ui_ask":true,"status":true,"tools":[{"name":"ask","never_defer":true},{"name":"status","never_defer":true}]}}`
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRealSession drives the UI over a real session — the echo example
// and a python3 server that pushes status and asks — through the same
// command layer and status board as `yolop session --tui`: a streamed
// count is a block (its header, its lines indented, its closing line),
// the status bar shows the server's status text and the running call,
// which has a spinner row in the live area, and a secret answer reaches
// the server while the UI shows only its mask.
func TestRealSession(t *testing.T) {
	ctx := context.Background()
	cfg := t.TempDir()
	t.Setenv("YOLOP_CONFIG_DIR", cfg)
	h, err := harness.Open(ctx, harness.Options{ConfigDir: cfg})
	if err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, nil)
	s, warnings, err := h.OpenSession(ctx, harness.SessionOptions{Ask: d.u, NoEnabled: true, NoBuiltins: true, WorkspaceRoot: t.TempDir()},
		[]string{echoPackage(t), askerPackage(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) > 0 {
		t.Fatalf("warnings: %v", warnings)
	}
	t.Cleanup(s.Close)
	r := repl.New(repl.Options{Session: s.Session, Out: d.u, Ask: d.u})
	t.Cleanup(r.Close)
	board := harness.NewStatusBoard(s.Session, "", 0, d.u.StatusChanged)
	t.Cleanup(board.Close)
	d.u.SetStatus(func(w int) string { return board.Snapshot().Line(w) })
	if errs, _ := s.StartInPlace(ctx, s.InPlace()); len(errs) > 0 {
		t.Fatalf("start: %v", errs)
	}
	d.u.SetDispatch(r.Run)
	done := func(msg tea.Msg) bool { _, ok := msg.(doneMsg); return ok }

	d.typ(`/call status {"text":"degraded: rust-analyzer not found"}`)
	d.press("enter")
	d.until(done)
	d.waitFor(func() bool { return strings.Contains(d.m.status, "asker ready: degraded: rust-analyzer not found") })
	if !strings.Contains(d.transcript(), "[asker] degraded: rust-analyzer not found") {
		t.Errorf("the status change has no transcript line:\n%s", d.transcript())
	}

	d.typ(`/call count {"n":3}`)
	d.press("enter")
	d.until(done)
	if want := "> /call count {\"n\":3}\n→ count (echo): {\"n\":3}\n" + toolIndent + "1\n" + toolIndent + "2\n" + toolIndent + "3\n✓ count (echo) "; !strings.Contains(d.transcript(), want) {
		t.Errorf("transcript lacks the count's block %q:\n%s", want, d.transcript())
	}

	d.typ(`/call ask {"prompt":"API token","secret":true}`)
	d.press("enter")
	d.until(func(msg tea.Msg) bool { _, ok := msg.(askMsg); return ok })
	d.waitFor(func() bool { return strings.Contains(d.m.status, "1 running") })
	if row := "⠋ asker · ask: "; !strings.Contains(d.view(), row) {
		t.Errorf("the running call has no row %q in the live area:\n%s", row, d.view())
	}
	d.typ("hunter2")
	if v := d.view(); strings.Contains(v, "hunter2") || !strings.Contains(v, "secret> *******") {
		t.Fatalf("the overlay shows the secret or no mask:\n%s", v)
	}
	d.press("enter")
	d.until(done)
	tr := d.transcript()
	// The test server echoes the answer it got, which proves it arrived;
	// the UI's own lines show only (saved).
	if !strings.Contains(tr, "[asker asks] API token\n(saved)") || !strings.Contains(tr, "answer: hunter2") {
		t.Errorf("transcript:\n%s", tr)
	}
	if strings.Count(tr, "hunter2") != 1 {
		t.Errorf("the secret appears more than in the server's own reply:\n%s", tr)
	}
}
