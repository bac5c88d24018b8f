//go:build !linux

package testservers

import "time"

// ProcessCPU is not available on this platform.
func ProcessCPU(pid int) (time.Duration, bool) { return 0, false }

// SelfCPU is not available on this platform.
func SelfCPU() time.Duration { return 0 }
