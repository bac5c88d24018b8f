package harness

import (
	"context"

	"yolop.dev/registry/cratesio"
)

// advisories reads the advisories registry publishes for crate with the
// same client (cache under the config directory, [registry] limits) an
// install uses; the manager checks installed and incoming crate versions
// against them.
func (h *Harness) advisories(ctx context.Context, registry, crate string) ([]cratesio.Advisory, error) {
	cl, err := h.crate.Client(ctx, registry)
	if err != nil {
		return nil, err
	}
	return cl.Advisories(ctx, crate)
}
