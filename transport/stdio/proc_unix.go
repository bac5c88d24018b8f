//go:build unix

package stdio

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

var (
	sigTerm os.Signal = syscall.SIGTERM
	sigKill os.Signal = syscall.SIGKILL
)

const platformSupported = true

// signalGroup sends sig to the process group led by pid.
func signalGroup(pid int, sig os.Signal) {
	if s, ok := sig.(syscall.Signal); ok && pid > 0 {
		_ = syscall.Kill(-pid, s)
	}
}

// exitStatus decodes how a reaped process ended: its exit code, or -1 and
// the signal's name when a signal killed it.
func exitStatus(ps *os.ProcessState) (code int, signal string) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		name := unix.SignalName(ws.Signal())
		if name == "" {
			name = ws.Signal().String()
		}
		return -1, name
	}
	return ps.ExitCode(), ""
}
