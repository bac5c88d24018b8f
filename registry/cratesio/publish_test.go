package cratesio

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/gzip"
)

func listCrate(t *testing.T, b []byte) []string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var out []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h.Name+" "+string(h.Typeflag)+" "+itoa(h.Mode)+" "+h.ModTime.UTC().Format(time.RFC3339)+" "+itoa(int64(h.Uid))+h.Uname)
	}
}

func TestWriteCrateDeterministic(t *testing.T) {
	src := t.TempDir()
	writeTree(t, src, map[string]string{
		"Cargo.toml": "[package]\nname = \"foo\"\nversion = \"1.0.0\"\n", "src/lib.rs": "x",
		"b/z.txt": "z", "a.txt": "a", ".git/HEAD": "ref", "sub/.git": "gitdir: x",
	})
	os.Chmod(filepath.Join(src, "a.txt"), 0o700)
	os.Chmod(filepath.Join(src, "b/z.txt"), 0o600)
	if err := os.Symlink("a.txt", filepath.Join(src, "link.txt")); err != nil {
		t.Fatal(err)
	}
	var one, two bytes.Buffer
	if err := WriteCrate(&one, "foo", "1.0.0", src); err != nil {
		t.Fatal(err)
	}
	// Different mtimes must not change the bytes.
	later := time.Now().Add(time.Hour)
	filepath.Walk(src, func(p string, _ os.FileInfo, _ error) error { os.Chtimes(p, later, later); return nil })
	if err := WriteCrate(&two, "foo", "1.0.0", src); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(one.Bytes(), two.Bytes()) {
		t.Fatal("the same input gave different .crate bytes")
	}
	want := []string{
		"foo-1.0.0/Cargo.toml 0 420 2006-07-24T01:21:28Z 0",
		"foo-1.0.0/a.txt 0 493 2006-07-24T01:21:28Z 0",
		"foo-1.0.0/b/z.txt 0 420 2006-07-24T01:21:28Z 0",
		"foo-1.0.0/link.txt 0 493 2006-07-24T01:21:28Z 0",
		"foo-1.0.0/src/lib.rs 0 420 2006-07-24T01:21:28Z 0",
	}
	if diff := cmp.Diff(want, listCrate(t, one.Bytes())); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	// It must round-trip through the installer's extractor.
	out := filepath.Join(t.TempDir(), "x")
	if err := Unpack(bytes.NewReader(one.Bytes()), int64(one.Len()), out, UnpackOptions{Prefix: "foo-1.0.0/"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "link.txt")); string(b) != "a" {
		t.Errorf("symlink content = %q, want the target's", b)
	}
}

func TestWriteCrateRefuses(t *testing.T) {
	src := t.TempDir()
	writeTree(t, src, map[string]string{"a": "1"})
	if err := WriteCrate(io.Discard, "../x", "1.0.0", src); !errors.Is(err, ErrInvalidName) {
		t.Errorf("bad name: %v", err)
	}
	if err := WriteCrate(io.Discard, "x", "v1", src); err == nil {
		t.Error("bad version accepted")
	}
	writeTree(t, src, map[string]string{"nul.txt": "1"})
	if err := WriteCrate(io.Discard, "x", "1.0.0", src); err == nil || !strings.Contains(err.Error(), "nul.txt") {
		t.Errorf("unportable name: %v", err)
	}
}

func TestPublish(t *testing.T) {
	indexDir := t.TempDir()
	data := publishCrate(t, indexDir, "foo", "1.0.0", map[string]string{"Cargo.toml": "[package]\nname = \"foo\"\nversion = \"1.0.0\"\n"})
	cfg, _ := os.ReadFile(filepath.Join(indexDir, "config.json"))
	if !strings.Contains(string(cfg), `"dl": "crates/{crate}/{version}/download"`) {
		t.Errorf("config.json = %s", cfg)
	}
	idx, _ := os.ReadFile(filepath.Join(indexDir, "3/f/foo"))
	var e map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(idx), &e); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "foo", "vers": "1.0.0", "deps": []any{}, "cksum": sha(data), "features": map[string]any{}, "yanked": false, "v": float64(1)}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("index line (-want +got):\n%s", diff)
	}
	if b, _ := os.ReadFile(filepath.Join(indexDir, "crates/foo/1.0.0/download")); !bytes.Equal(b, data) {
		t.Error("crate not stored under the dl path")
	}
	// Re-publishing is refused and changes nothing.
	before := snapshot(t, indexDir)
	f := filepath.Join(t.TempDir(), "foo.crate")
	os.WriteFile(f, data, 0o644)
	if _, err := Publish(context.Background(), indexDir, f, PublishOptions{}); !errors.Is(err, ErrAlreadyPublished) {
		t.Errorf("re-publish: %v", err)
	}
	if _, err := Publish(context.Background(), indexDir, f, PublishOptions{Version: "2.0.0"}); err == nil {
		t.Error("a version that disagrees with the crate was accepted")
	}
	assertUnchanged(t, indexDir, before)
	// A hostile crate is refused before anything is written.
	evil := gz(t, rawTar(t, []tarEntry{file("bar-1.0.0/a", "1"), {hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: "bar-1.0.0/l", Linkname: "/"}}}))
	os.WriteFile(f, evil, 0o644)
	if _, err := Publish(context.Background(), indexDir, f, PublishOptions{}); !errors.Is(err, ErrUnsafeArchive) {
		t.Errorf("hostile crate: %v", err)
	}
	assertUnchanged(t, indexDir, before)
	// DLBase gives cargo an absolute dl.
	other := t.TempDir()
	os.WriteFile(f, data, 0o644)
	if _, err := Publish(context.Background(), other, f, PublishOptions{DLBase: "https://example.org/reg/"}); err != nil {
		t.Fatal(err)
	}
	cfg, _ = os.ReadFile(filepath.Join(other, "config.json"))
	if !strings.Contains(string(cfg), `"dl": "https://example.org/reg/crates/{crate}/{version}/download"`) {
		t.Errorf("config.json with DLBase = %s", cfg)
	}
}

