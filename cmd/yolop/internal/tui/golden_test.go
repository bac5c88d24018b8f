package tui

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"yolop.dev/core/yep"
	"yolop.dev/harness"
)

var update = flag.Bool("update", false, "rewrite the golden frames in testdata/")

// Golden frame size: the terminal the issue asks to stay legible.
const frameWidth, frameHeight = 80, 24

// frame is what an 80×24 terminal shows in inline mode: the printed
// transcript with the live area right under it, the last rows when they
// are more than the screen holds. Rows are cut to the width (a terminal
// would wrap them) and carry no trailing spaces.
func (d *driver) frame() string {
	var rows []string
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range d.printed {
		rows = append(rows, strings.Split(p, "\n")...)
	}
	rows = append(rows, strings.Split(d.view(), "\n")...)
	if len(rows) > frameHeight {
		rows = rows[len(rows)-frameHeight:]
	}
	for len(rows) < frameHeight {
		rows = append(rows, "")
	}
	for i, r := range rows {
		if lipgloss.Width(r) > frameWidth {
			r = lipgloss.NewStyle().MaxWidth(frameWidth).Render(r)
		}
		rows[i] = strings.TrimRight(r, " ")
	}
	return strings.Join(rows, "\n") + "\n"
}

// golden compares got with testdata/name.golden byte for byte, or
// rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./internal/tui -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("frame differs from %s (go test ./internal/tui -update rewrites it)\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// board is a status bar with a ready and a degraded extension, rendered
// by the harness's status snapshot as the session's board renders it.
func board(running int) func(int) string {
	snap := harness.StatusSnapshot{
		Model: "openai/gpt-4.1", ContextUsed: 12300, ContextWindow: 128000,
		Extensions: []harness.ExtensionStatus{
			{Name: "echo", Health: "ready"},
			{Name: "lsp", Health: "degraded", Text: "rust-analyzer not found"},
		},
		Running: running,
	}
	return snap.Line
}

// session prints the opening of a session, as `yolop session` reports it.
func (d *driver) session() {
	d.update(tea.WindowSizeMsg{Width: frameWidth, Height: frameHeight})
	d.u.Event("ready", nil, "yolop session: 2 extension(s), 9 tool(s), model openai/gpt-4.1. Type a message, or /help for commands.")
	d.u.Event("status.changed", nil, "[lsp] degraded: rust-analyzer not found")
	d.pump()
}

// TestGoldenStatusDegraded: the status bar shows the model, its context
// use and a degraded extension's text, at the bottom of an idle session.
func TestGoldenStatusDegraded(t *testing.T) {
	d := newDriver(t, board(0))
	d.session()
	d.typ("what does main.go do?")
	golden(t, "status_degraded", d.frame())
}

// TestGoldenMaskedAsk: a secret question mid-turn shows its mask, never
// the typed value.
func TestGoldenMaskedAsk(t *testing.T) {
	d := newDriver(t, board(1))
	d.session()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	started := make(chan struct{})
	d.u.SetDispatch(func(ctx context.Context, line string) bool { close(started); <-release; return false })
	d.typ("set up github")
	d.press("enter")
	<-started
	d.ask(context.Background(), "github", yep.UIAskParams{Prompt: "GitHub token", Secret: true})
	d.typ("ghp_secret")
	f := d.frame()
	if strings.Contains(f, "ghp_secret") {
		t.Fatalf("the frame shows the secret:\n%s", f)
	}
	golden(t, "ask_masked", f)
}

// TestGoldenSelector: an options question is an arrow-key selector with
// the chosen row marked.
func TestGoldenSelector(t *testing.T) {
	d := newDriver(t, board(0))
	d.session()
	d.ask(context.Background(), "lsp", yep.UIAskParams{Prompt: "Which language server?", Options: []string{"rust-analyzer", "gopls", "pyright", "clangd"}})
	d.press("down")
	golden(t, "selector", d.frame())
}

// TestGoldenToolStream: a running tool's call line, its streamed output
// indented under it, and the running hint and count.
func TestGoldenToolStream(t *testing.T) {
	d := newDriver(t, board(1))
	d.session()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	d.u.SetDispatch(func(ctx context.Context, line string) bool {
		d.u.Raw("I'll count to three.\n")
		d.u.Event("tool.started", nil, "→ count: Counting to 3")
		for _, n := range []string{"1\n", "2\n"} {
			d.u.Event("tool.update", nil, "")
			d.u.Raw(n)
		}
		d.u.Raw("Still coun")
		<-release
		return false
	})
	d.typ("count to three")
	d.press("enter")
	d.until(func(msg tea.Msg) bool { return msg == partialMsg("Still coun") })
	golden(t, "tool_stream", d.frame())
}
