package harness_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"yolop.dev/harness"
	"yolop.dev/harness/internal/echotest"
	"yolop.dev/harness/manager"
	"yolop.dev/harness/secrets"
)

// Models lists the providers with where their endpoints and keys come from
// (never a key), every approved extension model with its window and
// whether the extension is enabled, a package's in place, and marks the
// model in use.
func TestModels(t *testing.T) {
	ctx := context.Background()
	modelEnv(t)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-env")
	cfg := t.TempDir()
	if err := os.WriteFile(filepath.Join(cfg, "settings.toml"), []byte("[model]\nprovider = \"openai\"\nmodel = \"local\"\nbase_url = \"http://127.0.0.1:11434/v1\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := openHarness(t, cfg)
	if err := h.SetModelKey(ctx, "openai", secrets.New("sk-stored")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Manager().Install(ctx, manager.InstallRequest{Source: scriptedPackage(t), Consent: echotest.Accept}); err != nil {
		t.Fatal(err)
	}
	prov := providerPackage(t, "prov", map[string]int{"m1": 1000}, nil)

	l, err := h.Models(ctx, "", []string{prov})
	if err != nil {
		t.Fatal(err)
	}
	want := harness.ModelList{
		InUse: "openai/local", InUseFrom: harness.FromSettings,
		Providers: []harness.ProviderEntry{
			{Provider: "openai", BaseURL: "http://127.0.0.1:11434/v1", BaseURLFrom: harness.FromSettings, KeySet: true, KeyFrom: harness.FromConnections, InUse: true},
			{Provider: "anthropic", BaseURL: "https://api.anthropic.com/", BaseURLFrom: harness.FromDefault, KeySet: true, KeyFrom: "ANTHROPIC_API_KEY"},
		},
		ExtensionModels: []harness.ExtensionModel{
			{Ref: "ext:scripted/scripted", Extension: "scripted", Provider: "scripted", Model: "scripted", ContextWindow: 128000},
			{Ref: "ext:prov/m1", Extension: "prov", Provider: "prov", Model: "m1", ContextWindow: 1000, InPlace: true},
		},
	}
	if diff := cmp.Diff(want, l); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	// Enabled, and asked with --model: the extension's model is in use.
	if _, err := h.Manager().Enable(ctx, "scripted"); err != nil {
		t.Fatal(err)
	}
	l, err = h.Models(ctx, "ext:scripted/scripted", nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.InUse != "ext:scripted/scripted" || l.InUseFrom != harness.FromFlag || l.Providers[0].InUse || len(l.ExtensionModels) != 1 ||
		!l.ExtensionModels[0].Enabled || !l.ExtensionModels[0].InUse {
		t.Errorf("with --model ext:scripted/scripted: %+v", l)
	}

	// A model that does not resolve is no model in use, with the reason.
	l, err = h.Models(ctx, "nosuch/x", nil)
	if err != nil || l.InUse != "" || l.NoModel == "" {
		t.Errorf("with an unknown provider: %+v, %v", l, err)
	}
}
