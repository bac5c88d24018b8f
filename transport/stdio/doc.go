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
//   - Every started process is reaped by exactly one goroutine, and every
//     goroutine an instance starts has finished when Stop or Kill returns.
//
// The owner of an [Instance] (the host session) must call Stop or Kill when
// it is done with it. As a safety net, an instance that becomes unreachable
// without either (its handle and both of its streams dropped) is killed by a
// cleanup registered with [runtime.AddCleanup]; a warning is logged, since it
// means an owner forgot to stop it.
package stdio
