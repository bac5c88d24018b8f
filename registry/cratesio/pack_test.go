package cratesio

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"yolop.dev/packaging"
)

// echoManifest is a valid plugin.json for extension echo whose server
// runs as the bare command yolop-extension-echo.
const echoManifest = `{
  "name": "echo",
  "version": "0.1.0",
  "description": "Echo for pack tests.",
  "yolop": {
    "protocol_version": "1.0",
    "capabilityServer": { "command": "yolop-extension-echo", "args": [] },
    "tools": [{ "name": "echo", "description": "Return the text." }]
  }
}
`

// needGo skips (or, in CI, fails) a test that runs go build.
func needGo(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("needs the go command") // .ci/run installs it: in CI a skip would hide a broken install step
		}
		t.Skip("needs the go command")
	}
}

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

// readCrateMeta is parseCrateMeta over the .crate file at p.
func readCrateMeta(t *testing.T, p string) *crateMeta {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := parseCrateMeta(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func sha256Of(t *testing.T, p string) string {
	t.Helper()
	s, err := sha256File(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPackGoServerInServerDir: a package whose Go server is the
// conventional server/ main package gets a deterministic artifact archive
// (one file, fixed mtime, owner 0, mode 0755), the archive's name and
// digest in the crate's Cargo.toml, and no stale bin/ binary in the crate.
func TestPackGoServerInServerDir(t *testing.T) {
	needGo(t)
	pkg := t.TempDir()
	writeTree(t, pkg, map[string]string{
		"plugin.json":              echoManifest,
		"go.mod":                   "module example.com/srv\n\ngo 1.26\n",
		"server/main.go":           "package main\n\nfunc main() {}\n",
		"bin/yolop-extension-echo": "stale local build",
	})
	out := t.TempDir()
	var log strings.Builder
	res, err := Pack(context.Background(), pkg, PackOptions{OutDir: out, Log: &log})
	if err != nil {
		t.Fatal(err)
	}

	triple := HostTargets()[0]
	art := filepath.Join(out, "echo-"+triple+".tar.gz")
	ents := tarEntries(t, art)
	h := ents["yolop-extension-echo"]
	if len(ents) != 1 || h == nil || h.Mode != 0o755 || h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(crateMTime) {
		t.Fatalf("artifact entries %v", ents)
	}
	crate := filepath.Join(out, "yolop-extension-echo-0.1.0.crate")
	for name := range tarEntries(t, crate) {
		if strings.Contains(name, "/bin/") {
			t.Fatalf("the crate carries the local build %s", name)
		}
	}
	m := readCrateMeta(t, crate)
	if got := m.Artifacts[triple]; got.URL != filepath.Base(art) || got.SHA256 != sha256Of(t, art) {
		t.Fatalf("crate metadata for %s = %+v", triple, got)
	}
	// The result names what was written, and the log one line per build.
	if res.Crate != "yolop-extension-echo" || res.Version != "0.1.0" || res.File != crate || res.SHA256 != sha256Of(t, crate) ||
		len(res.Artifacts) != 1 || res.Artifacts[0] != (PackedArtifact{Target: triple, File: art, SHA256: sha256Of(t, art)}) {
		t.Fatalf("PackResult = %+v", res)
	}
	if !strings.Contains(log.String(), "building yolop-extension-echo for "+triple) {
		t.Errorf("log = %q", log.String())
	}
	// The package directory itself is left as it was.
	if b, err := os.ReadFile(filepath.Join(pkg, "bin", "yolop-extension-echo")); err != nil || string(b) != "stale local build" {
		t.Errorf("pack changed the package's bin/: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(pkg, "Cargo.toml")); err == nil {
		t.Error("pack wrote a Cargo.toml into the package directory")
	}
}

func TestWriteCargoTomlMergesAndChecks(t *testing.T) {
	m := &packaging.Manifest{Name: "echo", Version: "0.1.0", Description: "d"}
	arts := map[string]artifactEntry{"x86_64-unknown-linux-gnu": {URL: "echo-x86_64-unknown-linux-gnu.tar.gz", SHA256: strings.Repeat("a", 64)}}

	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"Cargo.toml": "[package]\nname = \"yolop-extension-echo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nserde = \"1\"\n"})
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
	meta, err := ParseArtifactMetadata(b)
	if err != nil || meta.Yolop["x86_64-unknown-linux-gnu"].SHA256 != strings.Repeat("a", 64) {
		t.Fatalf("artifacts not recorded (%v):\n%s", err, b)
	}

	for _, bad := range []string{
		"[package]\nname = \"echo-server\"\n",
		"[package]\nname = \"yolop-extension-echo\"\nversion = \"0.2.0\"\n",
	} {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"Cargo.toml": bad})
		if err := writeCargoToml(dir, "yolop-extension-echo", m, arts); err == nil {
			t.Errorf("accepted Cargo.toml %q", bad)
		}
	}
}

// TestWriteCargoTomlGenerates: without a Cargo.toml, a minimal one is
// generated with the crate's name, version, description and keyword.
func TestWriteCargoTomlGenerates(t *testing.T) {
	m := &packaging.Manifest{Name: "echo", Version: "0.1.0", Description: "d"}
	arts := map[string]artifactEntry{"aarch64-apple-darwin": {URL: "echo-aarch64-apple-darwin.tar.gz", SHA256: strings.Repeat("b", 64)}}
	dir := t.TempDir()
	if err := writeCargoToml(dir, "yolop-extension-echo", m, arts); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "Cargo.toml"))
	var doc struct {
		Package struct {
			Name, Version, Description string
			Keywords                   []string
		}
	}
	if err := toml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	p := doc.Package
	if p.Name != "yolop-extension-echo" || p.Version != "0.1.0" || p.Description != "d" || len(p.Keywords) != 1 || p.Keywords[0] != "yolop-extension" {
		t.Fatalf("generated Cargo.toml:\n%s", b)
	}
	meta, err := ParseArtifactMetadata(b)
	if err != nil || meta.Yolop["aarch64-apple-darwin"].URL != "echo-aarch64-apple-darwin.tar.gz" {
		t.Fatalf("artifacts not recorded (%v):\n%s", err, b)
	}
}

