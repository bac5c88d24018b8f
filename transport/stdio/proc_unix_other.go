//go:build unix && !linux

package stdio

import (
	"syscall"

	"github.com/hashicorp/go-hclog"
)

// lockThread is false: only Linux has a per-thread parent-death signal.
const lockThread = false

// sysProcAttr puts the server in its own process group. There is no
// parent-death signal and no PID namespace outside Linux: a server outlives
// a host killed with SIGKILL until it notices that its stdin is closed, and
// its descendants are reached only through its process group.
func sysProcAttr(pidns bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// Without PID namespaces there is nothing to try, refuse or emulate.
func usePIDNamespace() bool                     { return false }
func nsRefusal(err error) bool                  { return false }
func noteNSRefused(log hclog.Logger, err error) {}
func initDropsTerm(pid int) bool                { return false }

// waitExitedNoReap cannot wait without reaping here; it reports false and
// the caller reaps first and skips killing the rest of the group.
func waitExitedNoReap(pid int) bool { return false }
