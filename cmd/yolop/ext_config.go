package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"yolop.dev/harness/config"
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

func (a *app) extConfigGetCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "get <name> <field>",
		Short:             "Print a field's value (its default, marked, when unset)",
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
			v, set, err := h.Resolver().GetField(cmd.Context(), m, args[1])
			if err != nil {
				return err
			}
			switch {
			case set:
				fmt.Fprintln(a.stdout, config.FormatValue(v))
			case v != nil:
				fmt.Fprintf(a.stdout, "%s (default; not set in %s)\n", config.FormatValue(v), h.Settings().Path())
			default:
				fmt.Fprintf(a.stdout, "(not set in %s)\n", h.Settings().Path())
			}
			return nil
		},
	}
}

func (a *app) extConfigSetCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "set <name> <field> <value>",
		Short:             "Validate a value against the config_schema and store it",
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
			v, err := h.Resolver().SetField(cmd.Context(), m, args[1], args[2])
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "set %s.%s = %s in %s\n", args[0], args[1], config.FormatValue(v), h.Settings().Path())
			return nil
		},
	}
}

func (a *app) extConfigUnsetCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "unset <name> <field>",
		Short:             "Remove a field from settings.toml (its default applies again)",
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
		},
	}
}
