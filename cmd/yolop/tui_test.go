package main

import (
	"strings"
	"testing"
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
