package scaffold_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	. "yolop.dev/harness/scaffold" // the tests read as the package's own code

	"yolop.dev/core"
)

// TestGoOutsideACheckoutVendorsTheCore: a Go package scaffolded outside
// any yolop checkout, with no core directory given, carries the SDK this
// binary was built from under lib/yolop-core (core.Source without its
// tests), and go.mod replaces yolop.dev/core with it and has its go.sum.
// The scaffold's build step succeeds, and so does a plain `go build` with
// no flags (go.mod and go.sum need no tidying); the package then installs
// and passes the doctor with zero edits.
func TestGoOutsideACheckoutVendorsTheCore(t *testing.T) {
	t.Parallel()
	goBin := need(t, "go", "the Go toolchain")
	o := Options{Name: "outside", Lang: Go, Tools: []string{"hello"}, Dir: filepath.Join(t.TempDir(), "outside")}
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}

	mod := readFile(t, r.Dir, "go.mod")
	for _, want := range []string{"module yolop-extension-outside\n", "require yolop.dev/core v0.0.0\n",
		"\tgithub.com/hashicorp/go-hclog v1.6.3 // indirect\n", "replace yolop.dev/core => ./" + CoreVendorDir + "\n"} {
		if !strings.Contains(mod, want) {
			t.Errorf("go.mod lacks %q:\n%s", want, mod)
		}
	}
	coreSum, _ := fs.ReadFile(core.Source, "go.sum")
	if sum := readFile(t, r.Dir, "go.sum"); sum != string(coreSum) {
		t.Errorf("go.sum is not core's:\n%s", sum)
	}
	// lib/yolop-core is core.Source without its tests, byte for byte.
	want := map[string]bool{}
	err = fs.WalkDir(core.Source, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, "_test.go") {
			return err
		}
		want[p] = true
		b, _ := fs.ReadFile(core.Source, p)
		if got := readFile(t, r.Dir, path.Join(CoreVendorDir, p)); got != string(b) {
			t.Errorf("%s/%s differs from core.Source", CoreVendorDir, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !want["sdk/server.go"] || !want["go.mod"] {
		t.Fatalf("core.Source lacks the SDK: %v", want)
	}
	for _, f := range r.Files {
		if rest, ok := strings.CutPrefix(f, CoreVendorDir+"/"); ok && !want[rest] {
			t.Errorf("the package holds %s, which is not core's non-test source", f)
		}
	}
	if len(r.Build) != 1 || r.Build[0].String() != "GOWORK=off go build -o bin/yolop-extension-outside ." {
		t.Fatalf("build = %v", r.Build)
	}
	if err := r.RunBuild(t.Context(), nil); err != nil {
		t.Fatal(err)
	}

	// A plain go build, as the author runs it, changes nothing in go.mod
	// or go.sum (GOFLAGS=-mod=readonly would refuse to).
	sum := readFile(t, r.Dir, "go.sum")
	build := exec.CommandContext(t.Context(), goBin, "build", "-o", filepath.Join(t.TempDir(), "server"))
	build.Dir = r.Dir
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in %s: %v\n%s", r.Dir, err, out)
	}
	if readFile(t, r.Dir, "go.mod") != mod || readFile(t, r.Dir, "go.sum") != sum {
		t.Error("go build changed go.mod or go.sum")
	}

	installAndDoctor(t, r, nil)

	// The summary names the vendored SDK once, not file by file.
	if text := r.Text(); strings.Count(text, CoreVendorDir) != 1 {
		t.Errorf("Text lists %s %d times:\n%s", CoreVendorDir, strings.Count(text, CoreVendorDir), text)
	}
}

func readFile(t *testing.T, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
