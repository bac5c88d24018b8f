package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"yolop.dev/agent"
	"yolop.dev/harness"
	"yolop.dev/harness/secrets"
)

func (a *app) modelCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Show the model yolop asks, and store its API key",
		Long: `The model the agent asks is the --model flag of yolop run and yolop
session, else $YOLOP_MODEL, else settings.toml's table:

  [model]
  provider = "openai"        # or "anthropic"; "openai" is any OpenAI-compatible server
  model = "gpt-4.1"
  base_url = "http://localhost:11434/v1"   # optional (here: Ollama)
  context_window = 128000    # optional, tokens
  max_tokens = 8192          # optional, tokens per reply

The API key is $OPENAI_API_KEY or $ANTHROPIC_API_KEY when set, else the one
stored with yolop model key in connections.toml (mode 0600). A local server
needs none.`,
	}
	cmd.AddCommand(a.modelShowCmd(), a.modelKeyCmd())
	return cmd
}

func (a *app) modelShowCmd() *cobra.Command {
	var model string
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Show the resolved provider, model, base URL and key, and where each comes from (never the key)",
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := a.harness()
			if err != nil {
				return err
			}
			c, err := h.ResolveModel(cmd.Context(), model)
			if err != nil {
				return fmt.Errorf("yolop model show: %w", err)
			}
			key := "not set (a local server needs none; store one with `yolop model key " + c.Provider + "`)"
			switch c.KeyFrom {
			case harness.FromConnections:
				key = "set in " + h.Secrets().Path()
			case "":
			default:
				key = "from " + c.KeyFrom
			}
			tokensLine := func(n, def int) string {
				if n == 0 {
					return fmt.Sprintf("%d tokens (default)", def)
				}
				return fmt.Sprintf("%d tokens (from %s)", n, harness.FromSettings)
			}
			fmt.Fprintf(a.stdout, "provider        %s (from %s)\n", c.Provider, c.ModelFrom)
			fmt.Fprintf(a.stdout, "model           %s (from %s)\n", c.Model, c.ModelFrom)
			if ext, ok := c.Extension(); ok {
				window, from := h.ModelContextWindow(cmd.Context(), nil, c)
				fmt.Fprintf(a.stdout, "base URL        the endpoint extension %s announces when it starts\n", ext)
				fmt.Fprintf(a.stdout, "API key         none (yolop sends an extension no key of yours)\n")
				fmt.Fprintf(a.stdout, "context window  %d tokens (from %s)\n", window, from)
			} else {
				fmt.Fprintf(a.stdout, "base URL        %s (from %s)\n", c.BaseURL, c.BaseURLFrom)
				fmt.Fprintf(a.stdout, "API key         %s\n", key)
				fmt.Fprintf(a.stdout, "context window  %s\n", tokensLine(c.ContextWindow, agent.DefaultContextWindow))
			}
			if c.MaxTokens != 0 {
				fmt.Fprintf(a.stdout, "max tokens      %d per reply (from %s)\n", c.MaxTokens, harness.FromSettings)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&model, "model", "", "resolve `PROVIDER/MODEL` as yolop run --model would")
	return cmd
}

func (a *app) modelKeyCmd() *cobra.Command {
	var del bool
	cmd := &cobra.Command{
		Use:   "key <openai|anthropic>",
		Short: "Store a provider's API key in connections.toml: typed with input hidden, or one line from stdin",
		Long: `Store the API key of a model provider in connections.toml (mode 0600).
On a terminal the key is typed with echo off; otherwise one line is read
from standard input, for scripts:

  printf '%s\n' "$KEY" | yolop model key openai

The key is never accepted as an argument: arguments stay in shell history
and are visible to other users in ps. $OPENAI_API_KEY or $ANTHROPIC_API_KEY,
when set, take precedence over the stored key. --delete removes it.`,
		Annotations: map[string]string{"args": argsCustom},
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return errors.New("refusing an API key given on the command line: it would stay in your shell history and show in ps. Run `yolop model key <provider>` and type it, or pipe it on standard input")
			}
			return a.positional(cmd)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			prov := args[0]
			h, err := a.harness()
			if err != nil {
				return err
			}
			if del {
				ok, err := h.DeleteModelKey(ctx, prov)
				if err != nil {
					return err
				}
				if !ok {
					fmt.Fprintf(a.stdout, "no %s API key was stored in %s\n", prov, h.Secrets().Path())
					return nil
				}
				fmt.Fprintf(a.stdout, "removed the %s API key from %s\n", prov, h.Secrets().Path())
				return nil
			}
			// An unknown provider fails before anything is read.
			if err := harness.CheckModelProvider(prov); err != nil {
				return err
			}
			key, err := a.readModelKey(prov)
			if err != nil {
				return err
			}
			if err := h.SetModelKey(ctx, prov, secrets.New(key)); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "(saved) the %s API key in %s\n", prov, h.Secrets().Path())
			if env := harness.ModelKeyEnv(prov); os.Getenv(env) != "" {
				fmt.Fprintf(a.stderr, "note: %s is set in this environment and is used instead of the stored key while it is\n", env)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&del, "delete", false, "remove the stored key")
	return cmd
}

// readModelKey reads a key: typed with echo off on a terminal, else one
// line of stdin.
func (a *app) readModelKey(prov string) (string, error) {
	var hidden func() ([]byte, error)
	if f, tty := a.stdinTerminal(); tty {
		hidden = func() ([]byte, error) { return term.ReadPassword(int(f.Fd())) }
	}
	return harness.ReadModelKey(prov, a.stdin, a.stderr, hidden)
}
