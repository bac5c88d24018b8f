package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"yolop.dev/cmd/yolop/internal/config"
	"yolop.dev/cmd/yolop/internal/secrets"
	"yolop.dev/cmd/yolop/internal/settings"
	"yolop.dev/core/host"
	"yolop.dev/packaging"
)

// secretStore returns the credential store (connections.toml) in the
// config directory.
func (a *app) secretStore() (*secrets.File, error) {
	dir, err := packaging.ConfigDir()
	if err != nil {
		return nil, err
	}
	return secrets.NewFile(dir), nil
}

// configResolver returns the resolver over settings.toml and
// connections.toml in the config directory.
func (a *app) configResolver() (*config.Resolver, error) {
	dir, err := packaging.ConfigDir()
	if err != nil {
		return nil, err
	}
	st := settings.New(dir)
	return &config.Resolver{Settings: st, Secrets: secrets.NewFile(dir), SettingsPath: st.Path(), Logger: a.log}, nil
}

// installedManifest returns the verified manifest of an installed
// extension.
func (a *app) installedManifest(ctx context.Context, name string) (*packaging.Manifest, error) {
	dir, err := packaging.ConfigDir()
	if err != nil {
		return nil, err
	}
	v, err := packaging.NewStore(dir).VerifyInstalled(ctx, name)
	if err != nil {
		return nil, err
	}
	return v.Manifest, nil
}

// secretField returns the declared secret field of an installed extension.
func (a *app) secretField(ctx context.Context, name, field string) (*packaging.Manifest, packaging.ConfigField, error) {
	m, err := a.installedManifest(ctx, name)
	if err != nil {
		return nil, packaging.ConfigField{}, err
	}
	fields, err := m.ConfigFields()
	if err != nil {
		return nil, packaging.ConfigField{}, err
	}
	var names []string
	for _, f := range fields {
		if f.Secret {
			if f.Name == field {
				return m, f, nil
			}
			names = append(names, f.Name)
		}
	}
	if len(names) == 0 {
		return nil, packaging.ConfigField{}, fmt.Errorf("extension %s declares no secret config fields", name)
	}
	return nil, packaging.ConfigField{}, fmt.Errorf("extension %s has no secret field %q; its secret fields are: %s", name, field, strings.Join(names, ", "))
}

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
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 2 {
				return errors.New("refusing a secret given on the command line: it would stay in your shell history and show in ps. Run `yolop ext secret set <name> <field>` and type it, or pipe it with --stdin")
			}
			return cobra.ExactArgs(2)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			name, field := args[0], args[1]
			m, f, err := a.secretField(ctx, name, field)
			if err != nil {
				return err
			}
			value, err := a.readSecret(name, f, fromStdin)
			if err != nil {
				return err
			}
			v := secrets.New(value)
			if err := config.CheckSecret(m, field, v); err != nil {
				return err
			}
			store, err := a.secretStore()
			if err != nil {
				return err
			}
			if err := store.Set(ctx, name, field, v); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "(saved) secret %s.%s in %s; it reaches extension %s as $%s at its next start\n", name, field, store.Path(), name, f.Env)
			return nil
		},
	}
	cmd.Flags().BoolVar(&fromStdin, "stdin", false, "read the value as one line from standard input")
	return cmd
}

// readSecret reads the value: masked on a terminal, one line with --stdin.
func (a *app) readSecret(name string, f packaging.ConfigField, fromStdin bool) (string, error) {
	file, isFile := a.stdin.(*os.File)
	tty := isFile && isTerminal(file)
	if !tty && !fromStdin {
		return "", fmt.Errorf("standard input is not a terminal, so the secret cannot be typed with echo off; pipe it with --stdin: printf '%%s' \"$VALUE\" | yolop ext secret set %s %s --stdin", name, f.Name)
	}
	if tty {
		desc := ""
		if f.Description != "" {
			desc = " (" + f.Description + ")"
		}
		fmt.Fprintf(a.stderr, "Secret %s for extension %s%s, input hidden: ", f.Name, name, desc)
		restore := echoOff(file)
		defer func() {
			restore()
			fmt.Fprintln(a.stderr)
		}()
	}
	line, err := bufio.NewReader(a.stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading the secret: %w", err)
	}
	value := strings.TrimRight(line, "\r\n")
	if value == "" {
		return "", fmt.Errorf("no secret given for %s.%s (an empty line); nothing was saved", name, f.Name)
	}
	return value, nil
}

