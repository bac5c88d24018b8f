//go:build linux

package lab

import "syscall"

// lockThread says whether startChild must keep the forking thread: the
// parent-death signal is tied to it.
const lockThread = true

// childAttr arms SIGKILL as the server's parent-death signal.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
