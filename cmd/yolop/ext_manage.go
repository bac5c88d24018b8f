package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"yolop.dev/harness"
	"yolop.dev/harness/builtin"
	"yolop.dev/harness/manager"
)

// consent returns the CLI's consent (harness.LineConsent): print the
// proposal, then accept with --yes, ask y/N on a terminal, or refuse
// without one. rerun is the command to repeat with --yes.
func (a *app) consent(yes bool, rerun string) manager.Consent {
	return harness.LineConsent(a.stdout, yes, rerun, a.askYes)
}

// askYes asks question on the terminal and reports whether the answer is
// y or yes; tty is false, and nothing is asked, without a terminal.
func (a *app) askYes(question string) (yes, tty bool) {
	f, ok := a.stdinTerminal()
	if !ok {
		return false, false
	}
	fmt.Fprint(a.stdout, question)
	line, _ := bufio.NewReader(f).ReadString('\n')
	ans := strings.ToLower(strings.TrimSpace(line))
	return ans == "y" || ans == "yes", true
}

// stdinTerminal returns stdin when it is a terminal.
func (a *app) stdinTerminal() (*os.File, bool) {
	f, ok := a.stdin.(*os.File)
	return f, ok && term.IsTerminal(int(f.Fd()))
}

func (a *app) extInstallCmd() *cobra.Command {
	var (
		yes            bool
		name, registry string
		build, enable  bool
	)
	cmd := &cobra.Command{
		Use:   "install <source>",
		Short: "Install an extension after showing what it contributes",
		Long: `Install an extension from a source:

  <path>                      a package directory, referenced in place (the dev loop)
  <git-url>[@rev]             https://, ssh:// or git@host:path; rev is a branch, tag or commit
  crates.io:<crate>[@version] a crate on crates.io (or --registry sparse+URL)
  <name>[@version]            shorthand for crates.io:yolop-extension-<name>

The package is fetched into a staging directory and its manifest is read
(never executed). The contribution summary — server command, tools, hooks,
MCP servers, prompt, opt-ins, config fields — is printed before anything is
installed. On a terminal you are asked y/N; --yes approves for scripts;
without a terminal and without --yes nothing is installed. --enable also
enables it (what ` + "`yolop ext enable`" + ` does) once it is installed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := a.manager()
			if err != nil {
				return err
			}
			rerun := "yolop ext install " + args[0] + flagArg("--name", name) + flagArg("--registry", registry)
			if build {
				rerun += " --build"
			}
			if enable {
				rerun += " --enable"
			}
			out, err := m.Install(cmd.Context(), manager.InstallRequest{
				Source: args[0], Name: name, Registry: registry, Build: build,
				Consent: a.consent(yes, rerun),
				Enable:  enable, Ask: a.terminalAsker(),
			})
			if out != nil {
				fmt.Fprintln(a.stdout, builtin.OutcomeText(out))
			}
			if err != nil {
				return err
			}
			if out.Grant != nil {
				fmt.Fprintf(a.stdout, "enabled %s (%s); it loads in the next `yolop session`\n", out.Name, m.Settings().Path())
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "approve the contribution summary without asking (read it first)")
	cmd.Flags().StringVar(&name, "name", "", "the extension `name` the manifest must declare")
	cmd.Flags().StringVar(&registry, "registry", "", "sparse registry for crate sources (`sparse+URL`; default: [extensions] registry in settings.toml, else crates.io)")
	cmd.Flags().BoolVar(&build, "build", false, "allow `cargo install` when a crate has no prebuilt binary for this platform")
	cmd.Flags().BoolVar(&enable, "enable", false, "enable it once it is installed")
	return cmd
}

func (a *app) extListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List installed extensions: source, enabled, health, tools, config",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := a.manager()
			if err != nil {
				return err
			}
			list, err := m.List(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(list)
			}
			if len(list) == 0 {
				fmt.Fprintln(a.stdout, "no extensions installed; install one with `yolop ext install <source>`")
				return nil
			}
			for _, in := range list {
				fmt.Fprint(a.stdout, builtin.InfoTextStyled(in, a.paint))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

func (a *app) extEnableCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "enable <name>",
		Short:             "Enable an installed extension in settings.toml",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeInstalled,
		Annotations:       map[string]string{candidatesLabel: "installed"},
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := a.manager()
			if err != nil {
				return err
			}
			if _, err := m.EnableWith(cmd.Context(), args[0], a.terminalAsker()); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "enabled %s (%s); it loads in the next `yolop session`\n", args[0], m.Settings().Path())
			return nil
		},
	}
}

func (a *app) extDisableCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "disable <name>",
		Short:             "Disable an extension (it stays installed)",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeEnabled,
		Annotations:       map[string]string{candidatesLabel: "enabled"},
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := a.manager()
			if err != nil {
				return err
			}
			changed, err := m.Disable(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if !changed {
				fmt.Fprintf(a.stdout, "%s was not enabled\n", args[0])
				return nil
			}
			fmt.Fprintf(a.stdout, "disabled %s (%s)\n", args[0], m.Settings().Path())
			return nil
		},
	}
}

func (a *app) extRemoveCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "remove <name>",
		Short:             "Uninstall an extension and drop its settings entry",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeInstalled,
		Annotations:       map[string]string{candidatesLabel: "installed"},
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := a.manager()
			if err != nil {
				return err
			}
			if err := m.Remove(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "removed %s\n", args[0])
			return nil
		},
	}
}

func (a *app) extUpdateCmd() *cobra.Command {
	var (
		yes      bool
		registry string
		now      bool
	)
	cmd := &cobra.Command{
		Use:   "update [name]",
		Short: "Re-resolve installed extensions; a widening change asks again",
		Long: `Re-resolve the recorded source of one extension (or all of them).
Identical content is a no-op. A change that widens the grant (a new tool,
hook, MCP server, opt-in, a changed server command, ...) prints the
contribution diff and needs consent again (y/N on a terminal, or --yes);
a narrowing change is applied with a note. extensions.lock changes only
after consent. An installed copy whose files were changed on disk is
re-fetched after consent.

An update installs only a version (or git commit) yolop first saw at
least [update] cooldown ago (settings.toml, default 48h): a newer one still
waiting is skipped with a line saying until when, and the newest one that
has waited is installed instead. --now installs the newest at once.`,
		ValidArgsFunction: a.completeInstalled,
		Annotations:       map[string]string{candidatesLabel: "installed"},
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := a.harness()
			if err != nil {
				return err
			}
			consent := func(n string) manager.Consent {
				return a.consent(yes, "yolop ext update "+n+flagArg("--registry", registry))
			}
			opts := manager.UpdateOptions{Registry: registry, Now: now}
			n, err := h.UpdateWith(cmd.Context(), args, opts, consent, func(out *manager.Outcome) { fmt.Fprintln(a.stdout, builtin.OutcomeText(out)) })
			if n == 0 && err == nil {
				fmt.Fprintln(a.stdout, "no extensions installed")
			}
			return err
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "approve a widening change without asking (read the diff first)")
	cmd.Flags().StringVar(&registry, "registry", "", "update a crate from this sparse registry (`sparse+URL`) instead of the recorded one")
	cmd.Flags().BoolVar(&now, "now", false, "install the newest version at once, without the update cooldown")
	return cmd
}

// completeInstalled completes installed extension names.
func (a *app) completeInstalled(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	return a.completeNames(cmd, args, func(ctx context.Context, m *manager.Manager) ([]string, error) { return m.Names(ctx) })
}

// completeEnabled completes the extensions enabled in settings.toml.
func (a *app) completeEnabled(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	return a.completeNames(cmd, args, func(ctx context.Context, m *manager.Manager) ([]string, error) { return m.Settings().Enabled(ctx) })
}

// completeNames completes a command's first argument with names.
func (a *app) completeNames(cmd *cobra.Command, args []string, names func(context.Context, *manager.Manager) ([]string, error)) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	m, err := a.manager()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	list, err := names(cmd.Context(), m)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	return list, cobra.ShellCompDirectiveNoFileComp
}
