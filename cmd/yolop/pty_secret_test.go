//go:build linux

package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"yolop.dev/harness/secrets"
)

// TestSecretSetMaskedOnATerminal types the secret on a real
// pseudo-terminal: echo is off while it is read, restored afterwards, and
// the value is stored and never printed.
func TestSecretSetMaskedOnATerminal(t *testing.T) {
	cfg, _ := installLife(t)
	ptmx, tty := openPTY(t)
	var out, errb syncBuf
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"ext", "secret", "set", "life", "token"}, tty, &out, &errb)
	}()
	waitOut(t, &errb, "input hidden: ")
	tio, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	// The prompt is printed just before echo goes off: wait for it.
	deadline := time.Now().Add(5 * time.Second)
	for tio.Lflag&unix.ECHO != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
		tio, _ = unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	}
	if tio.Lflag&unix.ECHO != 0 {
		t.Fatal("echo is on while the secret is typed")
	}
	if _, err := ptmx.Write([]byte(lifeToken + "\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("secret set did not return")
	}
	if tio, _ := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS); tio.Lflag&unix.ECHO == 0 {
		t.Error("echo was not restored")
	}
	if strings.Contains(out.String()+errb.String(), lifeToken) || !strings.Contains(out.String(), "(saved)") {
		t.Errorf("output:\n%s\n%s", out.String(), errb.String())
	}
	if s, ok, _ := secrets.NewFile(cfg).Get(context.Background(), "life", "token"); !ok || s.Reveal() != lifeToken {
		t.Error("not stored")
	}
}
