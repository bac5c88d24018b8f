package cratesio

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	if err := Publish(indexDir, f, PublishMeta{}); !errors.Is(err, ErrAlreadyPublished) {
		t.Errorf("re-publish: %v", err)
	}
	if err := Publish(indexDir, f, PublishMeta{Version: "2.0.0"}); err == nil {
		t.Error("a version that disagrees with the crate was accepted")
	}
	assertUnchanged(t, indexDir, before)
	// A hostile crate is refused before anything is written.
	evil := gz(t, rawTar(t, []tarEntry{file("bar-1.0.0/a", "1"), {hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: "bar-1.0.0/l", Linkname: "/"}}}))
	os.WriteFile(f, evil, 0o644)
	if err := Publish(indexDir, f, PublishMeta{}); !errors.Is(err, ErrUnsafeArchive) {
		t.Errorf("hostile crate: %v", err)
	}
	assertUnchanged(t, indexDir, before)
	// DLBase gives cargo an absolute dl.
	other := t.TempDir()
	os.WriteFile(f, data, 0o644)
	if err := Publish(other, f, PublishMeta{DLBase: "https://example.org/reg/"}); err != nil {
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

func TestServeIndex(t *testing.T) {
	indexDir := t.TempDir()
	publishCrate(t, indexDir, "foo", "1.0.0", map[string]string{"a": "1"})
	os.WriteFile(filepath.Join(filepath.Dir(indexDir), "secret"), []byte("s"), 0o644)
	_, srv := serve(t, ServeIndex(indexDir))
	get := func(path string, hdr map[string]string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := get("/config.json", nil)
	if resp.StatusCode != 200 || !strings.Contains(body, `"dl": "`+srv.URL+`/crates/{crate}/{version}/download"`) {
		t.Errorf("config.json: %d %s", resp.StatusCode, body)
	}
	etag := resp.Header.Get("ETag")
	if resp, _ := get("/config.json", map[string]string{"If-None-Match": etag}); resp.StatusCode != http.StatusNotModified {
		t.Errorf("config.json revalidation: %d", resp.StatusCode)
	}
	resp, body = get("/3/f/foo", nil)
	if resp.StatusCode != 200 || !strings.Contains(body, `"vers":"1.0.0"`) || resp.Header.Get("ETag") == "" || resp.Header.Get("Last-Modified") == "" {
		t.Errorf("index file: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	if resp, _ := get("/3/f/foo", map[string]string{"If-None-Match": resp.Header.Get("ETag")}); resp.StatusCode != http.StatusNotModified {
		t.Errorf("index revalidation: %d", resp.StatusCode)
	}
	for _, p := range []string{"/../secret", "/%2e%2e/secret", "/crates", "/", "/nope"} {
		if resp, _ := get(p, nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", p, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/config.json", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST = %d", resp.StatusCode)
	}
}
