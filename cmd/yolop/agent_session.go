package main

import (
	"context"

	"yolop.dev/harness"
)

// sessionModel reports whether the session talks to a model, and which:
// the front-end's own provider (the demo's), else [harness.Harness.SessionModel].
func sessionModel(ctx context.Context, h *harness.Harness, f sessionFlags) (ref string, ok bool, warning string) {
	if f.provider != nil {
		return f.model, true, ""
	}
	return h.SessionModel(ctx, f.model)
}
