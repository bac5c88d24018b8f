//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestREPLOnATerminal drives `yolop session` on a real pseudo-terminal:
// tab completion of a tool name, line editing (backspace), the history
// (up arrow re-runs the last line, and the history survives the session),
// Ctrl-C cancelling a running call and, at the prompt, clearing the line
// without ending the session, and Ctrl-D quitting.
func TestREPLOnATerminal(t *testing.T) {
	cfg := isolate(t)
	pkg := echoPackage(t)
	ptmx, tty := openPTY(t)
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
	go func() {
		done <- run(context.Background(), []string{"session", "--plain", "--ext", pkg, "--no-enabled"}, tty, tty, &errb)
	}()
	typeIn := func(s string) {
		t.Helper()
		if _, err := ptmx.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	waitScreen := func(want string, n int) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute) // ends a hung test; measures nothing
		for strings.Count(screen.String(), want) < n {
			if time.Now().After(deadline) {
				t.Fatalf("screen never showed %q %d times:\n%q\nstderr: %s", want, n, screen.String(), errb.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitScreen("yolop> ", 1)
	typeIn("/call ec\t")                           // completes to "/call echo "
	typeIn(`{"text":"abX` + "\x7f" + `c"}` + "\r") // backspace removes X
	waitScreen("\r\nabc\r\n", 1)
	typeIn("\x1b[A\r") // up arrow: the same line again
	waitScreen("\r\nabc\r\n", 2)
	typeIn("/call count {\"n\":100000,\"delay_ms\":5}\r")
	waitScreen("1\r\n", 1)
	typeIn("\x03") // Ctrl-C cancels the call, not the session
	waitScreen("cancelled", 1)
	typeIn("/tool\x03") // at the prompt it clears the line
	typeIn("/status\r")
	waitScreen("echo ", 1)
	typeIn("\x04") // Ctrl-D on an empty line ends the session
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("the session did not end on Ctrl-D:\n%q", screen.String())
	}
	if strings.Contains(screen.String(), "unknown command \"/tool") {
		t.Errorf("Ctrl-C at the prompt did not clear the line:\n%q", screen.String())
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
	script, _ := filepath.Abs("../../core/host/testdata/server.py")
	dir := t.TempDir()
	manifest := `{"name":"asker","version":"0.1.0","yolop":{"protocol_version":"1.0",
	  "capabilityServer":{"command":"python3","args":["-u",` + strconvQuote(script) + `],"env":{"YEP_TEST_SPEC":"{\"capabilities\":[\"tools\",\"ui_ask\"]}"}},
	  "ui_ask":true,"tools":[{"name":"ask","never_defer":true}]}}`
	os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(manifest), 0o644)
	ptmx, tty := openPTY(t)
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
	go func() {
		done <- run(context.Background(), []string{"session", "--plain", "--ext", dir, "--no-enabled"}, tty, tty, &errb)
	}()
	wait := func(want string) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for !strings.Contains(screen.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q on screen:\n%q\n%s", want, screen.String(), errb.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	wait("yolop> ")
	ptmx.Write([]byte(`/call ask {"prompt":"API token?","secret":true}` + "\r"))
	wait("[asker asks] API token?")
	wait("> ")
	ptmx.Write([]byte("hunter2\r"))
	wait("(saved)")
	wait("answer: hunter2") // the tool's own output
	ptmx.Write([]byte("/quit\r"))
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if n := strings.Count(screen.String(), "hunter2"); n != 1 {
		t.Fatalf("the secret shows %d times on screen (want only the tool's echo):\n%q", n, screen.String())
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestREPLCtrlCDuringAQuestion: Ctrl-C while an extension's question
// waits for its answer cancels the question and its call, and the line
// editor's prompt comes back: what is typed next is a command, not a late
// answer that the cancelled call swallows — half an answer typed before
// Ctrl-C included.
func TestREPLCtrlCDuringAQuestion(t *testing.T) {
	isolate(t)
	script, _ := filepath.Abs("../../core/host/testdata/server.py")
	dir := t.TempDir()
	manifest := `{"name":"asker","version":"0.1.0","yolop":{"protocol_version":"1.0",
	  "capabilityServer":{"command":"python3","args":["-u",` + strconvQuote(script) + `],"env":{"YEP_TEST_SPEC":"{\"capabilities\":[\"tools\",\"ui_ask\"]}"}},
	  "ui_ask":true,"tools":[{"name":"ask","never_defer":true}]}}`
	os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(manifest), 0o644)
	ptmx, tty := openPTY(t)
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
	go func() {
		done <- run(context.Background(), []string{"session", "--plain", "--ext", dir, "--no-enabled"}, tty, tty, &errb)
	}()
	wait := func(want string, n int) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute) // ends a hung test; measures nothing
		for strings.Count(screen.String(), want) < n {
			if time.Now().After(deadline) {
				t.Fatalf("screen never showed %q %d times:\n%q\n%s", want, n, screen.String(), errb.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	for _, secret := range []bool{false, true} {
		wait("yolop> ", 1)
		before := strings.Count(screen.String(), "cancelled")
		prompts := strings.Count(screen.String(), "yolop> ")
		ptmx.Write([]byte(fmt.Sprintf(`/call ask {"prompt":"Name?","secret":%v}`, secret) + "\r"))
		wait("[asker asks] Name?", map[bool]int{false: 1, true: 2}[secret])
		ptmx.Write([]byte("half"))
		ptmx.Write([]byte("\x03")) // Ctrl-C during the question
		wait("cancelled", before+1)
		wait("yolop> ", prompts+1)
	}
	ptmx.Write([]byte("/status\r"))
	wait("asker ", 1)
	ptmx.Write([]byte("/quit\r"))
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("/quit after a cancelled question did not end the session (a late answer swallowed it?):\n%q", screen.String())
	}
	if s := screen.String(); strings.Contains(s, "answer: half") || strings.Contains(s, "unknown command \"half") {
		t.Errorf("the half-typed answer went somewhere:\n%q", s)
	}
}
