//go:build unix

package main

import (
	"io"
	"os"
	"syscall"
)

// pollableTTY returns a reader of the terminal in whose pending Read a
// Close interrupts: a duplicate of its descriptor in non-blocking mode,
// served by the runtime's poller. release puts the terminal back in
// blocking mode (the mode is shared with the shell that runs yolop).
func pollableTTY(f *os.File) (io.ReadCloser, func(), error) {
	fd := int(f.Fd())
	dup, err := syscall.Dup(fd)
	if err != nil {
		return nil, nil, err
	}
	if err := syscall.SetNonblock(dup, true); err != nil {
		syscall.Close(dup)
		return nil, nil, err
	}
	return os.NewFile(uintptr(dup), f.Name()), func() { _ = syscall.SetNonblock(fd, false) }, nil
}
