//go:build !linux

package lab

import "syscall"

// lockThread is false: there is no parent-death signal to tie to a
// thread.
const lockThread = false

// childAttr is nil: only Linux has a parent-death signal.
func childAttr() *syscall.SysProcAttr { return nil }
