package manager

import (
	"context"

	"yolop.dev/harness/config"
	"yolop.dev/packaging"
)

// sandboxText is the line the consent prompt adds under the manifest's
// sandbox: what this machine will enforce of it with the user's [sandbox]
// settings ("sandboxed (Landlock ABI 7)", "unsandboxed (kernel has no
// Landlock)", "partly sandboxed: …", or that it will not start). "" for a
// package with no native server.
func (m *Manager) sandboxText(ctx context.Context, next *packaging.Manifest) string {
	s, err := m.o.Settings.Sandbox(ctx)
	if err != nil {
		return "  Sandbox on this machine: unknown (" + err.Error() + ")\n"
	}
	st := config.SandboxStatus(next, s, m.o.Settings.Path())
	if st == "" {
		return ""
	}
	return "  Sandbox on this machine: " + st + "\n"
}
