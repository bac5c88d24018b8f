package main

import (
	"strings"

	"yolop.dev/packaging"
)

// serverBinary returns the file name the manifest's capability server runs
// as a bare command (or as bin/<name>), or "" when the package has no
// server or runs it by another relative path.
func serverBinary(m *packaging.Manifest) string {
	if m.Yolop == nil || m.Yolop.CapabilityServer == nil {
		return ""
	}
	cmd := m.Yolop.CapabilityServer.Command
	if rest, ok := strings.CutPrefix(cmd, "bin/"); ok {
		cmd = rest
	}
	if cmd == "" || strings.ContainsAny(cmd, `/\`) {
		return ""
	}
	return cmd
}
