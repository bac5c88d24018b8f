package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"yolop.dev/harness"
)

// Ctrl-C while a question is open drops what was typed for it: the next
// reader of the terminal, whoever takes it first (the command prompt, once
// the cancelled call has returned), never gets the half answer; and an
// answer asked for after the cancellation returns at once, reading
// nothing. (The question's reader and the prompt raced for the terminal,
// and the prompt could win with the half answer still buffered.)
func TestCtrlCDropsTheHalfAnswer(t *testing.T) {
	ptmx, tty := openPTY(t)
	go io.Copy(io.Discard, ptmx) // the editor's echo and prompts
	ti, err := openTerm(tty, tty, harness.LoadHistory(filepath.Join(t.TempDir(), "history"), nil), func() bool { return true }, func(string) []string { return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer ti.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ti.setAnswering(cancel) // the question shows
	if _, err := ptmx.Write([]byte("half\x03")); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done() // the pump saw "half", then Ctrl-C

	promptReadsAlone(t, ti, ptmx) // the prompt takes the terminal first
	// The question's late read gives up without reading.
	answered := make(chan error, 1)
	go func() {
		_, err := ti.Answer(ctx, "> ", false)
		answered <- err
	}()
	select {
	case err := <-answered:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("a cancelled question's answer = %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute): // a guard, not a measurement
		t.Fatal("a cancelled question still waits for an answer")
	}
}

// Ctrl-C while a call runs cancels it and also clears what was typed
// ahead: the prompt can be redrawn before the cancelled call has quite
// ended, and what is typed there then must not prefix the next command.
func TestCtrlCClearsTheLineTypedAhead(t *testing.T) {
	ptmx, tty := openPTY(t)
	go io.Copy(io.Discard, ptmx)
	interrupted := make(chan struct{}, 1)
	ti, err := openTerm(tty, tty, harness.LoadHistory(filepath.Join(t.TempDir(), "history"), nil), func() bool {
		interrupted <- struct{}{}
		return true // a call runs
	}, func(string) []string { return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer ti.Close()
	if _, err := ptmx.Write([]byte("/tool\x03")); err != nil {
		t.Fatal(err)
	}
	<-interrupted
	promptReadsAlone(t, ti, ptmx)
}

// promptReadsAlone types /status and Enter and checks that the prompt
// reads exactly that line, nothing typed before it.
func promptReadsAlone(t *testing.T, ti *termIO, ptmx *os.File) {
	t.Helper()
	lines := make(chan string, 1)
	go func() {
		l, _ := ti.ReadLine()
		lines <- l
	}()
	if _, err := ptmx.Write([]byte("/status\r")); err != nil {
		t.Fatal(err)
	}
	if l := <-lines; l != "/status" {
		t.Fatalf("the prompt read %q, want /status alone", l)
	}
}
