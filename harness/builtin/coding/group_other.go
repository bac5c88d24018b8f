//go:build !unix

package coding

import (
	"os"
	"os/exec"
)

// newProcessGroup does nothing where there are no process groups.
func newProcessGroup(*exec.Cmd) {}

// signalGroup kills p; there is no group to signal.
func signalGroup(p *os.Process, _ bool) { _ = p.Kill() }
