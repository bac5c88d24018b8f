//go:build linux

package stdio

import (
	"os"
	"syscall"
)

// childPipe returns a pipe for one of the child's standard streams, the
// child reading from it when childReads. The child's end is a plain
// blocking descriptor the host never reads or writes, so it is neither
// made non-blocking nor registered with the runtime's poller: os.Pipe does
// both, then starting the child sets it back to blocking and closing it
// unregisters it, five system calls per stream that a server start pays
// for nothing. The host's end is non-blocking and polled, as os.Pipe's.
func childPipe(childReads bool) (child, ours *os.File, err error) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	cfd, ofd := p[0], p[1]
	if !childReads {
		cfd, ofd = p[1], p[0]
	}
	// A new pipe has no status flags set, so O_NONBLOCK is the whole set:
	// no F_GETFL first.
	if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(ofd), syscall.F_SETFL, syscall.O_NONBLOCK); e != 0 {
		syscall.Close(p[0])
		syscall.Close(p[1])
		return nil, nil, os.NewSyscallError("fcntl", e)
	}
	// os.NewFile sees O_NONBLOCK on our end and polls it; the child's end
	// stays a blocking file.
	return os.NewFile(uintptr(cfd), "|child"), os.NewFile(uintptr(ofd), "|host"), nil
}
