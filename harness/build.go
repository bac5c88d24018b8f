package harness

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"yolop.dev/core/yep"
)

// A Build describes a yolop binary, for `yolop version` and a front-end's
// about screen.
type Build struct {
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

// CurrentBuild describes the running binary: version and commit as its
// linker variables set them (an empty commit is taken from the build's VCS
// stamp, when there is one), the Go version, platform and YEP versions.
func CurrentBuild(version, commit string) Build {
	b := Build{
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

// String is the text `yolop version` prints.
func (b Build) String() string {
	c := b.Commit
	if c == "" {
		c = "unknown (not built from a git checkout)"
	} else if b.Modified {
		c += " (with local changes)"
	}
	return fmt.Sprintf("yolop %s\n  commit:   %s\n  go:       %s %s\n  protocol: YEP %s (speaks major %v, interoperates from %s)\n",
		b.Version, c, b.Go, b.Platform, b.Protocol, b.ProtocolMajors, b.MinProtocol)
}
