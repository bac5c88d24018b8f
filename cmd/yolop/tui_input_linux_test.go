//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/harness"
)

// TestTUIInputOnATerminal drives the terminal UI's input on a real
// pseudo-terminal, with the keys as a terminal sends them: "/call rev"
// opens the palette with the reverse tool and its arguments and Enter
// completes it; Alt+Enter (ESC CR) starts a second line of a /call's
// JSON; Up (ESC [ A) brings back the multi-line entry and Ctrl-R finds
// an older one, each run again; every line lands in the history file.
func TestTUIInputOnATerminal(t *testing.T) {
	cfg := isolate(t)
	t.Setenv("YOLOP_MODEL", "")
	pkg := echoPackage(t)
	p := startPTY(t, "session", "--tui", "--no-mcp", "--no-enabled", "--ext", pkg)
	typeIn, waitScreen := p.typeIn, p.wait
	waitScreen("yolop session: 1 extension(s)", 1)

	typeIn("/call rev")
	waitScreen("reverse {text: string}", 1) // the palette, with the tool's arguments
	typeIn("\r")                            // completes "/call reverse "
	typeIn(`{"text":"olleh-etteLap"}` + "\r")
	waitScreen("paLette-hello", 1)

	typeIn(`/call reverse {` + "\x1b\r" + `"text":"enil-itlum"}` + "\r")
	waitScreen("multi-line", 1)
	typeIn("\x1b[A\r") // Up: the multi-line entry again
	waitScreen("multi-line", 2)
	typeIn("\x12olleh\r\r") // Ctrl-R finds the first line; Enter takes it, Enter runs it
	waitScreen("paLette-hello", 2)

	typeIn("\x04")
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errb.String())
	}
	hist, err := os.ReadFile(filepath.Join(cfg, historyFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := `/call reverse {"text":"olleh-etteLap"}`; strings.Count(string(hist), want) != 2 {
		t.Errorf("history file has %q %d times, want 2 (run, then found with Ctrl-R and run):\n%s", want, strings.Count(string(hist), want), hist)
	}
	// The multi-line entry comes back whole in the next session.
	h := harness.LoadHistory(filepath.Join(cfg, historyFile), nil)
	found := false
	for i := range h.Len() {
		found = found || h.At(i) == "/call reverse {\n\"text\":\"enil-itlum\"}"
	}
	if !found {
		t.Errorf("the history lacks the multi-line entry:\n%s", hist)
	}
}
