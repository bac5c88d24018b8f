package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/registry/cratesio"
)

// TestUpdateCooldownThroughTheBinary: a crate installed from a static
// index served on loopback gets a new version; `ext update` leaves it
// waiting and says until when, `ext info` shows it waiting, and
// `ext update --now` installs it at once and says so.
func TestUpdateCooldownThroughTheBinary(t *testing.T) {
	t.Parallel()
	cfg, work := filepath.Join(t.TempDir(), "config"), t.TempDir()
	pkg := filepath.Join(work, "pkg")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile("demo/plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(work, "index")
	publish := func(version string) {
		t.Helper()
		b := strings.Replace(string(manifest), `"version": "0.1.0"`, `"version": "`+version+`"`, 1)
		if !strings.Contains(b, version) {
			t.Fatalf("demo/plugin.json has no version 0.1.0 to replace:\n%s", manifest)
		}
		if err := os.WriteFile(filepath.Join(pkg, "plugin.json"), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
		must(t, cfg, work, "ext", "pack", pkg, "-o", "out")
		must(t, cfg, work, "registry", "publish", filepath.Join("out", "yolop-extension-echo-"+version+".crate"), "--index", index)
	}
	publish("0.1.0")
	srv := httptest.NewServer(cratesio.ServeIndex(index))
	t.Cleanup(srv.Close)
	out := must(t, cfg, work, "ext", "install", "echo", "--registry", "sparse+"+srv.URL+"/", "--yes")
	mustContain(t, "ext install", out, "installed echo 0.1.0")

	publish("0.2.0")
	out = must(t, cfg, work, "ext", "update", "echo", "--yes")
	mustContain(t, "ext update", out, "echo stays at 0.1.0", "note: update 0.2.0 waits until ", " UTC (cooldown 48h)")
	out = must(t, cfg, work, "ext", "info", "echo")
	mustContain(t, "ext info", out, "echo 0.1.0", "cooldown: update 0.2.0 waits until ", " UTC (cooldown 48h)")

	out = must(t, cfg, work, "ext", "update", "echo", "--now", "--yes")
	mustContain(t, "ext update --now", out, "installing yolop-extension-echo 0.2.0 without the cooldown (--now", "updated echo to 0.2.0")
	out = must(t, cfg, work, "ext", "info", "echo")
	if mustContain(t, "ext info after --now", out, "echo 0.2.0"); strings.Contains(out, "cooldown:") {
		t.Fatalf("ext info still shows an update waiting:\n%s", out)
	}
}
