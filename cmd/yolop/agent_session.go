package main

import (
	"context"

	"yolop.dev/harness"
)

// noModel is what a line that is not a command answers in a session
// without a model: the ways to configure one.
const noModel = "configure one with `yolop model`, under [model] in settings.toml, with YOLOP_MODEL or with --model <provider>/<model> (such as openai/gpt-4.1 or anthropic/claude-sonnet-4-5)"

// sessionModel reports whether the session talks to a model, and which:
// --model (or the front-end's own provider), else the configured one. A
// configured model that does not resolve (a malformed settings.toml, say)
// is no model, with a warning saying why: the session still runs its
// commands. A --model that does not resolve fails later, in NewAgent.
func sessionModel(ctx context.Context, h *harness.Harness, f sessionFlags) (ref string, ok bool, warning string) {
	if f.model != "" || f.provider != nil {
		return f.model, true, ""
	}
	if ref, ok = h.ModelConfigured(); !ok {
		return "", false, ""
	}
	if _, err := h.ResolveModel(ctx, ""); err != nil {
		return "", false, "no model for this session: " + err.Error()
	}
	return ref, true, ""
}
