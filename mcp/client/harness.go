package client

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

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

// Proposal is what to show the user before approving r: its summary, or,
// when prev (the review approved before) is not nil, what changed since.
func (r *Review) Proposal(prev *Review) string {
	if prev == nil {
		return r.Summary()
	}
	return r.Path + " changed since you approved it:\n" + r.Diff(prev)
}

// ApproveWorkspace is `yolop mcp approve`: it reviews workspace's
// .mcp.json against the approval pinned in approvals and, unless it is
// already approved, writes the proposal (see [Review.Proposal]) to out,
// asks confirm and pins the approval. A confirm error (the user declined,
// or there is no one to ask) leaves nothing approved and is returned.
// What happened is written to out. An empty workspace is the current
// directory; a relative one is made absolute.
func ApproveWorkspace(ctx context.Context, workspace string, approvals *Approvals, out io.Writer, confirm func() error) error {
	workspace, err := filepath.Abs(workspace) // "" is the current directory
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	rev, err := ReviewFile(filepath.Join(workspace, FileName))
	if err != nil {
		return err
	}
	if rev == nil {
		fmt.Fprintf(out, "%s has no %s: nothing to approve\n", workspace, FileName)
		return nil
	}
	prev, err := approvals.Lookup(workspace)
	if err != nil {
		return err
	}
	if prev != nil && prev.Digest == rev.Digest {
		fmt.Fprintf(out, "%s is already approved (%s)\n", rev.Path, rev.Digest)
		return nil
	}
	fmt.Fprint(out, rev.Proposal(prev))
	if err := confirm(); err != nil {
		return err
	}
	if err := approvals.Approve(ctx, workspace, rev); err != nil {
		return err
	}
	fmt.Fprintf(out, "approved %s (%s): sessions in %s start its servers until the file changes\n", rev.Path, rev.Digest, workspace)
	return nil
}
