package harness

import (
	"context"
	"time"

	"yolop.dev/registry/cratesio"
)

// advisoryTimeout bounds one crate's advisory check, retries included, so
// an unreachable registry delays a session start by at most this much (the
// cached copy is used then).
const advisoryTimeout = 15 * time.Second

// advisories reads the advisories registry publishes for crate with the
// same client (cache under the config directory, [registry] limits) an
// install uses; the manager checks installed and incoming crate versions
// against them.
func (h *Harness) advisories(ctx context.Context, registry, crate string) ([]cratesio.Advisory, error) {
	ctx, cancel := context.WithTimeout(ctx, advisoryTimeout)
	defer cancel()
	cl, err := h.crate.Client(ctx, registry)
	if err != nil {
		return nil, err
	}
	return cl.Advisories(ctx, crate)
}
