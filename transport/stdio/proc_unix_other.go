//go:build unix && !linux

package stdio

import "syscall"

// lockThread is false: only Linux has a per-thread parent-death signal.
const lockThread = false

// sysProcAttr puts the server in its own process group. There is no
// parent-death signal outside Linux: a server outlives a host killed with
// SIGKILL until it notices that its stdin is closed.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// waitExitedNoReap cannot wait without reaping here; it reports false and
// the caller reaps first and skips killing the rest of the group.
func waitExitedNoReap(pid int) bool { return false }
