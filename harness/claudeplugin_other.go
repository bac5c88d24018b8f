//go:build !unix

package harness

import "os/exec"

// ownGroup leaves the command as it is: killing it on cancellation (the
// default) is what the platform offers.
func ownGroup(*exec.Cmd) {}