func TestSplitNameVersion(t *testing.T) {
	for in, want := range map[string][2]string{
		"foo-1.0.0": {"foo", "1.0.0"}, "yolop-extension-echo-0.1.0-rc.1": {"yolop-extension-echo", "0.1.0-rc.1"},
		"a-1-2.0.0": {"a-1", "2.0.0"}, "foo_bar-1.2.3+build": {"foo_bar", "1.2.3+build"},
	} {
		n, v, ok := splitNameVersion(in)
		if !ok || n != want[0] || v != want[1] {
			t.Errorf("splitNameVersion(%q) = %q %q %v", in, n, v, ok)
		}
	}
	if _, _, ok := splitNameVersion("foo"); ok {
		t.Error("foo split")
	}
}

// semverRE is the SemVer 2.0 shape a published version must have: the
// fuzz oracle for parseCrateMeta, independent of the semver library.
var semverRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

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
		f.Add(buildCrate(f, s.name, s.version, s.files))
	}
	f.Add([]byte{})
	f.Add([]byte("\x1f\x8b\x08\x00garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseCrateMeta(bytes.NewReader(data))
		if err != nil {
			return
		}
		if ValidateName(m.Name) != nil || !semverRE.MatchString(m.Version) {
			t.Fatalf("accepted crate %q %q", m.Name, m.Version)
		}
	})
}

func TestParseCrateMetaReadsBothShapes(t *testing.T) {
	data := buildCrate(t, "yolop-extension-k8s-2", "1.2.3", map[string]string{
		"Cargo.toml":  "[package]\nname = \"yolop-extension-k8s-2\"\nversion = \"1.2.3\"\n[package.metadata.yolop.artifacts.aarch64-apple-darwin]\nurl = \"k8s.tar.gz\"\nsha256 = \"ab\"\n",
		"plugin.json": `{"yolop":{"artifacts":{"aarch64-apple-darwin":{"url":"https://x/ignored","sha256":"cd"},"x86_64-pc-windows-msvc":{"url":"https://x/w.zip","sha256":"ef"}}}}`,
	})
	m, err := parseCrateMeta(bytes.NewReader(data))
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

// TestParseCrateMetaRefuses: a crate whose Cargo.toml disagrees with its
// directory, or whose entries sit under two directories, is not read.
func TestParseCrateMetaRefuses(t *testing.T) {
	for what, data := range map[string][]byte{
		"Cargo.toml names another crate": buildCrate(t, "foo", "1.0.0", map[string]string{"Cargo.toml": "[package]\nname = \"bar\"\nversion = \"1.0.0\"\n"}),
		"Cargo.toml has another version": buildCrate(t, "foo", "1.0.0", map[string]string{"Cargo.toml": "[package]\nname = \"foo\"\nversion = \"1.0.1\"\n"}),
		"two top-level directories":      gz(t, rawTar(t, []tarEntry{file("foo-1.0.0/a", "1"), file("bar-1.0.0/b", "2")})),
		"no <name>-<version> directory":  gz(t, rawTar(t, []tarEntry{file("foo/a", "1")})),
		"an empty archive":               gz(t, rawTar(t, nil)),
		"not gzip":                       []byte("PK\x03\x04"),
	} {
		if m, err := parseCrateMeta(bytes.NewReader(data)); err == nil {
			t.Errorf("%s: accepted as %s %s", what, m.Name, m.Version)
		}
	}
}

// TestPublishChecksArtifactsFirst: publish refuses a crate whose pinned
// artifacts are missing or differ, before writing anything.
func TestPublishChecksArtifactsFirst(t *testing.T) {
	ctx := context.Background()
	art := filepath.Join(t.TempDir(), "echo-x86_64-unknown-linux-gnu.tar.gz")
	os.WriteFile(art, []byte("archive bytes"), 0o644)
	cargo := "[package]\nname = \"yolop-extension-echo\"\nversion = \"0.1.0\"\n\n[package.metadata.yolop.artifacts.x86_64-unknown-linux-gnu]\nurl = \"echo-x86_64-unknown-linux-gnu.tar.gz\"\nsha256 = \"" + sha([]byte("archive bytes")) + "\"\n"
	pkg := t.TempDir()
	writeTree(t, pkg, map[string]string{"plugin.json": echoManifest, "Cargo.toml": cargo})
	res, err := Pack(ctx, pkg, PackOptions{OutDir: t.TempDir(), Targets: "none"})
	if err != nil {
		t.Fatal(err)
	}
	crate := res.File
	index := filepath.Join(t.TempDir(), "index")

	_, err = Publish(ctx, index, crate, PublishOptions{})
	if err == nil {
		t.Fatal("publish without the pinned artifact succeeded")
	}
	mustContain(t, "missing artifact error", err.Error(), "no --artifact echo-x86_64-unknown-linux-gnu.tar.gz")
	wrong := filepath.Join(t.TempDir(), filepath.Base(art))
	os.WriteFile(wrong, []byte("other bytes"), 0o644)
	_, err = Publish(ctx, index, crate, PublishOptions{Artifacts: []string{wrong}})
	if err == nil {
		t.Fatal("publish with a different artifact succeeded")
	}
	mustContain(t, "wrong artifact error", err.Error(), "but the crate pins", "yolop ext pack")
	if _, err := os.Stat(index); !os.IsNotExist(err) {
		t.Fatalf("a refused publish created the index: %v", err)
	}
	pub, err := Publish(ctx, index, crate, PublishOptions{Artifacts: []string{art}})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(index, "crates", "yolop-extension-echo", "0.1.0", filepath.Base(art))); string(got) != "archive bytes" {
		t.Fatalf("published artifact = %q", got)
	}
	want := &PublishResult{Name: "yolop-extension-echo", Version: "0.1.0", Checksum: res.SHA256, Artifacts: []string{filepath.Base(art)}}
	if diff := cmp.Diff(want, pub); diff != "" {
		t.Errorf("PublishResult (-want +got):\n%s", diff)
	}
}

