// Package echotest sets up, for the harness's tests, a config directory
// with the echo example (core/examples/echo) installed and enabled, as
// `yolop ext install --yes` and `yolop ext enable` would leave it.
package echotest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"yolop.dev/harness"
	"yolop.dev/harness/manager"
)

// Installed builds the echo server, installs and enables the echo example
// through the harness's manager in a fresh config directory, and returns
// that directory.
func Installed(t testing.TB) (cfg string) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is needed to build the echo server: %v", err)
	}
	_, here, _, _ := runtime.Caller(0)
	manifest, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "..", "..", "core", "examples", "echo", "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	pkg := t.TempDir()
	if err := os.WriteFile(filepath.Join(pkg, "plugin.json"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(pkg, "bin", "yolop-extension-echo")
	if b, err := exec.Command("go", "build", "-o", out, "yolop.dev/core/examples/echo").CombinedOutput(); err != nil {
		t.Fatalf("building the echo server: %v\n%s", err, b)
	}
	cfg = t.TempDir()
	ctx := context.Background()
	h, err := harness.Open(ctx, harness.Options{ConfigDir: cfg})
	if err != nil {
		t.Fatal(err)
	}
	accept := func(context.Context, manager.Proposal) error { return nil }
	if _, err := h.Manager().Install(ctx, manager.InstallRequest{Source: pkg, Consent: accept}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Manager().Enable(ctx, "echo"); err != nil {
		t.Fatal(err)
	}
	return cfg
}
