package cratesio

import (
	"archive/tar"
	"bytes"
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/gzip"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Re-executed as a helper process by the crash-consistency test.
	if os.Getenv("CRATESIO_TEST_HELPER") == "unpack-stdin" {
		err := Unpack(os.Stdin, 0, os.Getenv("CRATESIO_TEST_DEST"), UnpackOptions{Prefix: pfx, MaxTotalBytes: 1 << 30})
		if err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// writeTree creates files (slash paths → content) under dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// buildCrate packs files with WriteCrate and returns the .crate bytes.
func buildCrate(t testing.TB, name, version string, files map[string]string) []byte {
	t.Helper()
	src := t.TempDir()
	writeTree(t, src, files)
	var buf bytes.Buffer
	if err := WriteCrate(&buf, name, version, src); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// publishCrate builds and publishes a crate into indexDir.
func publishCrate(t testing.TB, indexDir, name, version string, files map[string]string, artifacts ...string) []byte {
	t.Helper()
	data := buildCrate(t, name, version, files)
	f := filepath.Join(t.TempDir(), name+"-"+version+".crate")
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Publish(context.Background(), indexDir, f, PublishOptions{Artifacts: artifacts}); err != nil {
		t.Fatal(err)
	}
	return data
}

func echoFiles(version string) map[string]string {
	return map[string]string{
		"Cargo.toml":  "[package]\nname = \"yolop-extension-echo\"\nversion = \"" + version + "\"\n",
		"plugin.json": `{"name":"echo","version":"` + version + `"}`,
		"src/main.rs": "fn main() {}\n",
	}
}

// serve starts a loopback server for h and returns its sparse+ URL.
func serve(t testing.TB, h http.Handler) (string, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return "sparse+" + srv.URL + "/", srv
}

// fastOptions are client options with tiny retry delays for tests.
func fastOptions(registry string) Options {
	return Options{
		Registry:       registry,
		RetryBaseDelay: time.Millisecond,
		RetryJitter:    -1,
		MaxRetryDelay:  5 * time.Millisecond,
	}
}

// snapshot lists every path under dir (Lstat, not following links) with
// its type and size, to prove "nothing changed".
func snapshot(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel+" "+fi.Mode().String()+" "+itoa(fi.Size()*boolInt(fi.Mode().IsRegular())))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func assertUnchanged(t testing.TB, dir string, before []string) {
	t.Helper()
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Errorf("%s changed (-before +after):\n%s", dir, diff)
	}
}

// tarEntry is one raw entry of a hand-built (possibly hostile) archive.
type tarEntry struct {
	hdr  tar.Header
	body string
}

func file(name, body string) tarEntry {
	return tarEntry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(body))}, body: body}
}

func dir(name string) tarEntry {
	return tarEntry{hdr: tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755}}
}

// rawTar writes entries with tar.Writer exactly as given.
func rawTar(t testing.TB, entries []tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := e.hdr
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatalf("writing header %q: %v", h.Name, err)
		}
		if e.body != "" {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
