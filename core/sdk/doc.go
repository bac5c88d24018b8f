// Package sdk is the Go author SDK for yolop capability servers: an
// extension is written as a set of handlers, and the SDK speaks YEP (the
// yolop extension protocol) for it.
//
// A [Server] is configured by registering handlers — [Server.Tool],
// [Server.StreamingTool], [Server.ToolWith] (a tool with the input and
// output schemas it derived, which the handshake carries; the
// yolop.dev/sdk/typed module derives them from Go types), [Server.OnHook], [Server.Prompt],
// [Server.DynamicPrompt], [Server.Command], [Server.MCPServer],
// [Server.OnConfig], [Server.OnConfigChanged], [Server.OnTrace],
// [Server.OnWorkspaceChanged] and [Server.Provider] (a model provider: an
// OpenAI-compatible endpoint on loopback, announced at initialize) — and
// then served with [Server.Serve], which
// runs over stdin and stdout until the host sends shutdown and exit or
// closes stdin.
//
// The capability tokens the server announces in the initialize handshake
// derive from what was registered: a tool announces "tools", a streaming
// tool "streaming", a hook "hooks" (with its subscription in
// capability_params), and so on; "cancel" is always announced. The
// server-to-host methods are opt-ins named in [Info] (status/changed,
// ui/ask, log) and are only ever sent when the host advertised them in its
// own initialize capabilities; otherwise [Server.Status] and [Server.Ask]
// return an error matching [ErrNotAdvertised], and [Server.Log] writes to
// the local logger (stderr).
//
// Handlers run concurrently, each with a context that is cancelled when the
// host sends cancel for its request or the connection ends; a cancelled
// request is answered with the protocol's cancelled error whatever the
// handler returns. A handler that panics is answered with an internal error
// naming the tool (or hook, command, …) and the server keeps running.
//
// Registration methods panic on programmer errors — a duplicate tool name,
// a malformed hook glob, registering after Serve has started — the way
// net/http's ServeMux does, so a broken server fails at startup rather than
// in the middle of a session.
//
// The host sends the W3C Trace Context of its span for each tool call and
// hook firing; [TraceParent] and [TraceState] read it from the handler's
// context, so a span an extension starts there joins the session's trace
// (yolop.dev/sdk/otel does that for OpenTelemetry, outside core).
//
// stdout carries only protocol JSON. Logs go to stderr (or to the host's
// log method when both sides opted in); never print to stdout from a
// handler.
package sdk
