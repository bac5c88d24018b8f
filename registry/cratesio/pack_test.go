package cratesio

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// fakeGoScript is the go command fakeGo installs: it logs its
// invocation and writes a small stand-in server where -o says.
const fakeGoScript = `#!/bin/sh
printf 'dir=%s GOOS=%s GOARCH=%s CGO_ENABLED=%s %s\n' "$(pwd -P)" "$GOOS" "$GOARCH" "$CGO_ENABLED" "$*" >> "$FAKE_GO_LOG"
if [ "$FAKE_GO_FAIL" = true ]; then
	echo 'server/main.go:3:1: syntax error: non-declaration statement outside function body' >&2
	exit 1
fi
[ "$1" = build ] || { echo "fake go: unexpected arguments $*" >&2; exit 2; }
out=
while [ $# -gt 0 ]; do
	[ "$1" = -o ] && out=$2
	shift
done
[ -n "$out" ] || { echo 'fake go: no -o' >&2; exit 2; }
mkdir -p "$(dirname "$out")" && printf 'server for %s/%s\n' "$GOOS" "$GOARCH" > "$out" && chmod 755 "$out"
`

// fakeGo puts a shell script on a PATH of its own as the go command and
// returns the file it logs each invocation to, one line per build:
//
//	dir=<dir> GOOS=<goos> GOARCH=<goarch> CGO_ENABLED=<v> <args>
//
// "go build ... -o <file> ..." writes a small stand-in server to <file>,
// so packing runs no compiler (a real build, gzip'd under -race, takes
// seconds); with fail set it exits 1 instead, as a failed build would.
// TestRegistryEndToEnd in cmd/yolop packs a real Go server with the real
// go command, twice for identical bytes, and runs it.
func fakeGo(t *testing.T, fail bool) (log string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake go command is a shell script")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go"), []byte(fakeGoScript), 0o755); err != nil {
		t.Fatal(err)
	}
	log = filepath.Join(t.TempDir(), "go.log")
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_GO_LOG", log)
	t.Setenv("FAKE_GO_FAIL", strconv.FormatBool(fail))
	return log
}

