// Package core holds the pieces every other yolop module builds on: the
// [Transport] seam that starts capability servers, and (in its
// subpackages) the YEP wire types ([yolop.dev/core/yep]), the multiplexed
// JSON-RPC connection ([yolop.dev/core/jsonrpc]), the author SDK
// ([yolop.dev/core/sdk]) and the host runtime ([yolop.dev/core/host]).
// [yolop.dev/core/transporttest] is an in-memory Transport for tests.
//
// core depends on the standard library and go-hclog only, so an extension
// author who imports the SDK pulls in nothing heavier.
package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// A ServerSpec says how to start one capability server instance.
type ServerSpec struct {
	// Name is the extension name. It labels log lines and error messages.
	Name string
	// Command is the executable. A bare name is resolved from the package's
	// bin/ directory first, then PATH.
	Command string
	// Args are passed to Command as they are.
	Args []string
	// Env holds the variables the manifest and config declare. They are
	// added to a scrubbed base environment; the host's own environment is
	// never passed through wholesale. Nil means the base environment only.
	Env map[string]string
	// Dir is the working directory. Empty means PackageDir.
	Dir string
	// PackageDir is the installed package directory; its bin/ is searched
	// first. Empty means no package directory.
	PackageDir string
	// Checksum is the hex SHA-256 the executable Command resolves to must
	// have: the digest the approval pinned for that file. A transport that
	// checks what it executes (go-plugin, through its SecureConfig) refuses
	// to start a file with another digest; transport/stdio leaves the check
	// to the grant's per-spawn verification, which re-hashes a changed
	// package. Empty means nothing is pinned: a path source, or a command
	// found outside the package.
	Checksum string

	// Transport names the transport that runs the server: "" or
	// [TransportStdio] (a subprocess), [TransportWASM] (a WebAssembly
	// module run in-process) or [TransportGoPlugin]. [Transports] routes a
	// start by it.
	Transport string
	// Module is the absolute path of the WebAssembly module a wasm
	// transport runs; Command is empty then.
	Module string
	// Mounts are the host directories a sandboxed server may see, each at
	// the same path in the guest. Nil means none.
	Mounts []Mount
	// MaxMemoryMB caps a sandboxed server's memory. Zero means the
	// transport's default.
	MaxMemoryMB int
	// Sandbox is the operating-system confinement a native (stdio or
	// go-plugin) server runs under. Nil means none: the server runs with
	// the user's rights. A transport that cannot apply it fully says so
	// (see [Confinement.Required]).
	Sandbox *Confinement
}

// A Confinement is what a native server may do beyond a baseline that lets
// its own program start (its executable or the interpreter its shebang
// names, the shared libraries it loads, /dev/null, a private temporary
// directory). It is part of the approved grant: the manifest's
// yolop.sandbox, a documented default for a package without one, or the
// user's own override.
type Confinement struct {
	// Paths are the files and directories the server may read, or read
	// and write. A leading [WorkspaceVar] is replaced at each start (see
	// [ExpandSandbox]); other placeholders are resolved when the grant is
	// built.
	Paths []ConfinedPath
	// Connect and Bind are the TCP ports the server may connect to and
	// listen on. Empty means none.
	Connect []uint16
	Bind    []uint16
	// Exec lets the server run programs other than its own executable
	// and interpreter.
	Exec bool
	// Required refuses to start the server when the rules cannot be
	// enforced in full (no Landlock, or a kernel ABI older than the rules
	// need), instead of starting it with what can be enforced.
	Required bool
	// Origin says where the rules come from, for status lines: "manifest",
	// "default" or "settings".
	Origin string
}

// A ConfinedPath is one file or directory a confined server may use.
type ConfinedPath struct {
	Path  string
	Write bool
}

// ExpandSandbox returns a copy of c with a leading [WorkspaceVar] in its
// paths replaced by workspace; such a path is dropped when there is no
// workspace, so a confined server never gets "/" by accident. Nil stays nil.
func ExpandSandbox(c *Confinement, workspace string) *Confinement {
	if c == nil {
		return nil
	}
	out := *c
	out.Paths = nil
	for _, p := range c.Paths {
		if rest, ok := strings.CutPrefix(p.Path, WorkspaceVar); ok {
			if workspace == "" {
				continue
			}
			p.Path = workspace + rest
		}
		out.Paths = append(out.Paths, p)
	}
	out.Connect = slices.Clone(c.Connect)
	out.Bind = slices.Clone(c.Bind)
	return &out
}

// A Mount is a host directory a sandboxed server may see.
type Mount struct {
	// Path is the host directory. A leading "${workspace}" is replaced with
	// the session's workspace root at each start (see [ExpandMounts]).
	Path string
	// ReadOnly refuses writes below Path.
	ReadOnly bool
	// Within is the directory Path lies in and may not leave: the
	// workspace root or the package directory. A sandboxing transport
	// opens Path from Within one component at a time and refuses a
	// symbolic link at any of them. Empty means no anchor is known; a
	// transport anchors a Path inside the spec's PackageDir there, and
	// takes any other as it stands.
	Within string
}

