package harness_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/harness"
)

// providerPackageDir writes a package whose server is doctor's provider
// test server (python3), offering the models scripted-1 and scripted-2.
func providerPackageDir(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "doctor", "testdata", "provider.py"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "provider.py")
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	m, _ := json.Marshal(map[string]any{"name": "llm", "version": "0.1.0", "yolop": map[string]any{
		"protocol_version": "1.0",
		"capabilityServer": map[string]any{"command": "python3", "args": []string{"-u", script},
			"env": map[string]string{"PROVIDER_MODELS": "scripted-1,scripted-2"}},
		"provider": map[string]any{"name": "scripted", "models": []any{
			map[string]any{"id": "scripted-1", "context_window": 128000},
			map[string]any{"id": "scripted-2", "context_window": 8192},
		}},
		// The server is a script outside its package: its sandbox says so.
		"sandbox": map[string]any{"fs": []map[string]string{{"path": "${workspace}", "access": "rw"}, {"path": script}}},
	}})
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// ext info shows a providers facet's models and windows from the manifest,
// and, while the extension runs in the live session, the base URL it
// announced.
func TestInfoShowsProvider(t *testing.T) {
	ctx := context.Background()
	dir := providerPackageDir(t)
	h, err := harness.Open(ctx, harness.Options{ConfigDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	in, err := h.Info(ctx, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	facet := "Provider scripted: models scripted-1 (128000-token window), scripted-2 (8192-token window)"
	if txt := in.Text(); !strings.Contains(txt, facet) || strings.Contains(txt, "provider: ") || in.Provider != nil {
		t.Fatalf("not running: want the facet and no endpoint:\n%s", txt)
	}

	s, _, err := h.OpenSession(ctx, harness.SessionOptions{}, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if errs, failed := s.StartInPlace(ctx, s.InPlace()); failed != 0 {
		t.Fatalf("StartInPlace = %v", errs)
	}
	in, err = h.Info(ctx, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	p := in.Provider
	if p == nil || p.Name != "scripted" || !strings.HasPrefix(p.BaseURL, "http://127.0.0.1:") || strings.Join(p.Models, ",") != "scripted-1,scripted-2" {
		t.Fatalf("running: Info.Provider = %+v", p)
	}
	line := "  provider: scripted at " + p.BaseURL + " (models scripted-1, scripted-2)\n"
	if txt := in.Text(); !strings.Contains(txt, line) || !strings.Contains(txt, facet) {
		t.Fatalf("running: Text lacks %q:\n%s", line, txt)
	}
	b, _ := json.Marshal(in)
	if !strings.Contains(string(b), `"provider":{"name":"scripted","base_url":"`+p.BaseURL+`","models":["scripted-1","scripted-2"]}`) {
		t.Fatalf("JSON lacks the provider endpoint: %s", b)
	}
}
