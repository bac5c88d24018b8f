package harness

import (
	"context"

	"yolop.dev/packaging"
)

// infoWaiting fills in.Waiting with the updates of e still in their
// cooldown; a record that cannot be read becomes a warning.
func (h *Harness) infoWaiting(ctx context.Context, e *packaging.LockEntry, in *Info) {
	w, err := h.mgr.Waiting(ctx, e, nil)
	if err != nil {
		in.Warnings = append(in.Warnings, err.Error())
		return
	}
	in.Waiting = w
}
