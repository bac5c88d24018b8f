//go:build linux

package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ptySession runs yolop with args in-process on a fresh pseudo-terminal,
// types /help and Ctrl-D, and returns what the terminal showed and the
// exit code.
func ptySession(t *testing.T, want string, args ...string) (string, int) {
	t.Helper()
	ptmx, tty := openPTY(t)
	if err := unix.IoctlSetWinsize(int(ptmx.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 30, Col: 100}); err != nil {
		t.Fatal(err)
	}
	var screen syncBuf
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			screen.Write(b[:n])
			if err != nil {
				return
			}
		}
	}()
	var errb syncBuf
	done := make(chan int, 1)
	go func() { done <- run(context.Background(), args, tty, tty, &errb) }()
	waitScreen := func(want string) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute) // ends a hung test; measures nothing
		for !strings.Contains(screen.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("yolop %v: the screen never showed %q:\n%q\nstderr: %s", args, want, screen.String(), errb.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitScreen("yolop session: 0 extension(s)")
	ptmx.Write([]byte("/help\r"))
	waitScreen(want)
	ptmx.Write([]byte("\x04")) // Ctrl-D on an empty line quits either way
	select {
	case code := <-done:
		return screen.String(), code
	case <-time.After(2 * time.Minute):
		t.Fatalf("yolop %v did not end on Ctrl-D:\n%q", args, screen.String())
	}
	return "", 0
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
