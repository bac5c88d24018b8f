//go:build !linux

package confine

import (
	"encoding/json"
	"fmt"
	"os"
	"syscall"
)

// Init runs when this package is initialised (a binary that links it is
// its own launcher); calling it again is harmless. On this platform there is no OS sandbox: a launcher process
// execs the server unconfined (its [Report] says so) and probes report
// every forbidden access as not blocked.
func Init() {
	if len(os.Args) != 2 || os.Args[1] != launcherArg {
		return
	}
	raw, ok := os.LookupEnv(planEnv)
	if !ok {
		return
	}
	os.Unsetenv(planEnv)
	syscall.CloseOnExec(statusFD)
	status := os.NewFile(statusFD, "confine-status")
	status.Write([]byte{statusAlive})
	fail := func(format string, args ...any) {
		status.Write(append([]byte{statusFailed}, fmt.Sprintf(format, args...)...))
		os.Exit(126)
	}
	var p plan
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		fail("sandbox launcher: bad plan: %v", err)
	}
	if p.Probe != nil {
		runProbes(p, os.Stdout)
		os.Exit(0)
	}
	err := syscall.Exec(p.Program, p.Args, os.Environ())
	fail("exec %s: %v", p.Program, err)
}
