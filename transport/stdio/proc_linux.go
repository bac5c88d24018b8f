//go:build linux

package stdio

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockThread says whether the goroutine that starts a server must stay
// locked to its OS thread until the server is reaped. On Linux it must: the
// parent-death signal fires when the *thread* that forked the child exits
// (prctl(2); golang/go#27505), and the Go runtime ends a thread when a
// goroutine exits while locked to it.
const lockThread = true

// waitExitedNoReap blocks until process pid has exited, leaving it a zombie
// (waitid with WNOWAIT), and reports true. While the zombie is unreaped its
// pid, and so its process group id, cannot be reused, which makes it safe
// to kill what is left of the group.
//
// Where the kernel has non-blocking pidfds (Linux 5.10) it waits in the
// runtime's poller on one, so a server's whole life does not hold one of
// the process's Ps in a blocking waitid: the runtime takes a P back from a
// blocking system call only after 10 ms when nothing else is queued, and
// its monitor thread keeps waking every 20 µs meanwhile. Elsewhere it
// waits in waitid.
func waitExitedNoReap(pid int) bool {
	if exited, ok := pollExited(pid); ok {
		return exited
	}
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return err == nil
		}
	}
}

// pollExited waits for pid to exit on a non-blocking pidfd in the
// runtime's poller, reporting ok false when it cannot (no pidfds, or none
// the poller takes) so that the caller waits in waitid.
func pollExited(pid int) (exited, ok bool) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return false, false
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return false, false
	}
	var werr error
	err = rc.Read(func(fd uintptr) bool {
		// A non-blocking pidfd makes waitid fail with EAGAIN while the
		// process runs; the pidfd turns readable when it exits.
		var info unix.Siginfo
		werr = unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOWAIT, nil)
		return !errors.Is(werr, unix.EAGAIN) && !errors.Is(werr, unix.EINTR)
	})
	if err != nil {
		return false, false // not pollable after all: wait in waitid
	}
	return werr == nil, true
}