// goLog reads fakeGo's log, one build per line, with dir= made relative
// to root ("." for the package directory itself) and the -o file cut to
// its base name.
func goLog(t *testing.T, log, root string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("the go command was not run: %v", err)
	}
	root, _ = filepath.EvalSymlinks(root)
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		dir, rest, _ := strings.Cut(strings.TrimPrefix(l, "dir="), " ")
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			rel = dir
		}
		f := strings.Fields(rest)
		if i := slices.Index(f, "-o"); i >= 0 && i+1 < len(f) {
			f[i+1] = filepath.Base(f[i+1])
		}
		out = append(out, "dir="+filepath.ToSlash(rel)+" "+strings.Join(f, " "))
	}
	return out
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
// conventional server/ main package gets it built for the host with the
// documented flags, a deterministic artifact archive (one file, fixed
// mtime, owner 0, mode 0755), the archive's name and digest in the
// crate's Cargo.toml, and no stale bin/ binary in the crate.
func TestPackGoServerInServerDir(t *testing.T) {
	log := fakeGo(t, false)
	pkg := t.TempDir()
	writeTree(t, pkg, map[string]string{
		"plugin.json":              echoManifest,
		"go.mod":                   "module example.com/srv\n\ngo 1.26\n",
		"server/main.go":           "package main\n\nfunc main() {}\n",
		"bin/yolop-extension-echo": "stale local build",
	})
	out := t.TempDir()
	var progress strings.Builder
	res, err := Pack(context.Background(), pkg, PackOptions{OutDir: out, Log: &progress})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"dir=. GOOS=" + runtime.GOOS + " GOARCH=" + runtime.GOARCH + " CGO_ENABLED=0 build -trimpath -buildvcs=false -o yolop-extension-echo ./server"}
	if runtime.GOOS == "windows" {
		want[0] = strings.Replace(want[0], "-o yolop-extension-echo", "-o yolop-extension-echo.exe", 1)
	}
	if diff := cmp.Diff(want, goLog(t, log, pkg)); diff != "" {
		t.Errorf("go invocations (-want +got):\n%s", diff)
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
	if !strings.Contains(progress.String(), "building yolop-extension-echo for "+triple) {
		t.Errorf("progress = %q", progress.String())
	}
	// The package directory itself is left as it was.
	if b, err := os.ReadFile(filepath.Join(pkg, "bin", "yolop-extension-echo")); err != nil || string(b) != "stale local build" {
		t.Errorf("pack changed the package's bin/: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(pkg, "Cargo.toml")); err == nil {
		t.Error("pack wrote a Cargo.toml into the package directory")
	}
	// The same input gives the same bytes.
	again := t.TempDir()
	if _, err := Pack(context.Background(), pkg, PackOptions{OutDir: again}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Base(crate), filepath.Base(art)} {
		if sha256Of(t, filepath.Join(out, f)) != sha256Of(t, filepath.Join(again, f)) {
			t.Errorf("packing twice gave different %s", f)
		}
	}
}

// TestPackBuildsEachTarget: --targets builds once per target with its
// GOOS/GOARCH (a .exe inside the Windows archive, a -musl triple kept as
// given), pins every archive, and --go-main picks the main package: a
// directory is made absolute, a package path is passed as it is.
func TestPackBuildsEachTarget(t *testing.T) {
	log := fakeGo(t, false)
	pkg := t.TempDir()
	writeTree(t, pkg, map[string]string{"plugin.json": echoManifest, "cmd/srv/main.go": "package main\n\nfunc main() {}\n"})
	out := t.TempDir()
	res, err := Pack(context.Background(), pkg, PackOptions{OutDir: out, Targets: "linux/arm64, x86_64-pc-windows-msvc,x86_64-unknown-linux-musl", GoMain: "./cmd/srv"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"dir=. GOOS=linux GOARCH=arm64 CGO_ENABLED=0 build -trimpath -buildvcs=false -o yolop-extension-echo ./cmd/srv",
		"dir=. GOOS=windows GOARCH=amd64 CGO_ENABLED=0 build -trimpath -buildvcs=false -o yolop-extension-echo.exe ./cmd/srv",
		"dir=. GOOS=linux GOARCH=amd64 CGO_ENABLED=0 build -trimpath -buildvcs=false -o yolop-extension-echo ./cmd/srv",
	}
	if diff := cmp.Diff(want, goLog(t, log, pkg)); diff != "" {
		t.Errorf("go invocations (-want +got):\n%s", diff)
	}
	var targets []string
	for _, a := range res.Artifacts {
		targets = append(targets, a.Target)
	}
	if diff := cmp.Diff([]string{"aarch64-unknown-linux-gnu", "x86_64-pc-windows-msvc", "x86_64-unknown-linux-musl"}, targets); diff != "" {
		t.Errorf("artifact targets (-want +got):\n%s", diff)
	}
	if _, ok := tarEntries(t, filepath.Join(out, "echo-x86_64-pc-windows-msvc.tar.gz"))["yolop-extension-echo.exe"]; !ok {
		t.Error("the Windows archive holds no yolop-extension-echo.exe")
	}
	m := readCrateMeta(t, res.File)
	for _, a := range res.Artifacts {
		if got := m.Artifacts[a.Target]; got.URL != filepath.Base(a.File) || got.SHA256 != a.SHA256 {
			t.Errorf("crate metadata for %s = %+v, want %s %s", a.Target, got, filepath.Base(a.File), a.SHA256)
		}
	}

	// A --go-main directory is resolved from the current directory.
	os.WriteFile(log, nil, 0o644)
	t.Chdir(pkg)
	if _, err := Pack(context.Background(), pkg, PackOptions{OutDir: out, Targets: "linux/amd64", GoMain: "cmd/srv"}); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	abs := filepath.Join(wd, "cmd", "srv")
	if got := goLog(t, log, pkg); len(got) != 1 || !strings.HasSuffix(got[0], " "+abs) {
		t.Errorf("go invocations %q, want the main package as %s", got, abs)
	}
}

// TestPackReportsAFailedBuild: a failing go build names the package, the
// platform and the compiler's output, and no crate is written.
func TestPackReportsAFailedBuild(t *testing.T) {
	fakeGo(t, true)
	pkg := t.TempDir()
	writeTree(t, pkg, map[string]string{"plugin.json": echoManifest, "main.go": "package main\n"})
	out := t.TempDir()
	_, err := Pack(context.Background(), pkg, PackOptions{OutDir: out, Targets: "linux/amd64"})
	if err == nil {
		t.Fatal("pack with a failing build succeeded")
	}
	mustContain(t, "build error", err.Error(), "pack echo: go build . for linux/amd64 failed", "syntax error")
	if _, err := os.Stat(filepath.Join(out, "yolop-extension-echo-0.1.0.crate")); err == nil {
		t.Error("a failed build still wrote the crate")
	}
}

// TestPackNeedsTheGoCommand: without go on PATH the error says to install
// it or pass --targets none.
func TestPackNeedsTheGoCommand(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	pkg := t.TempDir()
	writeTree(t, pkg, map[string]string{"plugin.json": echoManifest, "main.go": "package main\n"})
	_, err := Pack(context.Background(), pkg, PackOptions{OutDir: t.TempDir()})
	if err == nil {
		t.Fatal("pack without the go command succeeded")
	}
	mustContain(t, "error", err.Error(), "go command on PATH", "--targets none")
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
