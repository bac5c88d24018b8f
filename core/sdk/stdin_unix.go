//go:build unix

package sdk

import (
	"io"
	"os"
	"syscall"
)

// stdinReader returns stdin in a form whose Close interrupts a pending
// Read, so Serve can stop its reader after exit without waiting for the
// host to close the pipe. That needs the runtime poller, which Go only uses
// for a descriptor already in non-blocking mode; it is switched only when
// stdin is a pipe, never a terminal shared with a shell.
func stdinReader() io.Reader {
	fi, err := os.Stdin.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return os.Stdin
	}
	fd := int(os.Stdin.Fd())
	if err := syscall.SetNonblock(fd, true); err != nil {
		return os.Stdin
	}
	return os.NewFile(uintptr(fd), "/dev/stdin")
}
