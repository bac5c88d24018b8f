package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"yolop.dev/registry/cratesio"
)

// FuzzParseCrateMeta feeds publish's crate reader arbitrary bytes: it must
// never panic, and what it accepts names a valid crate and version.
func FuzzParseCrateMeta(f *testing.F) {
	seeds := []struct {
		name, version string
		files         map[string]string
	}{
		{"yolop-extension-echo", "0.1.0", map[string]string{"plugin.json": `{"name":"echo","yolop":{"artifacts":{"x86_64-unknown-linux-gnu":{"url":"https://example.org/a.tgz","sha256":"00"}}}}`}},
		{"yolop-extension-k8s-2", "1.2.3-rc.1+build", map[string]string{
			"Cargo.toml":  "[package]\nname = \"yolop-extension-k8s-2\"\nversion = \"1.2.3-rc.1+build\"\n[package.metadata.yolop.artifacts.aarch64-apple-darwin]\nurl = \"k8s.tar.gz\"\nsha256 = \"ab\"\n",
			"src/main.rs": "fn main() {}\n",
		}},
		{"a", "0.0.0", map[string]string{"Cargo.toml": "not toml = = ="}},
		{"b", "1.0.0", map[string]string{"plugin.json": "{"}},
	}
	for _, s := range seeds {
		dir := f.TempDir()
		for p, body := range s.files {
			writeFile(f, dir, p, body)
		}
		var buf bytes.Buffer
		if err := cratesio.WriteCrate(&buf, s.name, s.version, dir); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Add([]byte{})
	f.Add([]byte("\x1f\x8b\x08\x00garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseCrateMeta(bytes.NewReader(data))
		if err != nil {
			return
		}
		if cratesio.ValidateName(m.Name) != nil || !semverRE.MatchString(m.Version) {
			t.Fatalf("accepted crate %q %q", m.Name, m.Version)
		}
	})
}

func TestParseCrateMetaReadsBothShapes(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "Cargo.toml", "[package]\nname = \"yolop-extension-k8s-2\"\nversion = \"1.2.3\"\n[package.metadata.yolop.artifacts.aarch64-apple-darwin]\nurl = \"k8s.tar.gz\"\nsha256 = \"ab\"\n")
	writeFile(t, dir, "plugin.json", `{"yolop":{"artifacts":{"aarch64-apple-darwin":{"url":"https://x/ignored","sha256":"cd"},"x86_64-pc-windows-msvc":{"url":"https://x/w.zip","sha256":"ef"}}}}`)
	var buf bytes.Buffer
	if err := cratesio.WriteCrate(&buf, "yolop-extension-k8s-2", "1.2.3", dir); err != nil {
		t.Fatal(err)
	}
	m, err := parseCrateMeta(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "yolop-extension-k8s-2" || m.Version != "1.2.3" {
		t.Fatalf("identity %s %s", m.Name, m.Version)
	}
	if got := m.Artifacts["aarch64-apple-darwin"]; got.URL != "k8s.tar.gz" || got.SHA256 != "ab" {
		t.Fatalf("Cargo.toml entry must win: %+v", got)
	}
	if got := m.Artifacts["x86_64-pc-windows-msvc"]; got.URL != "https://x/w.zip" {
		t.Fatalf("plugin.json fills other targets: %+v", got)
	}
}

func writeFile(t testing.TB, dir, rel, body string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
