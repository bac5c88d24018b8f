package main

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"yolop.dev/packaging"
	"yolop.dev/registry/cratesio"
)

// tarEntries lists a .tar.gz: name → header.
func tarEntries(t *testing.T, p string) map[string]*tar.Header {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	m := map[string]*tar.Header{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return m
		}
		if err != nil {
			t.Fatal(err)
		}
		m[h.Name] = h
	}
}

// TestPackGoServerInServerDir: a package whose Go server is the
// conventional server/ main package gets a deterministic artifact archive
// (one file, fixed mtime, owner 0, mode 0755), the archive's name and
// digest in the crate's Cargo.toml, and no stale bin/ binary in the crate.
func TestPackGoServerInServerDir(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("needs the go command") // .ci/run installs it: in CI a skip would hide a broken install step
		}
		t.Skip("needs the go command")
	}
	pkg := t.TempDir()
	b, _ := os.ReadFile("demo/plugin.json")
	writeFile(t, pkg, "plugin.json", string(b))
	writeFile(t, pkg, "go.mod", "module example.com/srv\n\ngo 1.26\n")
	writeFile(t, pkg, "server/main.go", "package main\n\nfunc main() {}\n")
	writeFile(t, pkg, "bin/yolop-extension-echo", "stale local build")
	out := t.TempDir()
	mustRun(t, "", "ext", "pack", pkg, "-o", out)

	triple := cratesio.HostTargets()[0]
	art := filepath.Join(out, "echo-"+triple+".tar.gz")
	ents := tarEntries(t, art)
	h := ents["yolop-extension-echo"]
	if len(ents) != 1 || h == nil || h.Mode != 0o755 || h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(packMTime) {
		t.Fatalf("artifact entries %v", ents)
	}
	crate := filepath.Join(out, "yolop-extension-echo-0.1.0.crate")
	for name := range tarEntries(t, crate) {
		if strings.Contains(name, "/bin/") {
			t.Fatalf("the crate carries the local build %s", name)
		}
	}
	m, err := readCrateMeta(crate)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Artifacts[triple]; got.URL != filepath.Base(art) || got.SHA256 != sha256Of(t, art) {
		t.Fatalf("crate metadata for %s = %+v", triple, got)
	}
}

func TestWriteCargoTomlMergesAndChecks(t *testing.T) {
	m := &packaging.Manifest{Name: "echo", Version: "0.1.0", Description: "d"}
	arts := map[string]artifactEntry{"x86_64-unknown-linux-gnu": {URL: "echo-x86_64-unknown-linux-gnu.tar.gz", SHA256: strings.Repeat("a", 64)}}

	dir := t.TempDir()
	writeFile(t, dir, "Cargo.toml", "[package]\nname = \"yolop-extension-echo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nserde = \"1\"\n")
	if err := writeCargoToml(dir, "yolop-extension-echo", m, arts); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "Cargo.toml"))
	var doc map[string]any
	if err := toml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	pkg := doc["package"].(map[string]any)
	if pkg["edition"] != "2021" || doc["dependencies"].(map[string]any)["serde"] != "1" {
		t.Fatalf("existing keys lost:\n%s", b)
	}
	meta, err := cratesio.ParseArtifactMetadata(b)
	if err != nil || meta.Yolop["x86_64-unknown-linux-gnu"].SHA256 != strings.Repeat("a", 64) {
		t.Fatalf("artifacts not recorded (%v):\n%s", err, b)
	}

	for _, bad := range []string{
		"[package]\nname = \"echo-server\"\n",
		"[package]\nname = \"yolop-extension-echo\"\nversion = \"0.2.0\"\n",
	} {
		dir := t.TempDir()
		writeFile(t, dir, "Cargo.toml", bad)
		if err := writeCargoToml(dir, "yolop-extension-echo", m, arts); err == nil {
			t.Errorf("accepted Cargo.toml %q", bad)
		}
	}
}
