package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"yolop.dev/harness"
	mcpclient "yolop.dev/mcp/client"
)

func (a *app) mcpApproveCmd() *cobra.Command {
	var (
		yes bool
		ws  string
	)
	cmd := &cobra.Command{
		Use:   "approve",
		Short: "Review and approve the MCP servers a workspace's .mcp.json would start",
		Long: `Show what the workspace's .mcp.json would start — each server's command
and arguments or URL, its env and headers, and every variable of your
environment the file reads — and approve it. The approval is pinned by the
file's SHA-256 in the config directory; when the file changes, sessions
start none of its servers until it is approved again (a terminal session
asks with what changed).

Use it before a session without a terminal (a pipe, a script), or pass
--yes to such a session.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := a.harness()
			if err != nil {
				return err
			}
			confirm := func() error {
				return harness.Confirmation{Question: "Approve these MCP servers? [y/N] ", Yes: yes, Undone: "nothing was approved"}.Ask(a.askYes)
			}
			if err := mcpclient.ApproveWorkspace(cmd.Context(), ws, mcpclient.NewApprovals(h.ConfigDir()), a.stdout, confirm); err != nil {
				return fmt.Errorf("yolop mcp approve: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "approve what is shown without asking")
	cmd.Flags().StringVar(&ws, "workspace", "", "the workspace whose .mcp.json to approve (default: the current directory)")
	return cmd
}
