package client

import (
	"context"
	"fmt"

	"yolop.dev/harness"
)

// ForHarness returns the MCP client of a session that h opens over
// workspace: the servers of the workspace's .mcp.json, when the file is
// approved in h's config directory or consent approves it now (see
// [LoadApproved]: a nil consent asks nothing, so on a pipe nothing
// unapproved starts), and the servers the session's extensions contribute.
// Servers are spawned with h's transport, logged to h's logger and
// scrubbed with h's scrubber; [mcp] never_defer in settings.toml lists the
// tools never deferred (a malformed one is a warning, and every MCP tool
// is deferred). Pass the client in harness.SessionOptions.Contributed.
func ForHarness(ctx context.Context, h *harness.Harness, workspace string, consent Consent) *Client {
	o := Options{Transport: h.Transport(), Logger: h.Logger(), Scrub: h.Scrubber().Scrub}
	neverDefer, err := h.Settings().MCPNeverDefer(ctx)
	if err != nil {
		o.Warnings = append(o.Warnings, fmt.Sprintf("%v; every MCP tool is deferred", err))
	}
	o.NeverDefer = neverDefer
	return ForApprovedWorkspace(ctx, workspace, NewApprovals(h.ConfigDir()), consent, o)
}
