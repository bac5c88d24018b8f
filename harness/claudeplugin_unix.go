//go:build unix

package harness

import (
	"os/exec"
	"syscall"
)

// ownGroup runs a hook command in a process group of its own and, when
// its firing is cancelled or times out, kills the whole group: the shell
// and what it started (a python3 the command line runs).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
