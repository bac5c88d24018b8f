package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"yolop.dev/harness"
)

func (a *app) extSearchCmd() *cobra.Command {
	var (
		asJSON   bool
		registry string
		limit    int
		market   string
	)
	cmd := &cobra.Command{
		Use:   "search [term]",
		Short: "Find extensions (crates named yolop-extension-*) in the registry",
		Long: `Search the registry's web API (the "api" of its config.json,
crates.io-compatible) for crates named yolop-extension-*, which install by
their extension name: yolop ext install <name>. A static index (such as one
yolop registry publish writes) has no API and cannot be searched.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := a.harness()
			if err != nil {
				return err
			}
			var r *harness.SearchResults
			if market != "" {
				r, err = h.SearchMarketplaces(cmd.Context(), market, strings.Join(args, ""))
			} else {
				r, err = h.Search(cmd.Context(), registry, strings.Join(args, ""), limit)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(r.Results)
			}
			fmt.Fprint(a.stdout, r.Text())
			if len(r.Results) > 0 {
				fmt.Fprintf(a.stdout, "install one with `yolop ext install <extension>%s`\n", flagArg("--registry", registry))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	cmd.Flags().StringVar(&registry, "registry", "", "search this sparse registry (`sparse+URL`; default: [extensions] registry in settings.toml, else crates.io)")
	cmd.Flags().IntVar(&limit, "limit", 20, "at most this many results")
	cmd.Flags().StringVar(&market, "marketplace", "", "search only this added marketplace (`name`; see yolop ext marketplace)")
	return cmd
}

// flagArg is " FLAG VALUE" when value is set, for a command to re-run.
func flagArg(flag, value string) string {
	if value == "" {
		return ""
	}
	return " " + flag + " " + value
}
