package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"yolop.dev/agent/provider"
	"yolop.dev/agent/scripted"
	"yolop.dev/cmd/yolop/demo"
	"yolop.dev/core/examples/echo/echoext"
	"yolop.dev/core/host"
	"yolop.dev/harness"
)

func (a *app) demoCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a real agent turn offline: a scripted model drives the echo extension through a session",
		Long: `demo starts a session over the echo reference extension (embedded in this
binary: its manifest and its server, which runs as a separate process
speaking YEP) and the built-in coding tools, with a scripted model on
127.0.0.1 as its model: a real OpenAI-compatible endpoint that answers
from a script embedded in this binary, so no API key and no network are
needed. It types a short script into the session: /tools, a message the
model answers in a real agent turn (it searches for a deferred tool with
tool_search, calls two tools in parallel while one streams, is blocked by
the extension's pre_tool_use hook and reacts to the reason), a slash
command, a message the model answers with the command's result, and
/status.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// The embedded echo package, its server this binary's serve-echo.
			g, cleanup, err := harness.EmbeddedGrant(demo.EchoManifest, "", "serve-echo")
			if err != nil {
				return fmt.Errorf("demo: %w", err)
			}
			defer cleanup()
			// The manifest gives echo's hook 500 ms; on a loaded machine
			// that can expire, and its on_error "warn" would then let the
			// call the hook blocks through: not the story the demo tells.
			for i := range g.Hooks {
				g.Hooks[i].TimeoutMS = max(g.Hooks[i].TimeoutMS, demoHookTimeoutMS)
			}
			script, err := scripted.Parse(demo.ModelScript)
			if err != nil {
				return fmt.Errorf("demo: the embedded model script: %w", err)
			}
			srv, err := scripted.Serve(cmd.Context(), script, "127.0.0.1:0")
			if err != nil {
				return fmt.Errorf("demo: starting the scripted model: %w", err)
			}
			defer srv.Close()
			// A key of its own, so no OPENAI_API_KEY goes to the demo's
			// server.
			p := provider.OpenAI(provider.Options{BaseURL: srv.URL() + "/v1/", APIKey: "yolop-demo"})
			f := sessionFlags{json: asJSON, noEnabled: true, noMCP: true, noBuiltins: true, model: script.Model, provider: p}
			in := strings.Join(demo.Script, "\n") + "\n"
			if err := a.runSessionWith(cmd.Context(), f, []host.Grant{g}, strings.NewReader(in), true); err != nil {
				return err
			}
			// Every step answered: the turns went as the script tells.
			if err := srv.Verify(); err != nil {
				return fmt.Errorf("demo: the model's script did not play to its end (%w); the lines above show where the session left it", err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON event per line")
	return cmd
}

// demoHookTimeoutMS is the demo's bound on a hook call.
const demoHookTimeoutMS = 30_000

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
