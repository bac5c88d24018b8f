//go:build !unix

package stdio

import (
	"os"
	"syscall"
)

// Without process groups the transport cannot keep its promises, so Start
// refuses with ErrUnsupportedPlatform.
const (
	platformSupported = false
	lockThread        = false
)

var (
	sigTerm os.Signal = os.Kill
	sigKill os.Signal = os.Kill
)

func sysProcAttr() *syscall.SysProcAttr            { return nil }
func waitExitedNoReap(pid int) bool                { return false }
func signalGroup(pid int, sig os.Signal)           {}
func exitStatus(ps *os.ProcessState) (int, string) { return ps.ExitCode(), "" }
