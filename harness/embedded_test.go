package harness_test

import (
	"os"
	"path/filepath"
	"testing"

	"yolop.dev/harness"
	"yolop.dev/harness/internal/echotest"
)

// EmbeddedGrant with no command runs the server as this binary.
func TestEmbeddedGrantServedBySelf(t *testing.T) {
	manifest, err := os.ReadFile(filepath.Join(echotest.Package(t), "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	g, cleanup, err := harness.EmbeddedGrant(manifest, "", "serve-echo")
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if g.Server.Command != exe || len(g.Server.Args) != 1 || g.Server.Args[0] != "serve-echo" {
		t.Fatalf("grant server = %+v, want %s serve-echo", g.Server, exe)
	}
}
