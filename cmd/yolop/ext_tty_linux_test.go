//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"yolop.dev/packaging"
)

// openPTY returns the controller and the terminal end of a new
// pseudo-terminal.
func openPTY(t *testing.T) (ptmx, tty *os.File) {
	t.Helper()
	// Non-blocking descriptors are served by the runtime's poller, so
	// closing them ends a pending read (no goroutine outlives the test).
	pfd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	ptmx = os.NewFile(uintptr(pfd), "/dev/ptmx")
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		ptmx.Close()
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		ptmx.Close()
		t.Skipf("ptsname: %v", err)
	}
	// The terminal end stays blocking, as a real terminal is.
	tfd, err := unix.Open(fmt.Sprintf("/dev/pts/%d", n), unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		ptmx.Close()
		t.Skipf("opening the terminal end: %v", err)
	}
	tty = os.NewFile(uintptr(tfd), fmt.Sprintf("/dev/pts/%d", n))
	t.Cleanup(func() { tty.Close(); ptmx.Close() })
	return ptmx, tty
}

// TestInstallAsksOnATerminal answers the y/N question on a real
// pseudo-terminal: "n" installs nothing, "y" installs.
func TestInstallAsksOnATerminal(t *testing.T) {
	cfg := isolate(t)
	pkg := echoPackage(t)
	for _, tc := range []struct {
		answer    string
		installed bool
	}{{"n", false}, {"", false}, {"yes", true}} {
		ptmx, tty := openPTY(t)
		// The answer is typed ahead; the terminal buffers the line.
		if _, err := ptmx.Write([]byte(tc.answer + "\n")); err != nil {
			t.Fatal(err)
		}
		var out, errb syncBuf
		code := run(context.Background(), []string{"ext", "install", pkg}, tty, &out, &errb)
		if tc.installed != (code == 0) {
			t.Fatalf("answer %q: exit %d\n%s\n%s", tc.answer, code, out.String(), errb.String())
		}
		mustContain(t, "terminal install", out.String(), "Extension echo 0.1.0", "Install echo? [y/N]")
		_, err := os.Stat(filepath.Join(cfg, packaging.LockFileName))
		if tc.installed == os.IsNotExist(err) {
			t.Fatalf("answer %q: lock present = %v", tc.answer, err == nil)
		}
		if !tc.installed && !strings.Contains(errb.String(), "declined") {
			t.Fatalf("answer %q: stderr %s", tc.answer, errb.String())
		}
	}
}

// TestColourOnATerminal: with stdout a terminal, status words are coloured
// unless NO_COLOR is set or TERM is dumb.
func TestColourOnATerminal(t *testing.T) {
	isolate(t)
	pkg := echoPackage(t)
	if _, errOut, code := cli(t, "", "ext", "install", pkg, "--yes"); code != 0 {
		t.Fatalf("install: exit %d: %s", code, errOut)
	}
	for _, tc := range []struct {
		noColor, term string
		coloured      bool
	}{{"", "xterm", true}, {"1", "xterm", false}, {"", "dumb", false}} {
		t.Setenv("NO_COLOR", tc.noColor)
		t.Setenv("TERM", tc.term)
		ptmx, tty := openPTY(t)
		var errb syncBuf
		if code := run(context.Background(), []string{"ext", "list"}, strings.NewReader(""), tty, &errb); code != 0 {
			t.Fatalf("list: exit %d: %s", code, errb.String())
		}
		tty.Close()
		out := readAll(t, ptmx)
		if !strings.Contains(out, "ok") {
			t.Fatalf("NO_COLOR=%q TERM=%q: terminal output %q lacks the health", tc.noColor, tc.term, out)
		}
		if got := strings.Contains(out, sgrGood+"ok"+sgrReset); got != tc.coloured {
			t.Errorf("NO_COLOR=%q TERM=%q: coloured = %v, want %v: %q", tc.noColor, tc.term, got, tc.coloured, out)
		}
	}
}

// readAll reads what was written to the terminal end of ptmx until that
// end is closed (Linux then reports EIO); the deadline only catches a hang.
func readAll(t *testing.T, ptmx *os.File) string {
	t.Helper()
	if err := ptmx.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := ptmx.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("terminal output did not end: %q", b.String())
			}
			return b.String()
		}
	}
}
