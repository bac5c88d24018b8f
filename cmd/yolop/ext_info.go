package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func (a *app) extInfoCmd() *cobra.Command {
	var (
		asJSON   bool
		registry string
	)
	cmd := &cobra.Command{
		Use:   "info <name|path|crate>",
		Short: "Show what an extension contributes, its approval, source, lock and health",
		Long: `Describe an extension: the contribution summary (what consent shows), and
for an installed one whether what would run matches what was approved, its
source and the fields extensions.lock pins, its health and which config
fields are set (never their values).

The argument is an installed extension's name, a package directory, or a
crate (crates.io:<crate>, sparse+URL#<crate>, or a name that is not
installed, looked up in the registry). A crate is downloaded and verified
into a temporary directory and read; nothing of it is installed or run.`,
		ValidArgsFunction: a.completeInstalled,
		Annotations:       map[string]string{candidatesLabel: "installed"},
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := a.harness()
			if err != nil {
				return err
			}
			in, err := h.Info(cmd.Context(), args[0], registry)
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(in)
			}
			_, err = fmt.Fprint(a.stdout, in.Text())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON object")
	cmd.Flags().StringVar(&registry, "registry", "", "look a crate up in this sparse registry (`sparse+URL`)")
	return cmd
}
