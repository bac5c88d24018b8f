package packaging

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// withCargoArtifacts writes a package whose plugin.json names the server
// and whose Cargo.toml pins a prebuilt binary, as `yolop ext pack` does.
func withCargoArtifacts(t *testing.T, sha, url string) string {
	t.Helper()
	d := pkg(t, map[string]any{"plugin.json": manifest(nil)})
	cargo := "[package]\nname = \"yolop-extension-x\"\nversion = \"0.1.0\"\n\n" +
		"[package.metadata.yolop.artifacts.x86_64-unknown-linux-gnu]\nurl = \"" + url + "\"\nsha256 = \"" + sha + "\"\n"
	if err := os.WriteFile(filepath.Join(d, "Cargo.toml"), []byte(cargo), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestCargoArtifactsJoinTheManifest(t *testing.T) {
	a, b := strings.Repeat("a", 64), strings.Repeat("b", 64)
	old, err := Load(withCargoArtifacts(t, a, "x-x86_64-unknown-linux-gnu.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	got := old.Yolop.Artifacts["x86_64-unknown-linux-gnu"]
	if got.SHA256 != a || got.URL != "x-x86_64-unknown-linux-gnu.tar.gz" {
		t.Fatalf("artifacts = %+v", old.Yolop.Artifacts)
	}
	if s := Summary(old); !strings.Contains(s, "Prebuilt binaries: x86_64-unknown-linux-gnu") {
		t.Fatalf("the consent summary does not list the pinned binary:\n%s", s)
	}
	next, err := Load(withCargoArtifacts(t, b, "x-x86_64-unknown-linux-gnu.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if ch := Diff(old, next); !ch.Widens() || !strings.Contains(ch.String(), "prebuilt binary for x86_64-unknown-linux-gnu changed") {
		t.Fatalf("a changed binary is not a widening:\n%s", ch)
	}
	for _, bad := range []struct{ sha, url string }{
		{"ABC", "ok.tar.gz"},
		{a, "http://evil.example/x.tar.gz"},
		{a, "file:///etc/passwd"},
		{a, ""},
	} {
		_, err := Load(withCargoArtifacts(t, bad.sha, bad.url))
		if !errors.Is(err, ErrInvalidManifest) || !strings.Contains(err.Error(), "package.metadata.yolop.artifacts.x86_64-unknown-linux-gnu") {
			t.Errorf("sha %q url %q: err = %v", bad.sha, bad.url, err)
		}
	}
}
