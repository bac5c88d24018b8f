//go:build linux

package stdio

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"
)

// Each server is the init of a PID namespace of its own (see the package
// doc and docs/adr/0004-server-descendants.md). When a namespace's init
// dies, the kernel SIGKILLs every other process in it and the init becomes
// a zombie only once they are all gone; the server's parent-death SIGKILL
// reaches it across the namespace boundary. So a host killed with SIGKILL,
// a Stop and a Kill all take the whole tree, setsid or not.

// PID-namespace modes, set through the test hook in export_test.go.
const (
	nsAuto int32 = iota // a PID namespace; a user namespace too unless privileged
	nsOff               // no namespaces: the fallback, forced
	nsUser              // always with a user namespace, even when privileged
)

var (
	// nsMode is a test hook: nsAuto outside tests.
	nsMode atomic.Int32
	// nsTestCloneflags is a test hook: clone flags added to a namespaced
	// start, so that a test can have the kernel refuse it.
	nsTestCloneflags atomic.Uintptr
	// nsRefused records that the kernel refused the namespaces once in
	// this process: later starts do not try them again.
	nsRefused atomic.Bool
)

// privileged reports whether this process may create a PID namespace
// without a user namespace: it has CAP_SYS_ADMIN. Root does; in a user
// namespace of its own a server would lose its real privileges, so root's
// servers get no user namespace.
var privileged = sync.OnceValue(func() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[unix.CAP_SYS_ADMIN/32].Effective&(1<<(unix.CAP_SYS_ADMIN%32)) != 0
})

// usePIDNamespace reports whether the next server should get a PID
// namespace of its own.
func usePIDNamespace() bool {
	return nsMode.Load() != nsOff && !nsRefused.Load()
}

// sysProcAttr puts the server in its own process group and arms SIGKILL as
// its parent-death signal; with pidns set, it also makes the server the
// init of a new PID namespace, inside a user namespace that maps only our
// own uid and gid when we are not privileged.
//
// The runtime checks in the child, after arming the parent-death signal,
// that the parent is still alive, so a host that dies during the fork does
// not leave an orphan. In a new PID namespace that check cannot work (the
// parent is outside it, so getppid returns 0, and the signal the child
// then sends itself is one a namespace init ignores): that one window is
// left open there.
func sysProcAttr(pidns bool) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if !pidns {
		return attr
	}
	attr.Cloneflags = syscall.CLONE_NEWPID | nsTestCloneflags.Load()
	if nsMode.Load() == nsUser || !privileged() {
		uid, gid := os.Geteuid(), os.Getegid()
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	}
	return attr
}

// nsRefusal reports whether a namespaced start's error may be the kernel
// refusing the namespaces: not permitted (EPERM, or EACCES from a security
// module), not built in (EINVAL), or over a namespace count or nesting
// limit (ENOSPC, EUSERS on old kernels). The caller retries without them
// to tell that apart from a failing command.
func nsRefusal(err error) bool {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return false
	}
	switch errno {
	case syscall.EPERM, syscall.EACCES, syscall.EINVAL, syscall.ENOSPC, syscall.EUSERS:
		return true
	}
	return false
}

// noteNSRefused remembers, once per process, that namespaces were refused,
// and logs it at debug level.
func noteNSRefused(log hclog.Logger, err error) {
	if nsRefused.CompareAndSwap(false, true) {
		log.Debug("PID namespaces are not permitted here; servers run without them from now on, so a descendant that leaves a server's process group can outlive its stop, and a host killed with SIGKILL leaves the server's descendants running", "error", err)
	}
}

// initDropsTerm reports whether pid, as the init of a PID namespace, would
// drop a SIGTERM that would have killed it anywhere else: SIGTERM is
// neither caught, nor ignored, nor blocked (a blocked signal waits for
// sigwait or a signalfd). The kernel discards such a signal for a
// namespace init. It reports false when it cannot tell.
func initDropsTerm(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	const bit = uint64(1) << (syscall.SIGTERM - 1)
	seen := 0
	for _, line := range strings.Split(string(data), "\n") {
		name, val, ok := strings.Cut(line, ":")
		if !ok || (name != "SigBlk" && name != "SigIgn" && name != "SigCgt") {
			continue
		}
		mask, err := strconv.ParseUint(strings.TrimSpace(val), 16, 64)
		if err != nil || mask&bit != 0 {
			return false
		}
		seen++
	}
	return seen == 3
}
