//go:build linux

package main

import (
	"strings"
	"testing"
)

// ptySession runs yolop with args in-process on a fresh pseudo-terminal,
// types /help and Ctrl-D, and returns what the terminal showed and the
// exit code.
func ptySession(t *testing.T, want string, args ...string) (string, int) {
	t.Helper()
	p := startPTY(t, args...)
	p.wait("yolop session: 0 extension(s)", 1)
	p.typeIn("/help\r")
	p.wait(want, 1)
	p.typeIn("\x04") // Ctrl-D on an empty line quits either way
	code := p.exit()
	return p.String(), code
}

// uiHelp and editorHelp are what /help says of the keys in the terminal
// UI and in the line editor.
const (
	uiHelp     = "Esc cancels"
	editorHelp = "Tab completes"
)

// TestTerminalDefaultsToTheTUI: on a terminal `yolop session` and `yolop`
// alone open the terminal UI (its /help names its keys), and --plain
// keeps the line editor (its prompt and its keys); each ends with 0 on
// Ctrl-D.
func TestTerminalDefaultsToTheTUI(t *testing.T) {
	isolate(t)
	t.Setenv("YOLOP_MODEL", "")
	for _, tc := range []struct {
		args       []string
		want, not  string
		editorOnly string
	}{
		{args: []string{"session", "--no-mcp"}, want: uiHelp, not: editorHelp},
		{args: nil, want: uiHelp, not: editorHelp},
		{args: []string{"session", "--plain", "--no-mcp"}, want: editorHelp, not: uiHelp, editorOnly: "yolop> "},
	} {
		screen, code := ptySession(t, tc.want, tc.args...)
		if code != 0 {
			t.Errorf("yolop %v: exit %d\n%q", tc.args, code, screen)
		}
		if strings.Contains(screen, tc.not) {
			t.Errorf("yolop %v: the screen shows %q:\n%q", tc.args, tc.not, screen)
		}
		if tc.editorOnly != "" && !strings.Contains(screen, tc.editorOnly) {
			t.Errorf("yolop %v: no line editor prompt %q:\n%q", tc.args, tc.editorOnly, screen)
		}
		if tc.editorOnly == "" && strings.Contains(screen, "yolop> ") {
			t.Errorf("yolop %v: the line editor's prompt in the UI:\n%q", tc.args, screen)
		}
	}
}
