//go:build linux

package stdio

import (
	"io"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestChildPipeModes checks the two ends childPipe makes: the child's is
// blocking (a server reading stdin with plain blocking reads, as Python's
// sys.stdin does, must never see EAGAIN) and the host's is non-blocking
// and polled, so that read deadlines work on it.
func TestChildPipeModes(t *testing.T) {
	for _, childReads := range []bool{true, false} {
		child, ours, err := childPipe(childReads)
		if err != nil {
			t.Fatal(err)
		}
		nonblock := func(f *os.File) bool {
			rc, err := f.SyscallConn()
			if err != nil {
				t.Fatal(err)
			}
			var flags uintptr
			rc.Control(func(fd uintptr) {
				flags, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
			})
			return flags&syscall.O_NONBLOCK != 0
		}
		if nonblock(child) {
			t.Errorf("childReads=%v: the child's end is non-blocking", childReads)
		}
		if !nonblock(ours) {
			t.Errorf("childReads=%v: the host's end is blocking", childReads)
		}
		// The host's end takes deadlines: a read or write that cannot
		// proceed returns at the deadline instead of blocking.
		if childReads {
			child.Close() // no reader: a write fails with EPIPE, not a hang
			if _, err := ours.Write([]byte("x")); err == nil {
				t.Error("a write with no reader succeeded")
			}
		} else {
			ours.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
			if _, err := ours.Read(make([]byte, 1)); !os.IsTimeout(err) {
				t.Errorf("a read from the host's end with nothing written: %v, want a timeout", err)
			}
			ours.SetReadDeadline(time.Time{})
			if _, err := child.Write([]byte("line\n")); err != nil {
				t.Fatal(err)
			}
			child.Close()
			b, err := io.ReadAll(ours)
			if err != nil || string(b) != "line\n" {
				t.Errorf("read %q, %v; want the child's line then EOF", b, err)
			}
		}
		child.Close()
		ours.Close()
	}
}
