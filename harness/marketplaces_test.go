package harness_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/harness"
	"yolop.dev/harness/manager"
	"yolop.dev/packaging"
)

// A marketplace added to the config directory is searched with the
// registry, its plugins listed as <plugin>@<marketplace>, and a registry
// that cannot be reached is then a note; the harness's manager installs an
// entry by that name.
func TestSearchListsMarketplacePlugins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, err := harness.Open(ctx, harness.Options{ConfigDir: filepath.Join(t.TempDir(), "config")})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(h.ConfigDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	market := filepath.Join(t.TempDir(), "market")
	if err := packaging.CopyTree(filepath.Join("marketplace", "testdata", "market"), market); err != nil {
		t.Fatal(err)
	}
	// Nothing listens on port 1, and with no retries the registry fails
	// at once.
	if err := os.WriteFile(filepath.Join(h.ConfigDir(), "settings.toml"), []byte("[registry]\nretries = 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Marketplaces().Add(ctx, market); err != nil {
		t.Fatal(err)
	}
	r, err := h.Search(ctx, "sparse+http://127.0.0.1:1/", "greet", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 1 || r.Results[0].Extension != "greeter@yolop-fixtures" || r.Results[0].Version != "0.2.0" {
		t.Fatalf("results = %+v", r.Results)
	}
	text := r.Text()
	if !strings.Contains(text, "greeter@yolop-fixtures  0.2.0    Greets whoever asks") || !strings.Contains(text, "note: the registry could not be searched") {
		t.Fatalf("Text() = %q", text)
	}
	only, err := h.SearchMarketplaces(ctx, "yolop-fixtures", "")
	if err != nil || len(only.Results) != 2 || len(only.Notes) != 0 {
		t.Fatalf("SearchMarketplaces = %+v, %v", only, err)
	}
	if _, err := h.SearchMarketplaces(ctx, "nowhere", ""); err == nil || !strings.Contains(err.Error(), "added: yolop-fixtures") {
		t.Fatalf("an unknown marketplace: %v", err)
	}
	// ext info reads an entry before it is installed.
	in, err := h.Info(ctx, "greeter@yolop-fixtures", "")
	if err != nil || in.Approval != "not installed" || in.Kind != "marketplace" || in.Source != "greeter@yolop-fixtures" || !strings.Contains(in.Summary, "greet") {
		t.Fatalf("info = %+v, %v", in, err)
	}
	if _, err := os.Stat(filepath.Join(h.ConfigDir(), "extensions", "greeter")); !os.IsNotExist(err) {
		t.Fatalf("info installed something: %v", err)
	}
	out, err := h.Manager().Install(ctx, manager.InstallRequest{Source: "greeter@yolop-fixtures", Consent: func(context.Context, manager.Proposal) error { return nil }})
	if err != nil || out.Entry.Kind != packaging.SourceMarketplace {
		t.Fatalf("install = %+v, %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(h.ConfigDir(), "extensions", "greeter", "plugin.json")); err != nil {
		t.Fatal(err)
	}
}