// TestPublishWarnsAboutArtifactsItCannotCheck: an artifact hosted
// elsewhere and a given file the metadata does not name are published
// with a warning each, not refused.
func TestPublishWarnsAboutArtifactsItCannotCheck(t *testing.T) {
	data := buildCrate(t, "yolop-extension-echo", "0.1.0", map[string]string{
		"plugin.json": `{"name":"echo","yolop":{"artifacts":{"x86_64-unknown-linux-gnu":{"url":"https://example.org/a.tgz","sha256":"00"}}}}`,
	})
	dir := t.TempDir()
	crate := filepath.Join(dir, "c.crate")
	extra := filepath.Join(dir, "notes.txt")
	os.WriteFile(crate, data, 0o644)
	os.WriteFile(extra, []byte("n"), 0o644)
	res, err := Publish(context.Background(), t.TempDir(), crate, PublishOptions{Artifacts: []string{extra}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 2 {
		t.Fatalf("warnings %q, want two", res.Warnings)
	}
	mustContain(t, "warnings", strings.Join(res.Warnings, "\n"), "https://example.org/a.tgz", "is not a file published next to the crate", "--artifact "+extra, "installs will not use it")
	// Two artifacts with one file name would overwrite each other.
	other := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(other, []byte("m"), 0o644)
	if _, err := Publish(context.Background(), t.TempDir(), crate, PublishOptions{Artifacts: []string{extra, other}}); err == nil || !strings.Contains(err.Error(), "same file name") {
		t.Errorf("two artifacts named notes.txt: %v", err)
	}
}

// TestConcurrentPublishersTakeTurns: publishers racing on one index take
// turns on its lock file, so no index line is lost.
func TestConcurrentPublishersTakeTurns(t *testing.T) {
	index := t.TempDir()
	const n = 8
	crates := make([]string, n)
	for i := range crates {
		v := "0.1." + itoa(int64(i))
		crates[i] = filepath.Join(t.TempDir(), "c.crate")
		os.WriteFile(crates[i], buildCrate(t, "foo", v, map[string]string{"a": v}), 0o644)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, c := range crates {
		wg.Go(func() {
			_, err := Publish(context.Background(), index, c, PublishOptions{})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(index, "3", "f", "foo"))
	f, err := ParseIndexFile("foo", b)
	if err != nil || len(f.Entries) != n {
		t.Fatalf("index has %d of %d versions (%v):\n%s", len(f.Entries), n, err, b)
	}
	if _, err := os.Stat(filepath.Join(index, publishLockName)); err != nil {
		t.Errorf("no lock file %s: %v", publishLockName, err)
	}
	// A publisher that cannot get the lock gives up when its context ends.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	held := flock.New(filepath.Join(index, publishLockName))
	if err := held.Lock(); err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	os.WriteFile(crates[0], buildCrate(t, "foo", "0.2.0", map[string]string{"a": "x"}), 0o644)
	if _, err := Publish(ctx, index, crates[0], PublishOptions{}); err == nil || !strings.Contains(err.Error(), publishLockName) {
		t.Errorf("publish while the lock is held: %v", err)
	}
}

func mustContain(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, s)
		}
	}
}
