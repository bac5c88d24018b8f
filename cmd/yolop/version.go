package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"yolop.dev/harness"
)

// commit is set at link time with -ldflags "-X main.commit=…"; otherwise it
// comes from the build's VCS stamp, when there is one.
var commit = ""

// buildInfo describes this binary for `yolop version`.
type buildInfo = harness.Build

func (a *app) versionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, Go version and YEP protocol version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			b := harness.CurrentBuild(version, commit)
			if asJSON {
				return a.printJSON(b)
			}
			_, err := fmt.Fprint(a.stdout, b)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON object")
	return cmd
}
