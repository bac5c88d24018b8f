package config

import (
	"context"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/harness/settings"
	"yolop.dev/packaging"
)

// A HookPolicyStore holds the user's [hooks] table; the settings package's
// File implements it. A [Resolver] whose Settings is not one applies no
// hook policy.
type HookPolicyStore interface {
	HookPolicy(ctx context.Context) (settings.HookPolicy, error)
}

// ApplyHookPolicy sets the on_error of the hook subscriptions of a
// package loaded through the declarative path (a Claude Code plugin) to
// what the user's [hooks] table says for it: "block" fails every blocking
// event's subscription closed, "allow" lets it through with a warning;
// unset keeps each event's default (block for a blocking event). A
// package with a yolop facet declares its own on_error and is left as it
// is; nothing in a package's files reaches this.
func ApplyHookPolicy(m *packaging.Manifest, g *host.Grant, p settings.HookPolicy) {
	if m.Declarative == nil {
		return
	}
	var onError string
	switch p.For(m.Name) {
	case settings.HookBlock:
		onError = yep.HookOnErrorBlock
	case settings.HookAllow:
		onError = yep.HookOnErrorWarn
	default:
		return
	}
	for i, h := range g.Hooks {
		if onError == yep.HookOnErrorBlock && !yep.HookBlocking(h.Event) {
			continue
		}
		g.Hooks[i].OnError = onError
	}
}

// applyHookSettings reads the [hooks] table when r's settings hold one and
// applies it to g.
func (r *Resolver) applyHookSettings(ctx context.Context, m *packaging.Manifest, g *host.Grant) error {
	st, ok := r.Settings.(HookPolicyStore)
	if !ok || m.Declarative == nil {
		return nil
	}
	p, err := st.HookPolicy(ctx)
	if err != nil {
		return err
	}
	ApplyHookPolicy(m, g, p)
	return nil
}