// WorkspaceVar, at the start of a [Mount] path, stands for the session's
// workspace root.
const WorkspaceVar = "${workspace}"

// ExpandMounts returns mounts with a leading [WorkspaceVar] replaced by
// workspace, and workspace as their Within. A mount of the workspace when
// there is none is dropped: a sandboxed server never gets "/" by accident.
func ExpandMounts(mounts []Mount, workspace string) []Mount {
	var out []Mount
	for _, m := range mounts {
		if rest, ok := strings.CutPrefix(m.Path, WorkspaceVar); ok {
			if workspace == "" {
				continue
			}
			m.Path, m.Within = workspace+rest, workspace
		}
		out = append(out, m)
	}
	return out
}

// Transport names in [ServerSpec].Transport.
const (
	TransportStdio    = "stdio"
	TransportWASM     = "wasm"
	TransportGoPlugin = "go-plugin"
)

// Transports is a [Transport] that starts each server with the transport
// its [ServerSpec].Transport names ("" means [TransportStdio]). A name
// with no entry fails with an error wrapping [ErrTransportUnavailable].
type Transports map[string]Transport

// ErrTransportUnavailable is wrapped by [Transports.Start] when the spec
// names a transport this host was built without.
var ErrTransportUnavailable = errors.New("transport not available")

// Start implements [Transport].
func (ts Transports) Start(ctx context.Context, spec ServerSpec) (Instance, error) {
	name := spec.Transport
	if name == "" {
		name = TransportStdio
	}
	t := ts[name]
	if t == nil {
		have := make([]string, 0, len(ts))
		for k := range ts {
			have = append(have, k)
		}
		slices.Sort(have)
		return nil, fmt.Errorf("extension %q runs over the %s transport: %w in this host (it has %s)", spec.Name, name, ErrTransportUnavailable, strings.Join(have, ", "))
	}
	return t.Start(ctx, spec)
}

// A Transport starts capability server instances.
//
// Start may be called concurrently. The returned [Instance] lives until it
// is stopped or killed, or its process exits; cancelling ctx after Start
// returns has no effect on it.
type Transport interface {
	Start(ctx context.Context, spec ServerSpec) (Instance, error)
}

// An Instance is one running capability server.
//
// Concurrency contract: Stdout is read by exactly one goroutine and Stdin
// written by exactly one writer at a time (the JSON-RPC connection's write
// lock). Stop, Kill, Done, Err and StderrTail may be called from any
// goroutine, any number of times. Stop and Kill unblock a pending Stdout
// read (it returns io.EOF or an error) once the process has exited.
//
// Whether the processes a server starts end with it, and with a host that
// is killed, is the transport's to document (transport/stdio ends them on
// Linux by running each server as the init of its own PID namespace).
type Instance interface {
	// Stdout is the server's message stream toward the host.
	Stdout() io.Reader
	// Stdin is the host's message stream toward the server.
	Stdin() io.WriteCloser
	// Stop closes stdin, waits up to grace for the process to exit, then
	// terminates it (SIGTERM, a short wait, SIGKILL) and reaps it. The
	// protocol-level shutdown request and exit notification are the
	// caller's to send before Stop. It returns the exit error, if any.
	Stop(grace time.Duration) error
	// Kill terminates the instance at once and reaps it.
	Kill() error
	// Done is closed when the process has exited and been reaped.
	Done() <-chan struct{}
	// Err reports how the process ended, once Done is closed: nil for a
	// clean exit, otherwise an *ExitError.
	Err() error
	// StderrTail returns the last lines the server wrote to stderr.
	StderrTail() []string
	// PID is the operating-system process id as the host sees it (in the
	// host's PID namespace, whatever namespace the server runs in), or 0 if
	// there is none.
	PID() int
}

// A Cooperative instance runs its server without preemption — a
// WebAssembly guest on one thread — so a handler stuck in a loop keeps the
// server from reading anything, a cancel included. The host probes such a
// server after a cancel and restarts it when it does not answer (see
// host.ExtensionOptions.CancelGrace). Instances of preemptive servers
// (processes) need not implement it.
type Cooperative interface {
	// Cooperative reports whether the server is scheduled cooperatively.
	Cooperative() bool
}

// An ExitError reports that a capability server process ended abnormally.
type ExitError struct {
	Name   string   // extension name
	Code   int      // exit code, or -1 when killed by a signal
	Signal string   // signal name when killed by one, else ""
	Stderr []string // the last stderr lines
}

func (e *ExitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "extension %q exited", e.Name)
	if e.Signal != "" {
		fmt.Fprintf(&b, " (signal %s)", e.Signal)
	} else {
		fmt.Fprintf(&b, " (exit status %d)", e.Code)
	}
	if len(e.Stderr) > 0 {
		b.WriteString("; last stderr lines:\n  ")
		b.WriteString(strings.Join(e.Stderr, "\n  "))
	}
	return b.String()
}
