// Package wasm is a [core.Transport] that runs each capability server as a
// WebAssembly module (WASI preview 1, "wasip1") inside the host process,
// under the wazero runtime, and speaks to it over its standard streams as
// if it were a subprocess: what the guest writes to file descriptor 1 is
// the message stream toward the host, what it reads from descriptor 0 the
// stream toward the server, and descriptor 2 is a diagnostic channel that
// is logged (capped, rate-limited, redacted, never parsed) and kept as a
// short tail for error messages. A server built with [yolop.dev/core/sdk]
// for GOOS=wasip1 GOARCH=wasm runs unchanged, as does any wasip1 command
// that speaks YEP (a Rust one built for wasm32-wasip1, for instance).
//
// A Go guest must not call os/signal.Notify (or signal.NotifyContext): on
// wasip1 the goroutine it starts waits by yielding without ever sleeping,
// so the guest's scheduler never polls stdin and the server falls silent
// after its first message. The transport logs a warning when it compiles
// such a module.
//
// # Naming the module
//
// [core.ServerSpec].Command names the module file: an absolute path, or a
// path relative to PackageDir (or Dir when there is no package directory)
// that may not climb out of it. There is no PATH search and no bin/
// lookup: a relative name is a file in the package. Args become the
// guest's argv after argv[0], which is Command as given. Env is the
// guest's whole environment. Dir plays no other part: a guest has no
// working directory beyond the mounts it is given.
//
// # The sandbox
//
// What every [Instance] gets, whatever its module asks for:
//
//   - No file system. Descriptors 0, 1 and 2 are the only files; opening
//     any path fails (with EBADF or ENOENT, depending on the guest's
//     libc) until [Options].FS mounts host directories, read-only or
//     read-write. A mount resolves every path inside its directory with
//     [os.Root], so neither "..", an absolute symbolic link nor one that
//     climbs out (one the guest made itself included) reaches beyond it;
//     a read-only mount refuses every change with EROFS. The mounted
//     directory itself is opened from its [Mount].Within (the workspace
//     root or the package directory) one component at a time at every
//     start, and a symbolic link on the way refuses the start with
//     [ErrMountLink].
//   - No network. No socket is preopened and wasip1 has no call that
//     creates one: sock_accept on any descriptor fails with EBADF.
//   - No host environment: the guest sees exactly the spec's Env.
//   - Clocks: the monotonic clock, which timers and sleeps need, and the
//     wall clock, which Go's time.Now (and so every log timestamp) reads;
//     both are the host's, at microsecond resolution. Sleeps are real
//     sleeps.
//   - Random numbers from the host's crypto/rand.
//   - A memory cap: [Options].MaxMemoryMB (256 MiB by default) bounds the
//     guest's linear memory. A grow past it fails inside the guest, which
//     sees it as out of memory (a Go guest exits with status 2, a Rust
//     one aborts), and the instance's error is a [*MemoryLimitError]
//     naming the cap.
//   - A CPU guard: the runtime checks for closure at every function entry
//     and loop back-edge (wazero's WithCloseOnContextDone), so Stop and
//     Kill end a guest that spins in a loop. A cancel request for a tool
//     call is only a message to the guest: a Go guest runs one goroutine
//     at a time, so a goroutine in a tight loop keeps the guest from even
//     reading it. The host's tool-call timeout and Stop are what end
//     such a call. The checks cost a Go guest about 3× in CPU (wazero
//     leaves compiled code for each one); see docs/performance.md.
//   - No threads and no other imports: a module that imports anything
//     but wasi_snapshot_preview1 is refused by Start ([ErrNotCommand]).
//
// A guest cannot start processes, so nothing outlives its instance.
//
// # Compile caches
//
// Compiling a module to native code takes seconds for a Go server. A
// Transport compiles each distinct module (by SHA-256 of its bytes) once,
// keeps the result for later Starts, and releases it on [Transport.Close].
// With [Options].CacheDir set, the compiled code is also persisted: a new
// Transport, in this process or another, loads it instead of compiling.
// Every persisted entry is authenticated with an HMAC-SHA256 over its files
// before the runtime may read it; an entry that fails the check, or that
// the runtime cannot load, is logged, removed and rebuilt, never fatal.
// Concurrent compiles of the same module, by Transports or processes,
// serialise on a file lock, and the later ones load what the first wrote.
// [Transport.Stats] counts compiles, cache hits and discarded entries.
//
// # Ending
//
// [Instance.Stop] closes stdin, waits up to its grace for the guest to
// end on its own, then closes the module; [Instance.Kill] closes it at
// once. Either wakes a guest that waits on stdin, stdout or a sleep, and
// returns once the guest has ended and every goroutine of the instance has
// finished. [Instance.Err] reports the end the way a process's
// [core.ExitError] does (exit(n) as Code n, a closure by the host as
// Signal [SignalKill], a trap as a [*TrapError] with Signal [SignalTrap]),
// and [Instance.PID] is 0. As a safety net, an instance that becomes
// unreachable without Stop or Kill is closed by a cleanup registered with
// [runtime.AddCleanup], with a warning.
package wasm
