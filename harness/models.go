package harness

import (
	"context"
	"fmt"

	"yolop.dev/packaging"
)

// A ModelList is what `yolop models` shows: the providers the harness
// builds, every model an approved extension serves, and which model is in
// use.
type ModelList struct {
	// InUse is the resolved model's reference ("openai/gpt-4.1",
	// "ext:scripted/scripted"), and InUseFrom where it is configured
	// ([FromFlag], [FromEnv], [FromSettings]); both empty when no model
	// resolves, and NoModel says why.
	InUse     string `json:"in_use,omitempty"`
	InUseFrom string `json:"in_use_from,omitempty"`
	NoModel   string `json:"no_model,omitempty"`
	// Providers are the providers the harness builds, with their
	// endpoints and whether a key is set (never the key).
	Providers []ProviderEntry `json:"providers"`
	// ExtensionModels are the models extensions serve: every installed
	// extension's approved ones, then those of packages loaded in place.
	ExtensionModels []ExtensionModel `json:"extension_models"`
}

// A ProviderEntry is one provider the harness builds.
type ProviderEntry struct {
	// Provider is [ProviderOpenAI] or [ProviderAnthropic].
	Provider string `json:"provider"`
	// BaseURL is where its requests go, and BaseURLFrom where that is
	// configured (see [ModelConfig]).
	BaseURL     string `json:"base_url"`
	BaseURLFrom string `json:"base_url_from"`
	// KeySet says whether an API key is set, and KeyFrom where it comes
	// from (see [ModelConfig.KeyFrom]).
	KeySet  bool   `json:"key_set"`
	KeyFrom string `json:"key_from,omitempty"`
	// InUse marks the provider of the model in use.
	InUse bool `json:"in_use"`
}

// An ExtensionModel is one model an extension serves.
type ExtensionModel struct {
	// Ref is the reference that asks it, "ext:<extension>/<model>".
	Ref       string `json:"ref"`
	Extension string `json:"extension"`
	// Provider is the providers facet's name.
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// ContextWindow is the window the user approved, in tokens.
	ContextWindow int `json:"context_window"`
	// Enabled says the extension runs in sessions; InPlace that its
	// package was loaded in place (--ext), unapproved.
	Enabled bool `json:"enabled"`
	InPlace bool `json:"in_place,omitempty"`
	// InUse marks the model in use.
	InUse bool `json:"in_use"`
}

// Models lists the providers and extension models (see [ModelList]).
// flag is a --model reference, the model in use when set; dirs are
// packages loaded in place (--ext), whose models are listed too. Only an
// unreadable extensions.lock, a package in dirs that does not load or a
// settings.toml that does not parse fail it.
func (h *Harness) Models(ctx context.Context, flag string, dirs []string) (ModelList, error) {
	l := ModelList{Providers: []ProviderEntry{}, ExtensionModels: []ExtensionModel{}}
	inUse, err := h.ResolveModel(ctx, flag)
	if err != nil {
		l.NoModel = err.Error()
	} else {
		l.InUse, l.InUseFrom = inUse.Ref(), inUse.ModelFrom
	}
	for _, p := range []string{ProviderOpenAI, ProviderAnthropic} {
		c, err := h.ResolveModel(ctx, p+"/-")
		if err != nil {
			return ModelList{}, err
		}
		l.Providers = append(l.Providers, ProviderEntry{
			Provider: p, BaseURL: c.BaseURL, BaseURLFrom: c.BaseURLFrom,
			KeySet: c.KeyFrom != "", KeyFrom: c.KeyFrom, InUse: l.InUse != "" && inUse.Provider == p,
		})
	}

	installed, err := h.store.List(ctx)
	if err != nil {
		return ModelList{}, fmt.Errorf("listing the installed extensions: %w", err)
	}
	ents, _ := h.settings.Extensions(ctx) // a malformed settings.toml failed ResolveModel above
	enabled := map[string]bool{}
	for _, e := range ents {
		enabled[e.Name] = e.Enabled
	}
	add := func(m *packaging.Manifest, inPlace bool) {
		if m == nil || m.Yolop == nil || m.Yolop.Provider == nil {
			return
		}
		for _, pm := range m.Yolop.Provider.Models {
			ref := ExtProviderPrefix + m.Name + "/" + pm.ID
			l.ExtensionModels = append(l.ExtensionModels, ExtensionModel{
				Ref: ref, Extension: m.Name, Provider: m.Yolop.Provider.Name, Model: pm.ID,
				ContextWindow: pm.ContextWindow, Enabled: enabled[m.Name], InPlace: inPlace, InUse: ref == l.InUse,
			})
		}
	}
	for _, in := range installed {
		if in.Entry == nil {
			continue // not in extensions.lock: nothing approved
		}
		m, err := in.Entry.ApprovedManifest()
		if err != nil {
			continue // `yolop ext list` reports it
		}
		add(m, false)
	}
	for _, dir := range dirs {
		m, _, _, err := InPlace(dir)
		if err != nil {
			return ModelList{}, fmt.Errorf("%s: %w", dir, err)
		}
		add(m, true)
	}
	return l, nil
}
