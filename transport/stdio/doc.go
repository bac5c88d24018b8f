// Package stdio is a [core.Transport] that runs each capability server as a
// local subprocess and speaks to it over the process's standard streams:
// the server's stdout is the message stream toward the host, its stdin the
// stream toward the server, and its stderr is a diagnostic channel that is
// logged (capped, rate-limited, redacted, never parsed) and kept as a short
// tail for crash messages.
//
// What a [Transport] guarantees for every [Instance] it starts:
//
//   - The command is resolved from the package's bin/ directory first, then
//     from the PATH of the server's own (scrubbed) environment. A relative
//     command path may not climb out of the package directory.
//   - The server gets a scrubbed environment: a small allowlist taken from
//     the host (see [DefaultEnvAllowlist]) plus exactly the variables the
//     spec declares. Host variables that look like credentials never pass,
//     even when an allowlist pattern matches them.
//   - The server runs in its own process group. Stop and Kill signal the
//     whole group, and when the server's main process exits the rest of its
//     group is killed too, so a grandchild holding the pipes cannot keep the
//     message stream open or outlive the server.
//   - On Linux the server gets a parent-death signal (SIGKILL), armed from a
//     goroutine locked to its OS thread for the life of the process (see
//     golang/go#27505), so it dies with the host even when the host is
//     killed with SIGKILL. Other Unix systems lack that guarantee.
//   - On Linux the server is also the init of a PID namespace of its own
//     (inside a user namespace that maps only the host's uid and gid, when
//     the host lacks CAP_SYS_ADMIN). When a namespace's init dies, the
//     kernel kills every other process in the namespace, and the server is
//     reaped only once they are all gone: every descendant of the server,
//     one that called setsid or ignores SIGTERM included, dies with it,
//     whether by Stop, Kill, its own exit or the parent-death signal of a
//     host killed with SIGKILL. [Instance.PID] is the pid as the host sees
//     it. See docs/adr/0004-server-descendants.md.
//   - When the spec has a Sandbox, the server is started through the
//     launcher of package confine ([Options.Launcher], by default this
//     executable, a launcher because it links package confine): it applies
//     the Landlock rules and execs the server, which keeps the pid and
//     everything above, gets a private TMPDIR removed when it is reaped,
//     and is refused when the sandbox is required and the kernel cannot
//     enforce it. See docs/security.md and
//     docs/adr/0017-confining-native-servers.md.
//   - Every started process is reaped by exactly one goroutine, and every
//     goroutine an instance starts has finished when Stop or Kill returns.
//
// The owner of an [Instance] (the host session) must call Stop or Kill when
// it is done with it. As a safety net, an instance that becomes unreachable
// without either (its handle and both of its streams dropped) is killed by a
// cleanup registered with [runtime.AddCleanup]; a warning is logged, since it
// means an owner forgot to stop it.
//
// # Running as the init of a PID namespace
//
// A server sees itself as pid 1, and the pids it gets from fork, and that
// its children see, are its namespace's. Being init changes a few things
// for it:
//
//   - The kernel drops a signal it has no handler for, unless that is
//     SIGKILL or SIGSTOP from outside the namespace (the host's) or a fault
//     of its own (SIGSEGV, SIGBUS, ...). So a server cannot kill itself with
//     a signal (kill(getpid(), ...), raise, a re-raise after cleanup), and a
//     Go server that gets SIGTERM exits with status 2 where it would have
//     died of the signal: the Go runtime's re-raise is dropped.
//   - Stop's SIGTERM would be dropped for a server that neither handles,
//     ignores nor blocks SIGTERM; the transport then sends it SIGKILL right
//     away, which is what SIGTERM would have done, and its [core.ExitError]
//     says SIGKILL. A server that ignores SIGTERM is killed after TermGrace
//     as before.
//   - Orphaned descendants are reparented to the server: they stay zombies
//     until it waits for them or exits.
//   - /proc is the host's (there is no mount namespace), so /proc/self is
//     right but /proc/<getpid()> is not the server; every server is pid 1,
//     so names made from the pid (pid files, /tmp/x.$$) can collide.
//   - In a user namespace (an unprivileged host), files of unmapped users
//     show as owned by the overflow id (nobody), set-user-ID and
//     set-group-ID programs run without their privilege (sudo fails), and
//     setgroups is denied. File access itself is unchanged. Starting a
//     server costs a few milliseconds more there: the Go runtime cannot use
//     vfork when it creates a user namespace (see BenchmarkSpawn).
//
// # Limits
//
// Where the kernel refuses PID namespaces (EPERM, EACCES, EINVAL, ENOSPC,
// EUSERS: user namespaces disabled by sysctl or a security module, a
// seccomp profile such as a container's, a namespace count or nesting
// limit) and a plain start of the same server then succeeds, the refusal is
// remembered for the rest of the process, logged once at debug level, and
// servers start without namespaces. Other Unix systems have none either.
// Without them, a descendant that leaves the server's process group
// (setsid, daemonising) escapes Stop and Kill, and no descendant of the
// server dies with a host killed with SIGKILL; on Linux the server itself
// still does.
//
// A host killed during the fork of a namespaced server, before the child
// has armed its parent-death signal, leaves that server and its
// descendants running until the server notices that its stdin is closed:
// the runtime's check for a parent that died meanwhile cannot see a parent
// outside the namespace.
//
// On systems without process groups (Windows), Start returns
// [ErrUnsupportedPlatform].
package stdio
