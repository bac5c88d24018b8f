package wasm

import (
	"errors"
	"fmt"
	"strings"

	"yolop.dev/core"
)

// Errors returned by [Transport.Start]. They are wrapped with the extension
// name and the details; match them with [errors.Is].
var (
	// ErrNoName means the spec has no extension name to run it under.
	ErrNoName = errors.New("server spec has no extension name")
	// ErrNoModule means the spec names no module file.
	ErrNoModule = errors.New("no WebAssembly module given")
	// ErrModuleNotFound means the module file does not exist.
	ErrModuleNotFound = errors.New("module not found")
	// ErrModuleOutsidePackage means a relative module path climbs out of
	// the package directory with "..".
	ErrModuleOutsidePackage = errors.New("module path leaves the package directory")
	// ErrNotWasm means the module file is not a WebAssembly binary, or is
	// a truncated or malformed one.
	ErrNotWasm = errors.New("not a WebAssembly module")
	// ErrNotCommand means the module is WebAssembly but not a WASI command:
	// it exports no _start function, or imports something the sandbox does
	// not provide.
	ErrNotCommand = errors.New("not a WASI command module")
	// ErrInvalidEnv means a variable in the spec's Env has an unusable name
	// or value.
	ErrInvalidEnv = errors.New("invalid environment variable")
	// ErrInvalidMount means an entry of [Options].FS cannot be mounted.
	ErrInvalidMount = errors.New("invalid mount")
	// ErrMountLink means a mount's host path passes through a symbolic
	// link below its Within directory (see [Mount]). It wraps
	// [ErrInvalidMount].
	ErrMountLink = fmt.Errorf("%w: symbolic link in the mount's path", ErrInvalidMount)
	// ErrMemoryCap means the module's initial memory is already larger
	// than the memory cap.
	ErrMemoryCap = errors.New("module needs more memory than the cap allows")
	// ErrClosed means the Transport has been closed.
	ErrClosed = errors.New("wasm transport closed")
)

// Signal names in a [core.ExitError] of an instance that did not exit on
// its own. A guest has no signals; these name what ended it in the form
// process transports use, so code that tells a crash from a kill by the
// Signal field works for both.
const (
	// SignalKill is the Signal of an instance the host closed: Kill, or
	// Stop once its grace ran out.
	SignalKill = "SIGKILL"
	// SignalTrap is the Signal of an instance that ended in a WebAssembly
	// trap (see [TrapError]).
	SignalTrap = "SIGTRAP"
)

// A TrapError reports a guest that ended in a WebAssembly trap: an
// unreachable instruction (how Rust and C abort, a panic included), an
// out-of-bounds memory access, an integer division by zero, a call stack
// exhausted, and the like. [errors.As] finds the *[core.ExitError] it
// wraps, with Code -1 and Signal [SignalTrap].
type TrapError struct {
	Exit *core.ExitError
	// Trap is the runtime's description, such as "wasm error: unreachable",
	// followed by the guest's stack trace when it has one.
	Trap string
}

func (e *TrapError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "extension %q stopped on a WebAssembly trap: %s", e.Exit.Name, firstLine(e.Trap))
	if len(e.Exit.Stderr) > 0 {
		b.WriteString("; last stderr lines:\n  ")
		b.WriteString(strings.Join(e.Exit.Stderr, "\n  "))
	}
	return b.String()
}

// Unwrap returns the exit error.
func (e *TrapError) Unwrap() error { return e.Exit }

// A MemoryLimitError reports a guest that tried to grow its linear memory
// past the cap ([Options].MaxMemoryMB) and ended. The refused grow is
// what a guest sees as out of memory: a Go guest exits with status 2
// ("fatal error: out of memory"), a Rust guest aborts with a trap. Err is
// how it ended, a *[core.ExitError] or a *[TrapError]; [errors.As] finds
// either through it.
type MemoryLimitError struct {
	Name string
	// Limit is the cap, in bytes.
	Limit uint64
	// Requested is the size, in bytes, that the first refused grow asked
	// for.
	Requested uint64
	Err       error
}

func (e *MemoryLimitError) Error() string {
	return fmt.Sprintf("extension %q ran out of memory: a grow to %s was refused, over its memory cap of %s (Options.MaxMemoryMB); %v",
		e.Name, mib(e.Requested), mib(e.Limit), e.Err)
}

// Unwrap returns how the guest ended.
func (e *MemoryLimitError) Unwrap() error { return e.Err }

func mib(n uint64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
