//go:build unix

package coding

import (
	"os"
	"os/exec"
	"syscall"
)

// newProcessGroup makes the command the leader of a process group of its
// own, so everything it starts can be signalled at once.
func newProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends SIGTERM, or SIGKILL when kill is set, to the process
// group p leads. A group with no process left is not an error.
func signalGroup(p *os.Process, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-p.Pid, sig)
}
