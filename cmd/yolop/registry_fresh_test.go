package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"yolop.dev/registry/cratesio"
)

// listTree lists every path under root, to prove a command left nothing
// behind (the index cache included).
func listTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, rel+" "+fi.Mode().String())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestFailedInstallIntoAFreshConfigDirLeavesNothing: a registry install
// that fails (a crate whose checksum does not match the index) or is
// refused (no consent), into a config directory that does not exist yet,
// leaves the tree exactly as it was: no config directory, no empty
// extensions/, no .lock, no index cache.
func TestFailedInstallIntoAFreshConfigDirLeavesNothing(t *testing.T) {
	index, reg := manifestOnlyIndex(t)
	static := cratesio.ServeIndex(index)
	tampered := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/download") {
			b, err := os.ReadFile(filepath.Join(index, filepath.FromSlash(strings.TrimPrefix(r.URL.Path, "/"))))
			if err != nil {
				http.NotFound(w, r)
				return
			}
			b[len(b)/2] ^= 0xff
			w.Write(b)
			return
		}
		static.ServeHTTP(w, r)
	}))
	t.Cleanup(tampered.Close)
	for _, tc := range []struct {
		name  string
		args  []string
		wants []string
	}{
		{"checksum mismatch", []string{"ext", "install", "echo", "--registry", "sparse+" + tampered.URL + "/", "--yes"}, []string{"failed to verify the checksum"}},
		{"no consent", []string{"ext", "install", "echo", "--registry", reg}, []string{"--yes"}},
		{"no such crate", []string{"ext", "install", "nothere", "--registry", reg, "--yes"}, []string{"not found", "404"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			t.Setenv("YOLOP_CONFIG_DIR", filepath.Join(parent, "yolop"))
			before := listTree(t, parent)
			_, errOut, code := cli(t, "", tc.args...)
			if code == 0 {
				t.Fatal("the install succeeded")
			}
			mustContain(t, "install error", errOut, tc.wants...)
			if d := cmp.Diff(before, listTree(t, parent)); d != "" {
				t.Errorf("a failed install into a fresh config dir left (-before +after):\n%s", d)
			}
		})
	}
}
