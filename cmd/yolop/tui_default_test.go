package main

import (
	"strings"
	"testing"
)

// TestTUIFlagsOnAPipe: --fullscreen asks for the terminal UI as --tui
// does (on a pipe an error naming it), --tui or --fullscreen with --plain
// or --json is refused, and a pipe without them is the line mode, as
// before: none of the refused ones starts a session.
func TestTUIFlagsOnAPipe(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--fullscreen"}, "yolop session --fullscreen: stdin is not a terminal; the terminal UI needs one (without --fullscreen the line mode"},
		{[]string{"--tui", "--plain"}, "--tui and --plain do not go together"},
		{[]string{"--fullscreen", "--plain"}, "--fullscreen and --plain do not go together"},
		{[]string{"--fullscreen", "--json"}, "--fullscreen and --json do not go together"},
	} {
		args := append([]string{"session", "--no-enabled", "--no-mcp"}, tc.args...)
		out, errOut, code := cli(t, "/quit\n", args...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("yolop %v: exit %d, stderr %q; want %q", args, code, errOut, tc.want)
		}
		if strings.Contains(out, "yolop session:") {
			t.Errorf("yolop %v started a session:\n%s", args, out)
		}
	}
	for _, args := range [][]string{{"session"}, {"session", "--plain"}} {
		args = append(args, "--no-enabled", "--no-mcp")
		out, errOut, code := cli(t, "/quit\n", args...)
		if code != 0 || !strings.Contains(out, "yolop session: 0 extension(s)") {
			t.Errorf("yolop %v on a pipe: exit %d\n%s\n%s", args, code, out, errOut)
		}
	}
}

// TestBareYolopOnAPipe: `yolop` alone with no terminal prints the help
// and succeeds, as before the terminal UI; a word that is no command is
// still an error.
func TestBareYolopOnAPipe(t *testing.T) {
	isolate(t)
	out, errOut, code := cli(t, "/quit\n")
	if code != 0 || !strings.Contains(out, "Available Commands:") || strings.Contains(out, "yolop session:") {
		t.Errorf("yolop on a pipe: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, errOut, code := cli(t, "", "nosuch"); code == 0 || !strings.Contains(errOut, `unknown command "nosuch" for "yolop"`) {
		t.Errorf("yolop nosuch: exit %d, stderr %q", code, errOut)
	}
}
