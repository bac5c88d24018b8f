package host

import "context"

// A ContributedTools capability serves tools that come from outside the
// host and depend on the session's extensions: the MCP client (module
// yolop.dev/mcp) implements it to serve the tools of `.mcp.json` servers
// and of the MCP servers enabled extensions contribute. It is passed in
// [SessionOptions.Contributed] and is the only seam through which such
// tools reach a session, so core needs no MCP code.
//
// Unlike a built-in's, its tools follow the extension tool policy: deferred
// behind tool_search unless the [ToolDef] says NeverDefer (no budget
// applies; the capability decides), and renamed "<capability>__<tool>" on
// a collision. Hooks fire for them like for any tool.
type ContributedTools interface {
	Capability
	// Sync is told the session's extensions at [Session.Start] (after the
	// eager extensions started) and at every turn boundary (after pending
	// enables and disables took effect), before the tool registry is
	// rebuilt. It connects what the extensions now contribute (a respawned
	// extension may announce a new URL) and drops what they no longer do,
	// and reports whether its tools changed, so the session rebuilds its
	// registry. It must be cheap when nothing changed, honour ctx and never
	// fail the session: what does not connect is the capability's to
	// report (a degraded server, a warning).
	Sync(ctx context.Context, exts []*Extension) (changed bool)
	// Warnings lists what the capability could not use (a malformed
	// config, a server that did not start); [Session.Warnings] includes
	// them.
	Warnings() []string
	// Close disconnects everything; the session calls it from Close.
	Close()
}
