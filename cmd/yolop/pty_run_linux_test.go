//go:build linux

package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A ptyRun is yolop run in-process on a real pseudo-terminal of 100×30
// columns and rows, with everything the terminal was sent.
type ptyRun struct {
	t      *testing.T
	args   []string
	ptmx   interface{ Write([]byte) (int, error) }
	screen syncBuf
	errb   syncBuf
	done   chan int
	// output has a token when the terminal was sent something since it
	// was last taken.
	output chan struct{}
}

// ptyTimeout ends a hung test; it measures nothing.
const ptyTimeout = 2 * time.Minute

// startPTY runs yolop with args on a new pseudo-terminal.
func startPTY(t *testing.T, args ...string) *ptyRun {
	t.Helper()
	ptmx, tty := openPTY(t)
	if err := unix.IoctlSetWinsize(int(ptmx.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 30, Col: 100}); err != nil {
		t.Fatal(err)
	}
	p := &ptyRun{t: t, args: args, ptmx: ptmx, done: make(chan int, 1), output: make(chan struct{}, 1)}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			p.screen.Write(b[:n])
			select {
			case p.output <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { p.done <- run(context.Background(), args, tty, tty, &p.errb) }()
	return p
}

// typeIn sends s as typed keys.
func (p *ptyRun) typeIn(s string) {
	p.t.Helper()
	if _, err := p.ptmx.Write([]byte(s)); err != nil {
		p.t.Fatal(err)
	}
}

// wait waits until the terminal has been sent want n times in all,
// looking again each time something more arrives.
func (p *ptyRun) wait(want string, n int) {
	p.t.Helper()
	timeout := time.NewTimer(ptyTimeout)
	defer timeout.Stop()
	for strings.Count(p.screen.String(), want) < n {
		select {
		case <-p.output: // look again
		case <-timeout.C:
			p.t.Fatalf("yolop %v: the screen never showed %q %d times:\n%q\nstderr: %s", p.args, want, n, p.screen.String(), p.errb.String())
		}
	}
}

// exit waits for yolop to end and returns its exit code.
func (p *ptyRun) exit() int {
	p.t.Helper()
	select {
	case code := <-p.done:
		return code
	case <-time.After(ptyTimeout):
		p.t.Fatalf("yolop %v did not end:\n%q\nstderr: %s", p.args, p.screen.String(), p.errb.String())
	}
	return 0
}

// String is everything the terminal was sent.
func (p *ptyRun) String() string { return p.screen.String() }
