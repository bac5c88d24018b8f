//go:build linux

package stdio

import "fmt"

// SetPIDNamespaceModeForTest sets how servers started from now on get PID
// namespaces: "auto" (the default), "off" (the fallback, as when the kernel
// refuses them) or "userns" (with a user namespace even when privileged).
// It forgets a remembered refusal. The returned function restores the
// previous mode and refusal.
func SetPIDNamespaceModeForTest(mode string) (restore func()) {
	m := map[string]int32{"auto": nsAuto, "off": nsOff, "userns": nsUser}
	v, ok := m[mode]
	if !ok {
		panic(fmt.Sprintf("unknown PID namespace mode %q", mode))
	}
	prevMode, prevRefused := nsMode.Swap(v), nsRefused.Swap(false)
	return func() {
		nsMode.Store(prevMode)
		nsRefused.Store(prevRefused)
	}
}

// SetNSCloneflagsForTest adds flags to the clone flags of namespaced
// starts, so that a test can have the kernel refuse them; it forgets a
// remembered refusal. The returned function restores both.
func SetNSCloneflagsForTest(flags uintptr) (restore func()) {
	prevFlags, prevRefused := nsTestCloneflags.Swap(flags), nsRefused.Swap(false)
	return func() {
		nsTestCloneflags.Store(prevFlags)
		nsRefused.Store(prevRefused)
	}
}

// PIDNamespacesRefusedForTest reports whether a refusal is remembered.
func PIDNamespacesRefusedForTest() bool { return nsRefused.Load() }
