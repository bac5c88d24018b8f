//go:build !unix

package stdio

import (
	"os"
	"syscall"

	"github.com/hashicorp/go-hclog"
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

func sysProcAttr(pidns bool) *syscall.SysProcAttr  { return nil }
func usePIDNamespace() bool                        { return false }
func nsRefusal(err error) bool                     { return false }
func noteNSRefused(log hclog.Logger, err error)    {}
func initDropsTerm(pid int) bool                   { return false }
func waitExitedNoReap(pid int) bool                { return false }
func signalGroup(pid int, sig os.Signal)           {}
func exitStatus(ps *os.ProcessState) (int, string) { return ps.ExitCode(), "" }