func (a *app) extSecretUnsetCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "unset <name> <field>",
		Short: "Remove a stored secret",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := a.secretStore()
			if err != nil {
				return err
			}
			ok, err := store.Delete(cmd.Context(), args[0], args[1])
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
			dir, err := packaging.ConfigDir()
			if err != nil {
				return err
			}
			installed, err := packaging.NewStore(dir).List(ctx)
			if err != nil {
				return err
			}
			store := secrets.NewFile(dir)
			for _, in := range installed {
				if (len(args) == 1 && in.Name != args[0]) || in.Manifest == nil {
					continue
				}
				fields, err := in.Manifest.ConfigFields()
				if err != nil {
					return err
				}
				set, err := store.Extension(ctx, in.Name)
				if err != nil {
					return err
				}
				for _, f := range fields {
					if !f.Secret {
						continue
					}
					state := "unset"
					if _, ok := set[f.Name]; ok {
						state = "set"
					}
					fmt.Fprintf(a.stdout, "%s.%s\t%s\tenv %s\n", in.Name, f.Name, state, f.Env)
				}
			}
			return nil
		},
	}
}

// loadScrubber fills the app's scrubber from the credential store, so no
// stored secret value is ever printed. A store that cannot be read (an
// unsafe or corrupt connections.toml) is reported, and its secrets cannot
// reach any server either.
func (a *app) loadScrubber(ctx context.Context) {
	store, err := a.secretStore()
	if err != nil {
		return
	}
	if err := a.scrub.Load(ctx, store); err != nil {
		a.log.Warn("secrets cannot be read", "error", err)
	}
}

// terminalAsker returns an ask sink on the terminal for setup on enable, or
// nil when stdin is not a terminal (setup then lists what is missing).
func (a *app) terminalAsker() host.AskSink {
	f, ok := a.stdin.(*os.File)
	if !ok || !isTerminal(f) {
		return nil
	}
	return &config.LineAsker{In: bufio.NewReader(f), Out: a.stderr, Mask: func() func() { return echoOff(f) }}
}

// setupOnEnable is the extension manager's Setup hook: it asks for the
// required fields that are unset, then teaches the scrubber any secret
// just stored.
func (a *app) setupOnEnable(r *config.Resolver) func(context.Context, *packaging.Manifest, host.AskSink) error {
	return func(ctx context.Context, m *packaging.Manifest, ask host.AskSink) error {
		res, err := r.Setup(ctx, m, ask)
		if res != nil && len(res.Secrets) > 0 {
			a.loadScrubber(ctx)
		}
		return err
	}
}

// secretTool returns the set_extension_secret capability, asking through
// ask; a saved secret is pushed to the live session's extension.
func (a *app) secretTool(ask host.AskSink) host.Capability {
	r, err := a.configResolver()
	if err != nil {
		a.log.Warn("set_extension_secret is unavailable", "error", err)
		return nil
	}
	return config.NewSecretTool(config.SecretToolOptions{
		Secrets:  r.Secrets,
		Ask:      ask,
		Manifest: a.installedManifest,
		Scrubber: a.scrub,
		OnSaved: func(ctx context.Context, m *packaging.Manifest) error {
			s := a.liveSession.Load()
			if s == nil {
				return nil
			}
			_, err := r.PushSession(ctx, s, m)
			return err
		},
	})
}

// watchConfig applies changes to settings.toml and connections.toml to the
// installed extensions of a running session (live config): each one's
// config is re-resolved and validated, then pushed as config/changed, or
// its server restarted when its environment changed. report hears about
// each extension whose config changed or could not be applied. The
// returned function stops watching.
func (a *app) watchConfig(s *host.Session, report func(ext string, restarted bool, err error)) func() {
	r, err := a.configResolver()
	if err != nil {
		return func() {}
	}
	dir, err := packaging.ConfigDir()
	if err != nil {
		return func() {}
	}
	stop, err := config.Watch(dir, []string{settings.FileName, secrets.FileName}, 0, func(ctx context.Context) {
		a.loadScrubber(ctx)
		for _, st := range s.Stats() {
			m, err := a.installedManifest(ctx, st.Name)
			if err != nil {
				continue // not installed (an --ext package in place): nothing to re-resolve
			}
			e, ok := s.Extension(st.Name)
			if !ok {
				continue
			}
			before := e.Grant()
			restarted, err := r.Push(ctx, e, m)
			after := e.Grant()
			if err != nil || restarted || string(before.Config) != string(after.Config) {
				report(st.Name, restarted, err)
			}
		}
	})
	if err != nil {
		a.log.Warn("live config changes are off for this session", "error", err)
		return func() {}
	}
	return stop
}
