package core_test

import (
	"bytes"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/core"
)

// TestSourceEmbedsEveryPackage walks the module on disk: every directory
// that holds a package (a non-test .go file, outside testdata and outside
// nested modules) must be embedded in [core.Source] with all of its .go
// files, byte for byte, beside go.mod and go.sum. A package added to core
// and not to the //go:embed list fails here rather than in the build of a
// scaffolded extension that imports it.
func TestSourceEmbedsEveryPackage(t *testing.T) {
	for _, f := range []string{"go.mod", "go.sum"} {
		sameAsDisk(t, f)
	}
	packages := 0 // non-test .go files seen
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p == "." {
				return nil
			}
			if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		if !strings.HasSuffix(name, "_test.go") {
			packages++
		}
		sameAsDisk(t, filepath.ToSlash(p))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if packages == 0 {
		t.Fatal("found no Go source on disk; is the test running in core/?")
	}

	// Nothing but go.mod, go.sum and Go source, and no testdata; and every
	// embedded directory keeps a non-test .go file once the tests are left
	// out (as the scaffold writes it), or its //go:embed pattern would match
	// nothing in that copy and package core would not compile there.
	nonTest := map[string]bool{}
	err = fs.WalkDir(core.Source, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if _, seen := nonTest[p]; !seen {
				nonTest[p] = false
			}
			return nil
		}
		if p != "go.mod" && p != "go.sum" && !strings.HasSuffix(p, ".go") || strings.Contains("/"+p, "/testdata/") {
			t.Errorf("core.Source holds %s: only go.mod, go.sum and the packages' .go files belong there", p)
		}
		if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			nonTest[path.Dir(p)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir, ok := range nonTest {
		if !ok && hasFiles(dir) {
			t.Errorf("core.Source's %s holds only tests: its pattern matches nothing once they are left out", dir)
		}
	}
}

// hasFiles reports whether dir in core.Source holds a file directly.
func hasFiles(dir string) bool {
	entries, _ := fs.ReadDir(core.Source, dir)
	for _, e := range entries {
		if !e.IsDir() {
			return true
		}
	}
	return false
}

// sameAsDisk fails unless the module file p is embedded and equal to the
// file on disk.
func sameAsDisk(t *testing.T, p string) {
	t.Helper()
	disk, err := os.ReadFile(filepath.FromSlash(p))
	if err != nil {
		t.Fatal(err)
	}
	emb, err := fs.ReadFile(core.Source, p)
	if err != nil {
		t.Errorf("%s is not in core.Source: add its directory to the //go:embed list in source.go (%v)", p, err)
		return
	}
	if !bytes.Equal(disk, emb) {
		t.Errorf("core.Source's %s differs from the file on disk", p)
	}
}
