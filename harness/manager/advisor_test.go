package manager

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/harness/fetch"
	"yolop.dev/harness/settings"
	"yolop.dev/packaging"
	"yolop.dev/registry/cratesio"
)

// advisoryRegistry publishes yolop-extension-echo 0.1.0 (a manifest-only
// package) into a static index served on loopback, and returns the index
// directory, the registry and the server.
func advisoryRegistry(t *testing.T) (string, string, *httptest.Server) {
	t.Helper()
	src, index := t.TempDir(), filepath.Join(t.TempDir(), "index")
	files := map[string]string{
		"Cargo.toml":  "[package]\nname = \"yolop-extension-echo\"\nversion = \"0.1.0\"\n",
		"plugin.json": `{"name":"echo","version":"0.1.0","yolop":{"protocol_version":"1.0","capabilityServer":{"command":"echo-server"},"tools":[{"name":"echo"}]}}`,
	}
	for n, body := range files {
		if err := os.WriteFile(filepath.Join(src, n), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := cratesio.WriteCrate(&buf, "yolop-extension-echo", "0.1.0", src); err != nil {
		t.Fatal(err)
	}
	crate := filepath.Join(t.TempDir(), "echo.crate")
	if err := os.WriteFile(crate, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := cratesio.Publish(context.Background(), index, crate, cratesio.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(cratesio.ServeIndex(index))
	t.Cleanup(srv.Close)
	return index, "sparse+" + srv.URL + "/", srv
}

func advisoryManager(cfg string) *Manager {
	crate := fetch.Crate{ConfigDir: cfg}
	return New(Options{
		Store:    packaging.NewStore(cfg),
		Settings: settings.New(cfg),
		Fetchers: map[packaging.SourceKind]fetch.Fetcher{packaging.SourceCrate: crate},
		Advisories: func(ctx context.Context, registry, name string) ([]cratesio.Advisory, error) {
			cl, err := crate.Client(ctx, registry)
			if err != nil {
				return nil, err
			}
			return cl.Advisories(ctx, name)
		},
	})
}

func writeSettings(t *testing.T, cfg, extra string) {
	t.Helper()
	body := "[[capabilities]]\nref = \"ext:echo\"\n\n[registry]\nretries = 0\n" + extra
	if err := os.WriteFile(filepath.Join(cfg, "settings.toml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func grantNames(m *Manager) ([]string, string) {
	gs, warns, _ := m.Grants(context.Background())
	var names []string
	for _, g := range gs {
		names = append(names, g.Name)
	}
	return names, strings.Join(warns, "\n")
}

// A critical advisory the registry publishes for the installed version
// keeps the extension from starting and shows as blocked in List, with
// the advisory's id and description; the user's [advisories] allow entry
// for that extension overrides it; an update to a version it affects is
// refused and changes nothing; a registry that cannot be reached warns and
// blocks nothing.
func TestCriticalAdvisoryBlocksStartAndUpdate(t *testing.T) {
	ctx := context.Background()
	index, reg, srv := advisoryRegistry(t)
	cfg := t.TempDir()
	m := advisoryManager(cfg)
	if _, err := m.Install(ctx, InstallRequest{Source: reg + "#yolop-extension-echo@=0.1.0", Consent: accept}); err != nil {
		t.Fatal(err)
	}
	writeSettings(t, cfg, "")
	if names, warns := grantNames(m); len(names) != 1 || names[0] != "echo" || strings.Contains(warns, "advisor") {
		t.Fatalf("before any advisory: grants %v, warnings %s", names, warns)
	}

	// A medium advisory warns and starts.
	if _, err := cratesio.WriteAdvisory(index, cratesio.Advisory{ID: "YOLOP-2026-0002", Crate: "yolop-extension-echo", Versions: "*", Severity: "medium", Description: "logs too much"}); err != nil {
		t.Fatal(err)
	}
	if names, warns := grantNames(m); len(names) != 1 || !strings.Contains(warns, "medium-severity advisory YOLOP-2026-0002") {
		t.Fatalf("medium advisory: grants %v, warnings %s", names, warns)
	}

	adv := cratesio.Advisory{ID: "YOLOP-2026-0001", Crate: "yolop-extension-echo", Versions: "<0.2.0", Severity: "critical", Description: "sends ~/.ssh away", URL: "https://example.com/YOLOP-2026-0001"}
	if _, err := cratesio.WriteAdvisory(index, adv); err != nil {
		t.Fatal(err)
	}
	names, warns := grantNames(m)
	if len(names) != 0 {
		t.Fatalf("echo started despite a critical advisory: %v", names)
	}
	if _, _, kept := m.Grants(ctx); len(kept) != 1 || kept[0].Name != "echo" || kept[0].State != "blocked" || !strings.Contains(kept[0].Reason, "critical advisory YOLOP-2026-0001") {
		t.Fatalf("kept off = %+v, want echo blocked by YOLOP-2026-0001", kept)
	}
	for _, want := range []string{"not starting enabled extension echo", "critical advisory YOLOP-2026-0001", "sends ~/.ssh away", `allow = ["echo:YOLOP-2026-0001"]`} {
		if !strings.Contains(warns, want) {
			t.Errorf("warnings lack %q:\n%s", want, warns)
		}
	}
	infos, err := m.List(ctx)
	if err != nil || len(infos) != 1 {
		t.Fatal(infos, err)
	}
	if in := infos[0]; in.Health != "blocked: critical advisory YOLOP-2026-0001" || in.Advisories == nil || len(in.Advisories.Blocking) != 1 ||
		in.Advisories.Blocking[0] != adv || len(in.Advisories.Warnings) != 1 || !strings.Contains(strings.Join(in.Warnings, "\n"), "sends ~/.ssh away (https://example.com/YOLOP-2026-0001)") {
		t.Fatalf("list: %+v %+v", in, in.Advisories)
	}

	// An update to a version the advisory affects is refused; the lock
	// stays as it was.
	before, _ := os.ReadFile(filepath.Join(cfg, "extensions.lock"))
	if _, err := m.Update(ctx, "echo", accept); err == nil || !strings.Contains(err.Error(), "is not installed: critical advisory YOLOP-2026-0001") {
		t.Fatalf("update: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(cfg, "extensions.lock")); !bytes.Equal(before, after) {
		t.Fatal("a refused update changed extensions.lock")
	}

	// The user allows it for echo: it starts, with the advisory still said.
	writeSettings(t, cfg, "[advisories]\nallow = [\"echo:YOLOP-2026-0001\"]\n")
	if names, warns := grantNames(m); len(names) != 1 || !strings.Contains(warns, "despite critical advisory YOLOP-2026-0001") {
		t.Fatalf("allowed: grants %v, warnings %s", names, warns)
	}
	// An allow entry for another extension does not count.
	writeSettings(t, cfg, "[advisories]\nallow = [\"other:YOLOP-2026-0001\"]\n")
	if names, _ := grantNames(m); len(names) != 0 {
		t.Fatalf("allowed for another extension, echo started: %v", names)
	}

	// The registry is gone: the copy cached at the last fetch still
	// blocks, with a warning that the advisories were not re-checked.
	srv.Close()
	writeSettings(t, cfg, "")
	names, warns = grantNames(m)
	if len(names) != 0 || !strings.Contains(warns, "critical advisory YOLOP-2026-0001") {
		t.Fatalf("unreachable registry with a cached advisory: grants %v, warnings %s", names, warns)
	}
	if infos, err := m.List(ctx); err != nil || infos[0].Advisories == nil || !strings.Contains(infos[0].Advisories.Unchecked, "using the copy cached") {
		t.Fatalf("list offline: %+v, %v", infos, err)
	}
	// Without a cached copy (a fresh config directory): a warning, never
	// a block.
	cfg2 := t.TempDir()
	if err := os.CopyFS(cfg2, os.DirFS(cfg)); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(cfg2, "cache")); err != nil {
		t.Fatal(err)
	}
	names, warns = grantNames(advisoryManager(cfg2))
	if len(names) != 1 || !strings.Contains(warns, "advisories not checked") {
		t.Fatalf("unreachable registry, nothing cached: grants %v, warnings %s", names, warns)
	}
}
