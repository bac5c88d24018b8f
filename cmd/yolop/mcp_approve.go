package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

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
			if ws == "" {
				ws, _ = os.Getwd()
			}
			ws, _ = filepath.Abs(ws)
			h, err := a.harness()
			if err != nil {
				return err
			}
			rev, err := mcpclient.ReviewFile(filepath.Join(ws, mcpclient.FileName))
			if err != nil {
				return fmt.Errorf("yolop mcp approve: %w", err)
			}
			if rev == nil {
				fmt.Fprintf(a.stdout, "%s has no %s: nothing to approve\n", ws, mcpclient.FileName)
				return nil
			}
			approvals := mcpclient.NewApprovals(h.ConfigDir())
			prev, err := approvals.Lookup(ws)
			if err != nil {
				return fmt.Errorf("yolop mcp approve: %w", err)
			}
			if prev != nil && prev.Digest == rev.Digest {
				fmt.Fprintf(a.stdout, "%s is already approved (%s)\n", rev.Path, rev.Digest)
				return nil
			}
			text := rev.Summary()
			if prev != nil {
				text = rev.Path + " changed since you approved it:\n" + rev.Diff(prev)
			}
			fmt.Fprint(a.stdout, text)
			if !yes {
				f, ok := a.stdin.(*os.File)
				if !ok || !term.IsTerminal(int(f.Fd())) {
					return errors.New("yolop mcp approve: there is no terminal to ask on, and nothing was approved; read the summary above, then re-run with --yes to approve it")
				}
				fmt.Fprint(a.stdout, "Approve these MCP servers? [y/N] ")
				line, _ := bufio.NewReader(f).ReadString('\n')
				if ans := strings.ToLower(strings.TrimSpace(line)); ans != "y" && ans != "yes" {
					return errors.New("yolop mcp approve: declined, nothing was approved")
				}
			}
			if err := approvals.Approve(cmd.Context(), ws, rev); err != nil {
				return fmt.Errorf("yolop mcp approve: %w", err)
			}
			fmt.Fprintf(a.stdout, "approved %s (%s): sessions in %s start its servers until the file changes\n", rev.Path, rev.Digest, ws)
			return nil
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "approve what is shown without asking")
	cmd.Flags().StringVar(&ws, "workspace", "", "the workspace whose .mcp.json to approve (default: the current directory)")
	return cmd
}
