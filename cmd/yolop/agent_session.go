package main

import "yolop.dev/harness"

// noModel is what a line that is not a command answers in a session
// without a model: the ways to configure one.
const noModel = "configure one with `yolop model`, under [model] in settings.toml, with YOLOP_MODEL or with --model <provider>/<model> (such as openai/gpt-4.1 or anthropic/claude-sonnet-4-5)"

// sessionModel reports whether the session talks to a model, and which:
// --model (or the front-end's own provider), else the configured one. ref
// is empty for a [model] table that does not parse, which
// [harness.Harness.NewAgent] then reports.
func sessionModel(h *harness.Harness, f sessionFlags) (ref string, ok bool) {
	if f.model != "" || f.provider != nil {
		return f.model, true
	}
	return h.ModelConfigured()
}
