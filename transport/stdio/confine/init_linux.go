package confine

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Init runs when this package is initialised (a binary that links it is
// its own launcher, re-executed); calling it again is harmless. In a
// process started as a launcher it applies the rules and execs the server,
// or runs the probes, and never returns; in any other process it returns
// at once.
func Init() {
	if len(os.Args) == 2 && os.Args[1] == probeArg {
		if raw, ok := os.LookupEnv(probeEnv); ok {
			runProbeProcess(raw)
		}
		return
	}
	if len(os.Args) != 2 || os.Args[1] != launcherArg {
		return
	}
	// The rules are applied to this thread only, which then execs: the
	// new program starts with this thread's domain and no_new_privs, and
	// so do all its threads and children. (Restricting every thread of
	// the Go runtime, as go-landlock's Restrict does, is not needed before
	// an exec, and its all-threads mechanism can hang in a process that
	// is a PID namespace's init.)
	runtime.LockOSThread()
	p, fail, ok := launcherPlan()
	if !ok {
		return
	}
	if err := apply(p); err != nil {
		fail("apply the sandbox: %v", err)
	}
	program, args, env := p.Program, p.Args, os.Environ()
	if p.Probe != nil {
		// The probes run in a fresh exec of this binary, so that every
		// thread they use is confined.
		ops, err := json.Marshal(p.Probe)
		if err != nil {
			fail("sandbox launcher: %v", err)
		}
		if program, err = os.Executable(); err != nil {
			fail("sandbox launcher: %v", err)
		}
		args = []string{program, probeArg}
		env = append(env, probeEnv+"="+string(ops))
	}
	err := syscall.Exec(program, args, env)
	fail("exec %s in the sandbox: %v", p.Program, err)
}

// configs are the go-landlock configurations by ABI.
var configs = []landlock.Config{1: landlock.V1, 2: landlock.V2, 3: landlock.V3, 4: landlock.V4, 5: landlock.V5, 6: landlock.V6, 7: landlock.V7}

const (
	rRead  = ll.AccessFSReadFile | ll.AccessFSReadDir
	rExec  = ll.AccessFSExecute
	rWrite = ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeChar |
		ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo |
		ll.AccessFSMakeBlock | ll.AccessFSMakeSym | ll.AccessFSTruncate
	// rFile are the rights that apply to a file (not a directory).
	rFile = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate
)

// apply restricts this process (all its threads) to the plan's rules.
func apply(p plan) error {
	abi := min(p.ABI, maxABI)
	if abi < abiFS {
		return nil // unsandboxed; Required was checked by the transport
	}
	cfg := configs[abi].BestEffort()
	var handled uint64 = rRead | rExec | rWrite
	if abi < abiTruncate {
		handled &^= ll.AccessFSTruncate
	}
	var rules []landlock.Rule
	add := func(paths []string, rights uint64) {
		for _, path := range paths {
			st, err := os.Stat(path)
			if err != nil {
				continue // a missing path grants nothing
			}
			r := rights & handled
			if !st.IsDir() {
				r &= rFile
			}
			if r != 0 {
				rules = append(rules, landlock.PathAccess(landlock.AccessFSSet(r), path))
			}
		}
	}
	add(p.Read, rRead)
	add(p.Write, rRead|rWrite)
	add(p.Exec, rRead|rExec)
	if abi >= abiTCP {
		for _, port := range p.Connect {
			rules = append(rules, landlock.ConnectTCP(port))
		}
		for _, port := range p.Bind {
			rules = append(rules, landlock.BindTCP(port))
		}
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return err
	}
	if fd < 0 {
		return nil // nothing to restrict at this ABI
	}
	defer syscall.Close(fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	if abi >= abiTCP {
		if err := denyMPTCP(); err != nil {
			return fmt.Errorf("seccomp filter against MPTCP sockets: %w", err)
		}
	}
	return nil
}

// runProbeProcess runs the probes of a probe launch, in the process the
// launcher exec'd under the rules, and exits.
func runProbeProcess(raw string) {
	os.Unsetenv(probeEnv)
	var pp probePlan
	if err := json.Unmarshal([]byte(raw), &pp); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox probe: bad plan:", err)
		os.Exit(2)
	}
	runProbes(plan{Probe: &pp}, os.Stdout)
	os.Exit(0)
}
