package main

import (
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/cmd/yolop/internal/tui"
)

// TestTUINeedsATerminal: --tui on a pipe is an error that says which side
// is not a terminal and points at the line mode, and --tui with --json
// is refused; neither starts a session.
func TestTUINeedsATerminal(t *testing.T) {
	isolate(t)
	out, errOut, code := cli(t, "/quit\n", "session", "--tui", "--no-enabled", "--no-mcp")
	if code == 0 || !strings.Contains(errOut, "--tui: stdin is not a terminal") || !strings.Contains(errOut, "without --tui the line mode") {
		t.Fatalf("--tui on a pipe: exit %d, stderr %q", code, errOut)
	}
	if strings.Contains(out, "yolop session:") {
		t.Errorf("a session started:\n%s", out)
	}
	_, errOut, code = cli(t, "/quit\n", "session", "--tui", "--json", "--no-enabled", "--no-mcp")
	if code == 0 || !strings.Contains(errOut, "--tui and --json do not go together") {
		t.Fatalf("--tui --json: exit %d, stderr %q", code, errOut)
	}
}

// TestLogSwitch: while the UI runs the host log goes to the file writer
// and comes back to stderr after; a logger made over the switch follows
// it.
func TestLogSwitch(t *testing.T) {
	var stderr, file strings.Builder
	sw := &logSwitch{w: &stderr}
	log := hclog.New(&hclog.LoggerOptions{Name: "yolop", Output: sw, Level: hclog.Warn})
	log.Warn("before")
	restore := sw.to(&file)
	log.Named("ext").Warn("during")
	restore()
	log.Warn("after")
	if s := stderr.String(); !strings.Contains(s, "before") || !strings.Contains(s, "after") || strings.Contains(s, "during") {
		t.Errorf("stderr got:\n%s", s)
	}
	if s := file.String(); !strings.Contains(s, "yolop.ext: during") || strings.Contains(s, "before") || strings.Contains(s, "after") {
		t.Errorf("the file got:\n%s", s)
	}
}

// TestHelpNamesTheUIKeys: under the UI /help describes its keys (its
// palette, Ctrl-R), not the line editor's, and a pipe gets neither.
func TestHelpNamesTheUIKeys(t *testing.T) {
	ui := (&repl{ui: &tui.UI{}}).editorHelp()
	if !strings.Contains(ui, "Esc cancels") || !strings.Contains(ui, "Ctrl-R") || strings.Contains(ui, "Tab completes commands and tool names") {
		t.Errorf("the UI's help: %q", ui)
	}
	if pipe := (&repl{}).editorHelp(); pipe != "" {
		t.Errorf("a pipe's help: %q", pipe)
	}
}
