package harness

import (
	"context"
	"fmt"
	"strings"

	"yolop.dev/harness/config"
	"yolop.dev/packaging"
)

// ConfigText describes the config of the installed extension m as `yolop
// ext config get` prints it: with field empty, every field with its value,
// its default (marked) or that it is unset, a secret by name only; with a
// field, that field's value.
func (h *Harness) ConfigText(ctx context.Context, m *packaging.Manifest, field string) (string, error) {
	path := h.settings.Path()
	if field != "" {
		v, set, err := h.resolver.GetField(ctx, m, field)
		switch {
		case err != nil:
			return "", err
		case set:
			return config.FormatValue(v) + "\n", nil
		case v != nil:
			return fmt.Sprintf("%s (default; not set in %s)\n", config.FormatValue(v), path), nil
		}
		return fmt.Sprintf("(not set in %s)\n", path), nil
	}
	vals, err := h.resolver.Values(ctx, m)
	if err != nil {
		return "", err
	}
	if len(vals) == 0 {
		return fmt.Sprintf("extension %s declares no config fields\n", m.Name), nil
	}
	var b strings.Builder
	for _, v := range vals {
		switch {
		case v.Field.Secret:
			fmt.Fprintf(&b, "%s: secret, not shown; see `yolop ext secret list %s`\n", v.Field.Name, m.Name)
		case v.Set:
			fmt.Fprintf(&b, "%s = %s\n", v.Field.Name, config.FormatValue(v.Value))
		case v.Value != nil:
			fmt.Fprintf(&b, "%s = %s (default)\n", v.Field.Name, config.FormatValue(v.Value))
		default:
			fmt.Fprintf(&b, "%s: not set\n", v.Field.Name)
		}
	}
	fmt.Fprintf(&b, "(values from %s; a default applies where nothing is set)\n", path)
	return b.String(), nil
}
