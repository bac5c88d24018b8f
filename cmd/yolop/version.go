package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"yolop.dev/core/yep"
)

// commit is set at link time with -ldflags "-X main.commit=…"; otherwise it
// comes from the build's VCS stamp, when there is one.
var commit = ""

// buildInfo describes this binary for `yolop version`.
type buildInfo struct {
	Version         string `json:"version"`
	Commit          string `json:"commit,omitempty"`
	Modified        bool   `json:"modified,omitempty"`
	Go              string `json:"go"`
	Platform        string `json:"platform"`
	Protocol        string `json:"protocol"`
	ProtocolMajors  []int  `json:"protocol_majors"`
	MinProtocol     string `json:"min_protocol"`
	ModuleVersion   string `json:"module_version,omitempty"`
	ModulePathBuilt string `json:"module,omitempty"`
}

func currentBuild() buildInfo {
	b := buildInfo{
		Version: version, Commit: commit, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		Protocol: yep.ProtocolVersion, ProtocolMajors: []int{yep.ProtocolMajor}, MinProtocol: yep.MinProtocolVersion,
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		b.ModulePathBuilt, b.ModuleVersion = bi.Main.Path, bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
				}
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	return b
}

func (b buildInfo) String() string {
	c := b.Commit
	if c == "" {
		c = "unknown (not built from a git checkout)"
	} else if b.Modified {
		c += " (with local changes)"
	}
	return fmt.Sprintf("yolop %s\n  commit:   %s\n  go:       %s %s\n  protocol: YEP %s (speaks major %v, interoperates from %s)\n",
		b.Version, c, b.Go, b.Platform, b.Protocol, b.ProtocolMajors, b.MinProtocol)
}

func (a *app) versionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, Go version and YEP protocol version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			b := currentBuild()
			if asJSON {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(b)
			}
			_, err := fmt.Fprint(a.stdout, b)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON object")
	return cmd
}
