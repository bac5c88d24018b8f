//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREPLOnATerminal drives `yolop session` on a real pseudo-terminal:
// tab completion of a tool name, line editing (backspace), the history
// (up arrow re-runs the last line, and the history survives the session),
// Ctrl-C cancelling a running call and, at the prompt, clearing the line
// without ending the session, and Ctrl-D quitting.
func TestREPLOnATerminal(t *testing.T) {
	cfg := isolate(t)
	pkg := echoPackage(t)
	p := startPTY(t, "session", "--plain", "--ext", pkg, "--no-enabled")
	typeIn, waitScreen := p.typeIn, p.wait
	waitScreen("yolop> ", 1)
	typeIn("/call ec\t")                           // completes to "/call echo "
	typeIn(`{"text":"abX` + "\x7f" + `c"}` + "\r") // backspace removes X
	waitScreen("\r\nabc\r\n", 1)
	typeIn("\x1b[A\r") // up arrow: the same line again
	waitScreen("\r\nabc\r\n", 2)
	prompts := strings.Count(p.String(), "yolop> ")
	typeIn("/call count {\"n\":100000,\"delay_ms\":5}\r")
	waitScreen("1\r\n", 1)
	typeIn("\x03") // Ctrl-C cancels the call, not the session
	waitScreen("cancelled", 1)
	waitScreen("yolop> ", prompts+1) // the prompt is back: no call runs
	typeIn("/tool\x03")              // at the prompt it clears the line
	typeIn("/status\r")
	waitScreen("echo ", 1)
	typeIn("\x04") // Ctrl-D on an empty line ends the session
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errb.String())
	}
	if strings.Contains(p.String(), "unknown command \"/tool") {
		t.Errorf("Ctrl-C at the prompt did not clear the line:\n%q", p.String())
	}
	hist, err := os.ReadFile(filepath.Join(cfg, historyFile))
	if err != nil || !strings.Contains(string(hist), `/call echo {"text":"abc"}`) || !strings.Contains(string(hist), "/status") {
		t.Fatalf("history file = %q, %v", hist, err)
	}
	if fi, _ := os.Stat(filepath.Join(cfg, historyFile)); fi.Mode().Perm() != 0o600 {
		t.Errorf("history mode %v, want 0600", fi.Mode().Perm())
	}
}

// A pipe is not a terminal: the REPL stays exactly as scriptable, with no
// prompt and no history written.
func TestREPLOnAPipeHasNoEditor(t *testing.T) {
	cfg := isolate(t)
	out, _, code := cli(t, "/tools\n/quit\n", "session", "--no-enabled")
	if code != 0 || strings.Contains(out, "yolop> ") {
		t.Fatalf("pipe session: %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(cfg, historyFile)); err == nil {
		t.Fatal("a piped session wrote the history")
	}
}

// On a terminal a secret question is answered with echo off: the typed
// value never appears on the screen (the server echoes it back through a
// tool, which the scrubber does not know about, so only that copy shows).
func TestREPLSecretAnswerIsNotEchoed(t *testing.T) {
	isolate(t)
	dir := askerPackage(t)
	p := startPTY(t, "session", "--plain", "--ext", dir, "--no-enabled")
	wait := func(want string) { t.Helper(); p.wait(want, 1) }
	wait("yolop> ")
	p.typeIn(`/call ask {"prompt":"API token?","secret":true}` + "\r")
	wait("[asker asks] API token?")
	wait("> ")
	p.typeIn("hunter2\r")
	wait("(saved)")
	wait("answer: hunter2") // the tool's own output
	p.typeIn("/quit\r")
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errb.String())
	}
	if n := strings.Count(p.String(), "hunter2"); n != 1 {
		t.Fatalf("the secret shows %d times on screen (want only the tool's echo):\n%q", n, p.String())
	}
}

// TestREPLCtrlCDuringAQuestion: Ctrl-C while an extension's question
// waits for its answer cancels the question and its call, and the line
// editor's prompt comes back: what is typed next is a command, not a late
// answer that the cancelled call swallows — half an answer typed before
// Ctrl-C included.
func TestREPLCtrlCDuringAQuestion(t *testing.T) {
	isolate(t)
	dir := askerPackage(t)
	p := startPTY(t, "session", "--plain", "--ext", dir, "--no-enabled")
	for _, secret := range []bool{false, true} {
		p.wait("yolop> ", 1)
		before := strings.Count(p.String(), "cancelled")
		prompts := strings.Count(p.String(), "yolop> ")
		p.typeIn(fmt.Sprintf(`/call ask {"prompt":"Name?","secret":%v}`, secret) + "\r")
		p.wait("[asker asks] Name?", map[bool]int{false: 1, true: 2}[secret])
		p.typeIn("half")
		p.typeIn("\x03") // Ctrl-C during the question
		p.wait("cancelled", before+1)
		p.wait("yolop> ", prompts+1)
	}
	p.typeIn("/status\r")
	p.wait("asker ", 1)
	p.typeIn("/quit\r")
	if code := p.exit(); code != 0 { // a late answer swallowing /quit would hang here
		t.Fatalf("exit %d: %s", code, p.errb.String())
	}
	if s := p.String(); strings.Contains(s, "answer: half") || strings.Contains(s, "unknown command \"half") {
		t.Errorf("the half-typed answer went somewhere:\n%q", s)
	}
}
