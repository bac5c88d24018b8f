package packaging

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func providerFacet(models ...any) obj {
	return obj{"name": "scripted", "models": models}
}

func model(id string, window int) obj { return obj{"id": id, "context_window": window} }

func TestProviderFacetLoads(t *testing.T) {
	m := loadJSON(t, func(f obj) {
		f["provider"] = providerFacet(model("scripted-1", 128000), model("llama3.1:8b", 8192), model("qwen/qwen3", 32768), model("gpt-4o-mini", 1))
	})
	want := &Provider{Name: "scripted", Models: []ProviderModel{
		{ID: "scripted-1", ContextWindow: 128000}, {ID: "llama3.1:8b", ContextWindow: 8192},
		{ID: "qwen/qwen3", ContextWindow: 32768}, {ID: "gpt-4o-mini", ContextWindow: 1},
	}}
	if d := cmp.Diff(want, m.Yolop.Provider); d != "" {
		t.Fatalf("provider (-want +got):\n%s", d)
	}
}

// Each rule of the providers facet refuses the manifest at install, with
// the field named (by the manifest schema or, for what it cannot express,
// by checkProvider).
func TestProviderFacetRules(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(f obj)
		wants []string
		is    error
	}{
		{"no name", func(f obj) { f["provider"] = obj{"models": []any{model("a", 1)}} }, []string{"yolop.provider", "missing property 'name'"}, nil},
		{"bad name", func(f obj) { f["provider"] = obj{"name": "my provider", "models": []any{model("a", 1)}} }, []string{"yolop.provider.name", "my provider"}, nil},
		{"no models", func(f obj) { f["provider"] = obj{"name": "p"} }, []string{"yolop.provider", "missing property 'models'"}, nil},
		{"empty models", func(f obj) { f["provider"] = providerFacet() }, []string{"yolop.provider.models", "empty"}, nil},
		{"duplicate model", func(f obj) { f["provider"] = providerFacet(model("a", 1), model("a", 2)) },
			[]string{"yolop.provider.models[1].id", `model "a" is already declared at yolop.provider.models[0]`}, ErrDuplicateName},
		{"model id with a space", func(f obj) { f["provider"] = providerFacet(model("gpt 5", 1)) }, []string{"yolop.provider.models[0].id", "gpt 5"}, nil},
		{"model id with a newline", func(f obj) { f["provider"] = providerFacet(model("a\nb", 1)) }, []string{"yolop.provider.models[0].id", "does not match"}, nil},
		{"empty model id", func(f obj) { f["provider"] = providerFacet(model("", 1)) }, []string{"yolop.provider.models[0].id"}, nil},
		{"no context window", func(f obj) { f["provider"] = providerFacet(obj{"id": "a"}) }, []string{"context_window"}, nil},
		{"zero context window", func(f obj) { f["provider"] = providerFacet(model("a", 0)) }, []string{"yolop.provider.models[0].context_window", "minimum"}, nil},
		{"huge context window", func(f obj) { f["provider"] = providerFacet(model("a", 100_000_001)) }, []string{"yolop.provider.models[0].context_window", "maximum"}, nil},
		{"no capability server", func(f obj) {
			delete(f, "capabilityServer")
			delete(f, "tools")
			f["provider"] = providerFacet(model("a", 1))
		}, []string{"yolop.capabilityServer", "provider need a capability server"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(pkg(t, map[string]any{"plugin.json": manifest(tc.edit)}))
			if !errors.Is(err, ErrInvalidManifest) {
				t.Fatalf("err = %v, want ErrInvalidManifest", err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want it to match %v", err, tc.is)
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// The semantic rules hold without the JSON schema too: a manifest built
// in Go (as scaffold does) is checked by the same function.
func TestProviderCheckerWithoutSchema(t *testing.T) {
	c := &checker{m: &Manifest{}}
	c.checkProvider(&Provider{Name: "p", Models: []ProviderModel{{ID: "a", ContextWindow: 5}, {ID: "b c", ContextWindow: -1}, {ID: "a", ContextWindow: 5}}})
	want := []string{
		`yolop.provider.models[1].id: "b c" is not a valid model id (want a letter or digit, then letters, digits and . _ : / -, at most 128, no whitespace)`,
		"yolop.provider.models[1].context_window: -1 is outside 1..100000000 tokens; give the model's context window",
		`yolop.provider.models[2].id: model "a" is already declared at yolop.provider.models[0]`,
	}
	if d := cmp.Diff(want, c.errs); d != "" {
		t.Fatalf("errors (-want +got):\n%s", d)
	}
}

func TestProviderSummary(t *testing.T) {
	m := loadJSON(t, func(f obj) { f["provider"] = providerFacet(model("scripted-1", 128000), model("big", 1_000_000)) })
	s := Summary(m)
	want := "Provider scripted: models scripted-1 (128000-token window), big (1000000-token window)"
	if !strings.Contains(s, want) {
		t.Fatalf("summary lacks %q:\n%s", want, s)
	}
	if s := Summary(loadJSON(t, nil)); strings.Contains(s, "Provider") {
		t.Fatalf("a package without a provider shows one:\n%s", s)
	}
}

func TestProviderDiff(t *testing.T) {
	base := func(f obj) { f["provider"] = providerFacet(model("a", 1000), model("b", 2000)) }
	old := loadJSON(t, base)
	for _, tc := range []struct {
		name                 string
		edit                 func(f obj)
		widen, narrow, notes []string
	}{
		{"identical", func(f obj) {}, nil, nil, nil},
		{"new model", func(f obj) { f["provider"] = providerFacet(model("a", 1000), model("b", 2000), model("c", 3000)) },
			[]string{"provider scripted: new model c (3000-token window)"}, nil, nil},
		{"larger window", func(f obj) { f["provider"] = providerFacet(model("a", 1000), model("b", 4000)) },
			[]string{"provider scripted: model b context window 2000 → 4000 tokens"}, nil, nil},
		{"smaller window", func(f obj) { f["provider"] = providerFacet(model("a", 500), model("b", 2000)) },
			nil, []string{"provider scripted: model a context window 1000 → 500 tokens"}, nil},
		{"removed model", func(f obj) { f["provider"] = providerFacet(model("b", 2000)) },
			nil, []string{"provider scripted: model a removed"}, nil},
		{"renamed", func(f obj) { f["provider"] = obj{"name": "other", "models": []any{model("a", 1000), model("b", 2000)}} },
			nil, nil, []string{"provider name scripted → other"}},
		{"removed provider", func(f obj) { delete(f, "provider") }, nil, []string{"provider scripted removed"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Diff(old, loadJSON(t, func(f obj) { base(f); tc.edit(f) }))
			if d := cmp.Diff(tc.widen, c.Widening); d != "" {
				t.Errorf("widening (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.narrow, c.Narrowing); d != "" {
				t.Errorf("narrowing (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.notes, c.Notes); d != "" {
				t.Errorf("notes (-want +got):\n%s", d)
			}
		})
	}
	// Adding a provider to an approved package widens by all of it.
	c := Diff(loadJSON(t, nil), old)
	if d := cmp.Diff([]string{"new provider scripted: models a (1000-token window), b (2000-token window)"}, c.Widening); d != "" {
		t.Errorf("new provider (-want +got):\n%s", d)
	}
	if fresh := Diff(nil, old); !strings.Contains(strings.Join(fresh.Widening, "\n"), "new provider scripted") {
		t.Errorf("fresh install does not name the provider: %q", fresh.Widening)
	}
}
