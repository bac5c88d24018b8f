//go:build linux

package stdio

import (
	"errors"

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
func waitExitedNoReap(pid int) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return err == nil
		}
	}
}
