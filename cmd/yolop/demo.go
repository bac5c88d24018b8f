package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"yolop.dev/cmd/yolop/demo"
	"yolop.dev/core/examples/echo/echoext"
	"yolop.dev/core/host"
	"yolop.dev/harness"
)

func (a *app) demoCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the echo extension through a session and show its tools, streaming, hooks and commands",
		Long: `demo starts a session over the echo reference extension (embedded in this
binary: its manifest and its server, which runs as a separate process
speaking YEP) and types a short script into it: a plain tool call, a
streamed call printing updates as they arrive, a call a pre_tool_use hook
blocks, a slash command, the system prompt and /status.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// The embedded echo package, its server this binary's serve-echo.
			g, cleanup, err := harness.EmbeddedGrant(demo.EchoManifest, "", "serve-echo")
			if err != nil {
				return fmt.Errorf("demo: %w", err)
			}
			defer cleanup()
			script := strings.Join(demo.Script, "\n") + "\n"
			return a.runSessionWith(cmd.Context(), sessionFlags{json: asJSON, noEnabled: true, noMCP: true}, []host.Grant{g}, strings.NewReader(script), true)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON event per line")
	return cmd
}

// serveEchoCmd serves the embedded echo extension over stdio; the demo
// spawns it as a separate process.
func (a *app) serveEchoCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "serve-echo",
		Short:  "Serve the embedded echo extension over stdio (used by demo)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			log, _ := harness.NewLogger("echo", a.stderr) // the parent warned about a bad value
			err := echoext.New(log).ServeConn(cmd.Context(), a.stdin, a.stdout)
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		},
	}
}
