package harness_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/harness"
	"yolop.dev/harness/internal/echotest"
	"yolop.dev/packaging"
)

// Target takes a directory in place and a name as installed; an unknown
// name says how to check a directory instead.
func TestTarget(t *testing.T) {
	ctx := context.Background()
	h, err := harness.Open(ctx, harness.Options{ConfigDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	pkg := echotest.Package(t)
	m, g, err := h.Target(ctx, pkg)
	if err != nil || m.Name != "echo" || g.Name != "echo" {
		t.Fatalf("Target(%s) = %v, %v, %v", pkg, m, g.Name, err)
	}
	_, _, err = h.Target(ctx, "nosuch")
	if !errors.Is(err, packaging.ErrNotInstalled) || !strings.Contains(err.Error(), "./nosuch") {
		t.Fatalf("Target(nosuch) = %v", err)
	}
}

// EmbeddedGrant runs an embedded manifest's server as the given command,
// from a directory its cleanup removes.
func TestEmbeddedGrant(t *testing.T) {
	manifest, err := os.ReadFile(filepath.Join(echotest.Package(t), "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	g, cleanup, err := harness.EmbeddedGrant(manifest, "/bin/self", "serve-echo")
	if err != nil {
		t.Fatal(err)
	}
	if g.Name != "echo" || g.Server.Command != "/bin/self" || len(g.Server.Args) != 1 || g.Server.Args[0] != "serve-echo" {
		t.Fatalf("grant = %+v", g)
	}
	if _, _, err := harness.EmbeddedGrant([]byte("{"), "x"); err == nil {
		t.Fatal("a malformed embedded manifest was accepted")
	}
	cleanup()
}

// CacheDir is under the config directory $YOLOP_CONFIG_DIR names.
func TestCacheDir(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("YOLOP_CONFIG_DIR", cfg)
	if got, want := harness.CacheDir("wasm"), filepath.Join(cfg, "cache", "wasm"); got != want {
		t.Fatalf("CacheDir(wasm) = %q, want %q", got, want)
	}
}
