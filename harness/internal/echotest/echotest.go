// Package echotest builds core's example packages (echo, configured) for
// the harness's tests, and config directories with them installed and
// enabled, as `yolop ext install --yes` and `yolop ext enable` would
// leave them.
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

// Package builds the echo example's package — its plugin.json and its
// server in bin/ — into a fresh directory and returns it.
func Package(t testing.TB) (dir string) {
	t.Helper()
	return build(t, "echo", "yolop-extension-echo")
}

// Configured builds core/examples/configured's package (a config schema
// with a secret field) the same way.
func Configured(t testing.TB) (dir string) {
	t.Helper()
	return build(t, "configured", "yolop-extension-configured")
}

func build(t testing.TB, example, bin string) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is needed to build the %s server: %v", example, err)
	}
	_, here, _, _ := runtime.Caller(0)
	manifest, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "..", "..", "core", "examples", example, "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	pkg := t.TempDir()
	if err := os.WriteFile(filepath.Join(pkg, "plugin.json"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(pkg, "bin", bin)
	if b, err := exec.Command("go", "build", "-o", out, "yolop.dev/core/examples/"+example).CombinedOutput(); err != nil {
		t.Fatalf("building the %s server: %v\n%s", example, err, b)
	}
	return pkg
}

// Installed installs and enables the echo example through the harness's
// manager in a fresh config directory, and returns that directory.
func Installed(t testing.TB) (cfg string) {
	t.Helper()
	cfg = t.TempDir()
	ctx := context.Background()
	h, err := harness.Open(ctx, harness.Options{ConfigDir: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Manager().Install(ctx, manager.InstallRequest{Source: Package(t), Consent: Accept}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Manager().Enable(ctx, "echo"); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Accept is a consent that approves every proposal, as --yes does.
func Accept(context.Context, manager.Proposal) error { return nil }
