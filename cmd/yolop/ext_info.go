package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"yolop.dev/harness"
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
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(in)
			}
			_, err = fmt.Fprint(a.stdout, infoText(in))
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON object")
	cmd.Flags().StringVar(&registry, "registry", "", "look a crate up in this sparse registry (`sparse+URL`)")
	return cmd
}

func infoText(in *harness.Info) string {
	var b strings.Builder
	state := "not installed"
	if in.Installed {
		state = "installed, disabled"
		if in.Enabled {
			state = "installed, enabled"
		}
	}
	fmt.Fprintf(&b, "%s %s — %s\n", in.Name, orDash(in.Version), state)
	fmt.Fprintf(&b, "  approval: %s\n", in.Approval)
	if in.Pending != "" {
		b.WriteString("    " + strings.ReplaceAll(in.Pending, "\n", "\n    ") + "\n")
	}
	fmt.Fprintf(&b, "  source:   %s (%s)\n", in.Source, in.Kind)
	if l := in.Lock; l != nil {
		if l.Commit != "" {
			fmt.Fprintf(&b, "  commit:   %s\n", l.Commit)
		}
		fmt.Fprintf(&b, "  content:  %s (%d files)\n", l.ContentHash, l.Files)
		if l.Registry != "" {
			fmt.Fprintf(&b, "  registry: %s\n", l.Registry)
		}
		if l.CrateChecksum != "" {
			fmt.Fprintf(&b, "  crate:    sha256 %s\n", l.CrateChecksum)
		}
		if l.ArtifactDigest != "" {
			fmt.Fprintf(&b, "  binary:   sha256 %s (prebuilt)\n", l.ArtifactDigest)
		}
		fmt.Fprintf(&b, "  approved: %s\n", l.InstalledAt.Format("2006-01-02 15:04:05 MST"))
	}
	if in.Health != "" {
		fmt.Fprintf(&b, "  health:   %s\n", in.Health)
	}
	for _, w := range in.Warnings {
		fmt.Fprintf(&b, "  warning:  %s\n", w)
	}
	if len(in.Config) > 0 {
		var fs []string
		for _, f := range in.Config {
			st := "unset"
			if f.Set {
				st = "set"
			}
			if !in.Installed {
				st = f.Type
			}
			if f.Secret {
				st += ", secret"
			}
			if f.Required {
				st += ", required"
			}
			fs = append(fs, fmt.Sprintf("%s (%s)", f.Name, st))
		}
		fmt.Fprintf(&b, "  config:   %s\n", strings.Join(fs, ", "))
	}
	b.WriteString("\n" + in.Summary)
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
