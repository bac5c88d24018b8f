package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"yolop.dev/harness/marketplace"
)

// extMarketplaceCmd groups the Claude Code marketplace verbs.
func (a *app) extMarketplaceCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "marketplace",
		Short: "Add, list and remove Claude Code plugin marketplaces",
		Long: `A marketplace is a catalog of plugins, .claude-plugin/marketplace.json, in a
git repository or a directory. Once added, its plugins are listed by
yolop ext search and install as <plugin>@<marketplace>:

  yolop ext marketplace add github:anthropics/claude-code
  yolop ext search --marketplace claude-code-plugins
  yolop ext install commit-commands@claude-code-plugins

A git marketplace is read at one commit, recorded in settings.toml; its
plugins install from that commit, which extensions.lock pins. update <name>
(or adding it again) reads the catalog at the ref's current commit; yolop ext update <plugin> then takes the change, with consent when
it widens what was approved. See docs/plugins.md.`,
	}
	cmd.AddCommand(a.extMarketplaceAddCmd(), a.extMarketplaceListCmd(), a.extMarketplaceUpdateCmd(), a.extMarketplaceRemoveCmd())
	return cmd
}

func (a *app) extMarketplaceAddCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "add <git-url[@ref]|github:owner/repo[@ref]|path>",
		Short: "Read a marketplace's catalog and record it in settings.toml",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := a.harness()
			if err != nil {
				return err
			}
			m, err := h.Marketplaces().Add(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			at := ""
			if m.Commit != "" {
				at = " at " + m.Commit
			}
			fmt.Fprintf(a.stdout, "added marketplace %s (%d plugins) from %s%s\n", m.Name, len(m.Catalog.Plugins), m.Source, at)
			fmt.Fprintf(a.stdout, "list its plugins with `yolop ext search --marketplace %s`; install one with `yolop ext install <plugin>@%s`\n", m.Name, m.Name)
			return nil
		},
	}
}

func (a *app) extMarketplaceListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the added marketplaces",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := a.harness()
			if err != nil {
				return err
			}
			list, err := h.Marketplaces().List(cmd.Context())
			if err != nil {
				return err
			}
			rows := marketplace.Rows(list)
			if asJSON {
				return a.printJSON(rows)
			}
			if len(rows) == 0 {
				fmt.Fprintln(a.stdout, "no marketplaces added; add one with `yolop ext marketplace add <git-url|path>`")
				return nil
			}
			return marketplace.WriteTable(a.stdout, rows)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

func (a *app) extMarketplaceUpdateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "update <name>",
		Short: "Read a marketplace's catalog again (a git one at its ref's current commit)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := a.harness()
			if err != nil {
				return err
			}
			m, err := h.Marketplaces().Update(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			at := ""
			if m.Commit != "" {
				at = " at " + m.Commit
			}
			fmt.Fprintf(a.stdout, "updated marketplace %s (%d plugins)%s; `yolop ext update <plugin>` takes its changes\n", m.Name, len(m.Catalog.Plugins), at)
			return nil
		},
	}
}

func (a *app) extMarketplaceRemoveCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "remove <name>",
		Short: "Forget a marketplace; plugins installed from it stay installed",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := a.harness()
			if err != nil {
				return err
			}
			if err := h.Marketplaces().Remove(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "removed marketplace %s; plugins installed from it stay installed, and update again once it is added again\n", args[0])
			return nil
		},
	}
}
