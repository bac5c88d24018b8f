package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"yolop.dev/registry/cratesio"
)

func (a *app) registryAdviseCmd() *cobra.Command {
	var adv cratesio.Advisory
	cmd := &cobra.Command{
		Use:   "advise <index-dir> --crate <name> --versions <req> --severity <s> --id <id> --description <text>",
		Short: "Add a security advisory for a crate to a static sparse index",
		Long: `Write an advisory into the static index <index-dir> (written by
` + "`yolop registry publish`" + `), at advisories/<crate>.json beside the index. An
advisory with the same id is replaced.

--versions is the affected range as a cargo version requirement ("<1.2.0",
">=1.0.0, <1.1.3", "*"). --severity is low, medium, high or critical: an
installed extension a critical advisory affects is not started, ` + "`ext list`" + `
shows it blocked, and ` + "`ext update`" + ` does not install an affected version;
the others warn. See docs/registry.md#advisories.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if adv.Crate == "" {
				return errors.New("advise: --crate <name> is required (the crate name, e.g. yolop-extension-echo)")
			}
			p, err := cratesio.WriteAdvisory(args[0], adv)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "advisory %s (%s) for %s %s written to %s\n", adv.ID, adv.Severity, adv.Crate, adv.Versions, p)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&adv.Crate, "crate", "", "the crate `name` (yolop-extension-<ext>)")
	f.StringVar(&adv.Versions, "versions", "", "the affected versions, a cargo version `requirement` such as \"<1.2.0\"")
	f.StringVar(&adv.Severity, "severity", "", "low, medium, high or critical")
	f.StringVar(&adv.ID, "id", "", "the advisory `id`, e.g. YOLOP-2026-0001")
	f.StringVar(&adv.Description, "description", "", "what is wrong and what to do, one paragraph")
	f.StringVar(&adv.URL, "url", "", "a `URL` with the details (optional)")
	return cmd
}
