package harness

import (
	"context"

	"yolop.dev/harness/fetch"
	"yolop.dev/harness/firstseen"
	"yolop.dev/packaging"
)

// seenGate records the versions a look at a registry sees (ext info of a
// crate), so an update's wait counts from the first time yolop saw them;
// it holds nothing back.
func (h *Harness) seenGate() fetch.Gate {
	return &firstseen.Gate{Store: firstseen.New(h.dir), Now: h.o.Now}
}

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