func TestParseTargets(t *testing.T) {
	ts, err := parseTargets("linux/amd64, aarch64-apple-darwin,x86_64-unknown-linux-musl,linux/amd64")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range ts {
		got = append(got, g.goos+"/"+g.goarch+"="+g.triple)
	}
	want := "linux/amd64=x86_64-unknown-linux-gnu darwin/arm64=aarch64-apple-darwin linux/amd64=x86_64-unknown-linux-musl"
	if strings.Join(got, " ") != want {
		t.Fatalf("parseTargets = %v, want %s", got, want)
	}
	for _, bad := range []string{"plan9/mips", "not-a-triple"} {
		if _, err := parseTargets(bad); err == nil {
			t.Errorf("parseTargets(%q) accepted it", bad)
		}
	}
}

func TestPackRefusesTargetsWithoutAGoServer(t *testing.T) {
	pkg := t.TempDir()
	writeTree(t, pkg, map[string]string{"plugin.json": echoManifest})
	out := t.TempDir()
	_, err := Pack(context.Background(), pkg, PackOptions{OutDir: out, Targets: "linux/amd64"})
	if err == nil || !strings.Contains(err.Error(), "--go-main") {
		t.Fatalf("pack --targets without a Go server: %v", err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("a refused pack wrote %v", ents)
	}
}

// TestPackWithoutAServerPacksTheTreeAsItIs: no Go server means no
// artifacts and no Cargo.toml added; the crate holds the package's files.
func TestPackWithoutAServerPacksTheTreeAsItIs(t *testing.T) {
	pkg := t.TempDir()
	writeTree(t, pkg, map[string]string{"plugin.json": echoManifest, "README.md": "r", ".git/HEAD": "ref"})
	out := filepath.Join(t.TempDir(), "new", "dir")
	res, err := Pack(context.Background(), pkg, PackOptions{OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Artifacts) != 0 {
		t.Errorf("artifacts %+v without a Go server", res.Artifacts)
	}
	names := slices.Sorted(maps.Keys(tarEntries(t, res.File)))
	if strings.Join(names, " ") != "yolop-extension-echo-0.1.0/README.md yolop-extension-echo-0.1.0/plugin.json" {
		t.Errorf("crate entries %v", names)
	}
}
