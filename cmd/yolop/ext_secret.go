package main

import (
	"bufio"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"yolop.dev/core/host"
	"yolop.dev/harness"
	"yolop.dev/harness/config"
	"yolop.dev/harness/secrets"
	"yolop.dev/packaging"
)

func (a *app) extSecretCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secret",
		Short: "Manage extension secrets in the credential store",
		Long: `Manage the values of config fields an extension marks secret: true.

They live in connections.toml in the config directory (mode 0600), never in
settings.toml, and reach only that extension's server, as the environment
variable its config_schema names. yolop never prints them: list shows set
or unset, and logs and tool output show [redacted:<ext>.<field>].`,
	}
	cmd.AddCommand(a.extSecretSetCmd(), a.extSecretUnsetCmd(), a.extSecretListCmd())
	return cmd
}

func (a *app) extSecretSetCmd() *cobra.Command {
	var fromStdin bool
	cmd := &cobra.Command{
		Use:   "set <name> <field>",
		Short: "Store a secret: typed with input hidden, or one line from stdin with --stdin",
		Long: `Store the secret field of an installed extension. On a terminal the value
is typed with echo off; with --stdin one line is read from standard input
(for scripts: printf '%s' "$TOKEN" | yolop ext secret set <name> <field> --stdin).

The value is never accepted as an argument: arguments stay in shell
history and are visible to other users in ps.`,
		Annotations: map[string]string{"args": argsCustom},
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 2 {
				return errors.New("refusing a secret given on the command line: it would stay in your shell history and show in ps. Run `yolop ext secret set <name> <field>` and type it, or pipe it with --stdin")
			}
			return a.positional(cmd)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			name, field := args[0], args[1]
			h, err := a.harness()
			if err != nil {
				return err
			}
			_, f, err := h.SecretField(ctx, name, field)
			if err != nil {
				return err
			}
			value, err := a.readSecret(name, f, fromStdin)
			if err != nil {
				return err
			}
			if _, err := h.SetSecret(ctx, name, field, secrets.New(value)); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "(saved) secret %s.%s in %s; it reaches extension %s as $%s at its next start\n", name, field, h.Secrets().Path(), name, f.Env)
			return nil
		},
	}
	cmd.Flags().BoolVar(&fromStdin, "stdin", false, "read the value as one line from standard input")
	return cmd
}

// readSecret reads the value: masked on a terminal, one line with --stdin.
func (a *app) readSecret(name string, f packaging.ConfigField, fromStdin bool) (string, error) {
	file, tty := a.stdinTerminal()
	if !tty && !fromStdin {
		return "", fmt.Errorf("standard input is not a terminal, so the secret cannot be typed with echo off; pipe it with --stdin: printf '%%s' \"$VALUE\" | yolop ext secret set %s %s --stdin", name, f.Name)
	}
	var hidden func() ([]byte, error)
	if tty {
		hidden = func() ([]byte, error) { return term.ReadPassword(int(file.Fd())) }
	}
	return harness.ReadSecretValue(name, f, a.stdin, a.stderr, hidden)
}

func (a *app) extSecretUnsetCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "unset <name> <field>",
		Short: "Remove a stored secret",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := a.harness()
			if err != nil {
				return err
			}
			ok, err := h.Secrets().Delete(cmd.Context(), args[0], args[1])
			if err != nil {
				return err
			}
			if !ok {
				fmt.Fprintf(a.stdout, "secret %s.%s was not set\n", args[0], args[1])
				return nil
			}
			fmt.Fprintf(a.stdout, "removed secret %s.%s\n", args[0], args[1])
			return nil
		},
	}
}

func (a *app) extSecretListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list [name]",
		Short: "Show whether each secret field is set (never a value)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			h, err := a.harness()
			if err != nil {
				return err
			}
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			states, err := h.SecretStates(ctx, name)
			if err != nil {
				return err
			}
			for _, st := range states {
				fmt.Fprintln(a.stdout, st)
			}
			return nil
		},
	}
}

// terminalAsker returns an ask sink on the terminal for setup on enable, or
// nil when stdin is not a terminal (setup then lists what is missing).
func (a *app) terminalAsker() host.AskSink {
	f, ok := a.stdinTerminal()
	if !ok {
		return nil
	}
	return &config.LineAsker{In: bufio.NewReader(f), Out: a.stderr, ReadSecret: func() (string, error) {
		b, err := term.ReadPassword(int(f.Fd()))
		return string(b), err
	}}
}
