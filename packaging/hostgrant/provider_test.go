package hostgrant

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"yolop.dev/core/host"
	"yolop.dev/packaging"
)

// The providers facet reaches the grant model by model, with the approved
// context windows, and makes the extension eager (its endpoint must exist
// before the first turn).
func TestFromManifestProvider(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(`{"name":"llm","version":"1","yolop":{"protocol_version":"1.0",
		"capabilityServer":{"command":"srv"},
		"provider":{"name":"scripted","models":[{"id":"scripted-1","context_window":128000},{"id":"qwen/qwen3:8b","context_window":32768}]}}}`), 0o644)
	m, err := packaging.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	g, err := FromManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	want := &host.ProviderGrant{Name: "scripted", Models: []host.ProviderModel{{ID: "scripted-1", ContextWindow: 128000}, {ID: "qwen/qwen3:8b", ContextWindow: 32768}}}
	if d := cmp.Diff(want, g.Provider); d != "" {
		t.Fatalf("provider grant (-want +got):\n%s", d)
	}
	if !host.NewExtension(g, host.ExtensionOptions{}).Eager() {
		t.Fatal("an extension with a providers facet is not eager")
	}
}
