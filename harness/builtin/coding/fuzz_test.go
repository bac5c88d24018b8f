package coding

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzResolve: whatever path the agent sends, resolve refuses it or
// returns a target under the resolved root — never one outside it.
func FuzzResolve(f *testing.F) {
	for _, p := range []string{"", ".", "a.txt", "../x", "a/../../x", "/etc/passwd", "link", "link/x", "dir/link/../..", "./a//b/", "..", "dir/../dir/f", "rel/secret"} {
		f.Add(p)
	}
	base := f.TempDir()
	root, outside := filepath.Join(base, "ws"), filepath.Join(base, "out")
	for _, d := range []string{filepath.Join(root, "dir"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	for link, to := range map[string]string{"link": outside, "dir/link": "..", "rel": "../out", "in": "dir"} {
		if err := os.Symlink(to, filepath.Join(root, link)); err != nil {
			f.Fatal(err)
		}
	}
	ws, err := openWorkspace(root)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if strings.ContainsRune(p, 0) {
			return
		}
		tg, err := ws.resolve(p)
		if err != nil {
			return
		}
		abs := ws.abs(tg)
		if _, ok := within(ws.real, abs); !ok {
			t.Fatalf("resolve(%q) = %s, outside %s", p, abs, ws.real)
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			if _, ok := within(ws.real, real); !ok {
				t.Fatalf("resolve(%q) = %s, which leads to %s outside %s", p, abs, real, ws.real)
			}
		}
	})
}
