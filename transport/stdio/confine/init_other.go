//go:build !linux

package confine

import (
	"os"
	"syscall"
)

// Init runs when this package is initialised (a binary that links it is
// its own launcher); calling it again is harmless. On this platform there
// is no OS sandbox: a launcher process execs the server unconfined (its
// [Report] says so) and probes report every forbidden access as not
// blocked.
func Init() {
	if len(os.Args) != 2 || os.Args[1] != launcherArg {
		return
	}
	p, fail, ok := launcherPlan()
	if !ok {
		return
	}
	if p.Probe != nil {
		runProbes(p, os.Stdout)
		os.Exit(0)
	}
	err := syscall.Exec(p.Program, p.Args, os.Environ())
	fail("exec %s: %v", p.Program, err)
}
