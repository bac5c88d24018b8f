//go:build !wasip1

package main

import "syscall"

// errNotCapable is wasip1's ENOTCAPABLE; the guest only runs there, but
// builds everywhere so that go vet sees it.
const errNotCapable = syscall.Errno(76)
