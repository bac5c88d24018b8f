package harness

import (
	"context"

	"yolop.dev/harness/config"
	"yolop.dev/packaging"
)

// sandboxInfo is the sandbox line of `yolop ext info` for m: what this
// machine enforces of its native server's sandbox under the user's
// [sandbox] settings and where the rules come from ([config.SandboxStatus]);
// "" when m has no native server.
func (h *Harness) sandboxInfo(ctx context.Context, m *packaging.Manifest) string {
	if sb, _ := m.EffectiveSandbox(); sb == nil {
		return ""
	}
	s, err := h.settings.Sandbox(ctx)
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return config.SandboxStatus(m, s, h.settings.Path())
}
