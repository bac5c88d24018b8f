package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"yolop.dev/agent/scripted"
	"yolop.dev/agent/scripted/scriptedext"
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
		Long: `demo starts a session over the echo reference extension and a scripted
model, both embedded in this binary (their manifests and their servers,
each run as a separate process speaking YEP), and the built-in coding
tools. The model is an extension's: its server hosts a real
OpenAI-compatible endpoint on 127.0.0.1 that answers from a script
embedded in this binary, and announces it over the providers facet, so no
API key and no network are needed. It types a short script into the
session: /tools, a message the model answers in a real agent turn (it
searches for a deferred tool with tool_search, calls two tools in
parallel while one streams, is blocked by the extension's pre_tool_use
hook and reacts to the reason), a slash command, a message the model
answers with the command's result, and /status. It fails unless the
model's script played to its end.`,
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
			// The model: the embedded scripted-model package, its server
			// this binary's serve-scripted-model.
			script, err := scripted.Parse(demo.ModelScript)
			if err != nil {
				return fmt.Errorf("demo: the embedded model script: %w", err)
			}
			mg, cleanupModel, err := harness.EmbeddedGrant(demo.ScriptedManifest, "", "serve-scripted-model")
			if err != nil {
				return fmt.Errorf("demo: %w", err)
			}
			defer cleanupModel()
			f := sessionFlags{json: asJSON, noEnabled: true, noMCP: true, noBuiltins: true,
				model: harness.ExtProviderPrefix + mg.Name + "/" + scriptedext.ModelOf(script),
				atEnd: func(ctx context.Context, s *harness.Session) error {
					// Every step answered: the turns went as the script tells.
					return verifyScript(ctx, s, mg.Name)
				}}
			in := strings.Join(demo.Script, "\n") + "\n"
			return a.runSessionWith(cmd.Context(), f, []host.Grant{g, mg}, strings.NewReader(in), true)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON event per line")
	return cmd
}

// verifyScript asks the scripted model extension ext of s whether its
// script played to its end.
func verifyScript(ctx context.Context, s *harness.Session, ext string) error {
	e, ok := s.Extension(ext)
	if !ok {
		return fmt.Errorf("demo: the scripted model extension %q is not in the session", ext)
	}
	res, err := e.ExecuteCommand(ctx, scriptedext.VerifyCommand, "")
	switch {
	case err != nil:
		return fmt.Errorf("demo: asking the scripted model whether its script played out: %w", err)
	case !res.Success:
		return fmt.Errorf("demo: the model's script did not play to its end (%s); the lines above show where the session left it", res.Message)
	}
	return nil
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

// serveScriptedModelCmd serves the demo's model over stdio: the scripted
// model extension with the embedded script; the demo spawns it as a
// separate process.
func (a *app) serveScriptedModelCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "serve-scripted-model",
		Short:  "Serve the embedded scripted model extension over stdio (used by demo)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			log, _ := harness.NewLogger(scriptedext.Name, a.stderr) // the parent warned about a bad value
			srv := scriptedext.New(scriptedext.Options{Script: demo.ModelScript, Logger: log})
			err := srv.ServeConn(cmd.Context(), a.stdin, a.stdout)
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		},
	}
}
