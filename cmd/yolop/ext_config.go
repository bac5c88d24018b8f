package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"yolop.dev/harness"
	"yolop.dev/harness/config"
	"yolop.dev/packaging"
)

func (a *app) extConfigCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Get, set or unset an extension's plain config fields in settings.toml",
		Long: `Read and change the plain (non-secret) fields of an installed extension's
config_schema, in its [[capabilities]] entry of settings.toml. A value is
parsed by the field's type (integer, number, boolean, JSON for an object or
array) and the whole config is validated against the schema before
anything is written. A field marked secret is refused here: store it with
yolop ext secret set. A running session picks a change up live.`,
	}
	cmd.AddCommand(a.extConfigGetCmd(), a.extConfigSetCmd(), a.extConfigUnsetCmd())
	return cmd
}

// extConfigField is one `ext config` subcommand: run gets the harness and
// the installed extension's approved manifest; args[0] is its name,
// args[1] the field.
func (a *app) extConfigField(use, short string, run func(cmd *cobra.Command, h *harness.Harness, m *packaging.Manifest, args []string) error) *cobra.Command {
	return &cobra.Command{
		Use:               use,
		Short:             short,
		ValidArgsFunction: a.completeInstalled,
		Annotations:       map[string]string{candidatesLabel: "installed"},
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := a.harness()
			if err != nil {
				return err
			}
			m, err := h.InstalledManifest(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return run(cmd, h, m, args)
		},
	}
}

func (a *app) extConfigGetCmd() *cobra.Command {
	return a.extConfigField("get <name> [field]", "Print a field's value, or every field's (a default, marked, when unset)",
		func(cmd *cobra.Command, h *harness.Harness, m *packaging.Manifest, args []string) error {
			text, err := h.ConfigText(cmd.Context(), m, strings.Join(args[1:], ""))
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(a.stdout, text)
			return err
		})
}

func (a *app) extConfigSetCmd() *cobra.Command {
	return a.extConfigField("set <name> <field> <value>", "Validate a value against the config_schema and store it",
		func(cmd *cobra.Command, h *harness.Harness, m *packaging.Manifest, args []string) error {
			v, err := h.Resolver().SetField(cmd.Context(), m, args[1], args[2])
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "set %s.%s = %s in %s\n", args[0], args[1], config.FormatValue(v), h.Settings().Path())
			return nil
		})
}

func (a *app) extConfigUnsetCmd() *cobra.Command {
	return a.extConfigField("unset <name> <field>", "Remove a field from settings.toml (its default applies again)",
		func(cmd *cobra.Command, h *harness.Harness, m *packaging.Manifest, args []string) error {
			ok, err := h.Resolver().UnsetField(cmd.Context(), m, args[1])
			if err != nil {
				return err
			}
			if !ok {
				fmt.Fprintf(a.stdout, "%s.%s was not set\n", args[0], args[1])
				return nil
			}
			fmt.Fprintf(a.stdout, "unset %s.%s in %s\n", args[0], args[1], h.Settings().Path())
			return nil
		})
}
