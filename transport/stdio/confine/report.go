package confine

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"

	"yolop.dev/core"
)

// The Landlock ABI versions the rules need.
const (
	abiFS       = 1 // file system rules
	abiTruncate = 3 // truncate(2) is a write right
	abiTCP      = 4 // TCP connect and bind
	abiScope    = 6 // signals and abstract unix sockets scoped to the sandbox
	// maxABI is the highest ABI the launcher asks for; newer kernels are
	// asked for exactly this, so the rules mean the same everywhere.
	maxABI = 7
)

// A Report says what this machine enforces of a [core.Confinement]. It is
// honest by construction: it never claims a part the kernel cannot enforce.
type Report struct {
	// Declared is false when there was no confinement to enforce (a nil
	// *core.Confinement).
	Declared bool
	// OS is runtime.GOOS.
	OS string
	// ABI is the kernel's Landlock ABI version; 0 when it has none (and on
	// every other platform).
	ABI int
	// Missing lists the parts of the rules this kernel does not enforce,
	// such as "TCP rules not enforced". Empty when they are all enforced.
	Missing []string
	// Notes lists what is not confined at this ABI although the rules do
	// not ask for it (signals and abstract unix sockets before ABI 6);
	// they do not make the report partial.
	Notes []string
}

// Enforced reports whether any rule is enforced at all.
func (r Report) Enforced() bool { return r.Declared && r.ABI >= abiFS }

// Full reports whether every rule is enforced: what [core.Confinement.Required]
// demands.
func (r Report) Full() bool { return r.Enforced() && len(r.Missing) == 0 }

// String is the one-line status shown by the consent summary, ext info and
// /status: "sandboxed (Landlock ABI 7)", "unsandboxed (kernel has no
// Landlock)", "partly sandboxed: TCP rules not enforced (Landlock ABI 3)".
func (r Report) String() string {
	switch {
	case !r.Declared:
		return "unsandboxed (no sandbox declared)"
	case r.OS != "linux":
		return fmt.Sprintf("unsandboxed (no OS sandbox on %s)", r.OS)
	case r.ABI < abiFS:
		return "unsandboxed (kernel has no Landlock)"
	case len(r.Missing) > 0:
		return fmt.Sprintf("partly sandboxed: %s (Landlock ABI %d)", strings.Join(r.Missing, ", "), r.ABI)
	case len(r.Notes) > 0:
		return fmt.Sprintf("sandboxed (Landlock ABI %d; %s)", r.ABI, strings.Join(r.Notes, ", "))
	default:
		return fmt.Sprintf("sandboxed (Landlock ABI %d)", r.ABI)
	}
}

// Check reports what this machine enforces of c. A nil c gives a report
// whose String says nothing is declared.
func Check(c *core.Confinement) Report {
	return reportFor(c, runtime.GOOS, KernelABI())
}

func reportFor(c *core.Confinement, goos string, abi int) Report {
	r := Report{Declared: c != nil, OS: goos, ABI: abi}
	if goos != "linux" {
		r.ABI = 0
		return r
	}
	if c == nil || abi < abiFS {
		return r
	}
	if abi < abiTruncate {
		r.Missing = append(r.Missing, "truncation not restricted")
	}
	if abi < abiTCP {
		// With no ports declared the rule is "no TCP at all", which needs
		// the same ABI as a port list.
		r.Missing = append(r.Missing, "TCP rules not enforced")
	}
	if abi >= abiTCP && !mptcpFiltered {
		// Landlock's TCP rules do not cover Multipath TCP sockets, and the
		// launcher's seccomp filter against them exists for amd64 and
		// arm64 only.
		r.Missing = append(r.Missing, "MPTCP sockets not blocked")
	}
	if abi < abiScope {
		r.Notes = append(r.Notes, "signals and abstract unix sockets not scoped")
	}
	return r
}

// mptcpFiltered reports whether the launcher can fail MPTCP sockets on
// this architecture (set in mptcp_linux.go).
var mptcpFiltered bool

// abiOverride, when >= 0, replaces the kernel's ABI (a test hook).
var abiOverride atomic.Int32

func init() { abiOverride.Store(-1) }

// KernelABI is the Landlock ABI version of the running kernel, 0 when it
// has none or on other platforms, capped at the highest version the
// launcher uses.
func KernelABI() int {
	if v := abiOverride.Load(); v >= 0 {
		return int(v)
	}
	return min(kernelABI(), maxABI)
}

// SetKernelABIForTesting makes this process behave as if the kernel had
// Landlock ABI abi (0: none) when checking and launching, until the
// returned function restores it. It can only lower what is enforced: the
// launcher asks the kernel for no more than abi. For tests only.
func SetKernelABIForTesting(abi int) (restore func()) {
	prev := abiOverride.Swap(int32(abi))
	return func() { abiOverride.Store(prev) }
}
