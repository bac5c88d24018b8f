package confine

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ipprotoMPTCP is IPPROTO_MPTCP.
const ipprotoMPTCP = 262

func init() { mptcpFiltered = auditArch() != 0 }

// auditArch is this architecture's AUDIT_ARCH value for seccomp, 0 where
// the MPTCP filter is not built.
func auditArch() uint32 {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64
	}
	return 0
}

// denyMPTCP installs, on the calling thread (which then execs), a seccomp
// filter that fails socket(…, IPPROTO_MPTCP) with EPROTONOSUPPORT.
// Landlock's TCP rules apply to IPPROTO_TCP sockets only: a Multipath TCP
// socket would connect and bind anywhere (Go's listeners use MPTCP by
// default since Go 1.24). Programs fall back to plain TCP, which the
// rules cover. no_new_privs must be set already.
func denyMPTCP() error {
	arch := auditArch()
	if arch == 0 {
		return nil
	}
	const (
		ldAbs = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
		// Offsets in struct seccomp_data; args[2]'s low word on these
		// little-endian architectures.
		offNR, offArch, offArg2 = 0, 4, 16 + 2*8
	)
	prog := []unix.SockFilter{
		{Code: ldAbs, K: offArch},
		{Code: jeq, Jt: 0, Jf: 5, K: arch},
		{Code: ldAbs, K: offNR},
		{Code: jeq, Jt: 0, Jf: 3, K: unix.SYS_SOCKET},
		{Code: ldAbs, K: offArg2},
		{Code: jeq, Jt: 0, Jf: 1, K: ipprotoMPTCP},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPROTONOSUPPORT)},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	return unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0)
}
