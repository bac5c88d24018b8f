package harness

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"yolop.dev/harness/manager"
)

// Update re-resolves the recorded source of each of names — every
// installed extension when names is empty — from registry (empty means
// the recorded one), asking consent(name) for a widening change. done
// hears each outcome as it is applied. It returns how many extensions it
// tried and every failure, each naming its extension, joined.
func (h *Harness) Update(ctx context.Context, names []string, registry string, consent func(name string) manager.Consent, done func(*manager.Outcome)) (int, error) {
	return h.UpdateWith(ctx, names, manager.UpdateOptions{Registry: registry}, consent, done)
}

// UpdateWith is [Harness.Update] with the update's options (the registry,
// and Now to install without the update cooldown).
func (h *Harness) UpdateWith(ctx context.Context, names []string, o manager.UpdateOptions, consent func(name string) manager.Consent, done func(*manager.Outcome)) (int, error) {
	if len(names) == 0 {
		var err error
		if names, err = h.mgr.Names(ctx); err != nil {
			return 0, err
		}
	}
	var errs []error
	for _, n := range names {
		out, err := h.mgr.UpdateWith(ctx, n, o, consent(n))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "update "+n+":") {
				err = fmt.Errorf("update %s: %w", n, err) // name the extension once
			}
			errs = append(errs, err)
			continue
		}
		done(out)
	}
	return len(names), errors.Join(errs...)
}
