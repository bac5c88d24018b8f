package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"yolop.dev/agent/tokens"
	"yolop.dev/harness"
)

func (a *app) modelsCmd() *cobra.Command {
	var (
		asJSON bool
		model  string
		exts   []string
	)
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the model providers and the models extensions serve, and mark the one in use",
		Long: `models lists the providers yolop builds (openai: OpenAI and any
OpenAI-compatible server; anthropic) with their base URL and whether an
API key is set (never the key), and every model an approved extension
serves, as the reference that asks it (ext:<extension>/<model>), with the
context window you approved and whether the extension is enabled. The
model in use (--model, else $YOLOP_MODEL, else [model] in settings.toml)
is marked with *.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := a.harness()
			if err != nil {
				return err
			}
			l, err := h.Models(cmd.Context(), model, exts)
			if err != nil {
				return fmt.Errorf("yolop models: %w", err)
			}
			if asJSON {
				return a.printJSON(l)
			}
			a.printModels(l)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")
	cmd.Flags().StringVar(&model, "model", "", "mark `PROVIDER/MODEL` as in use, as yolop run --model would")
	cmd.Flags().StringArrayVar(&exts, "ext", nil, "also list the models of the package in `DIR`, loaded in place (repeatable)")
	return cmd
}

// printModels prints l for a person.
func (a *app) printModels(l harness.ModelList) {
	if l.InUse != "" {
		fmt.Fprintf(a.stdout, "in use: %s (from %s)\n", l.InUse, l.InUseFrom)
	} else {
		why, _, _ := strings.Cut(l.NoModel, "\n") // the first line; yolop model show says the rest
		fmt.Fprintf(a.stdout, "in use: none (%s)\n", strings.TrimSuffix(why, ":"))
	}
	fmt.Fprintln(a.stdout, "\nproviders:")
	for _, p := range l.Providers {
		key := "no API key"
		if p.KeySet {
			key = "API key from " + p.KeyFrom
		}
		fmt.Fprintf(a.stdout, "%s %-12s %s (from %s), %s\n", mark(p.InUse), p.Provider+"/*", p.BaseURL, p.BaseURLFrom, key)
	}
	fmt.Fprintln(a.stdout, "\nmodels extensions serve:")
	if len(l.ExtensionModels) == 0 {
		fmt.Fprintln(a.stdout, "  none (an extension with a providers facet adds its models here; see docs/agent.md)")
	}
	width := 0
	for _, m := range l.ExtensionModels {
		width = max(width, len(m.Ref))
	}
	for _, m := range l.ExtensionModels {
		state := "not enabled (yolop ext enable " + m.Extension + ")"
		switch {
		case m.InPlace:
			state = "loaded in place"
		case m.Enabled:
			state = "enabled"
		}
		fmt.Fprintf(a.stdout, "%s %-*s %s-token window, %s\n", mark(m.InUse), width, m.Ref, tokens.Thousands(m.ContextWindow), state)
	}
}

func mark(inUse bool) string {
	if inUse {
		return "*"
	}
	return " "
}
