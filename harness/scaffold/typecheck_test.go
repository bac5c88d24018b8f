package scaffold_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "yolop.dev/harness/scaffold" // the tests read as the package's own code
)

// tscDir holds a pinned tsc and Node.js's types; .ci/run runs npm ci there.
const tscDir = "testdata/tsc"

// TestTypeScriptTemplateTypeChecks: the TypeScript template is JavaScript
// with // @ts-check and JSDoc types, so it runs on Node.js with no compile
// step; for every facet combination it must also pass tsc --checkJs
// --strict against Node.js's types, so an author who runs tsc starts from
// zero errors.
func TestTypeScriptTemplateTypeChecks(t *testing.T) {
	t.Parallel()
	tsc, types := needTSC(t)
	work := t.TempDir()
	var files []string
	for _, c := range combos {
		o := c.o
		o.Name, o.Lang, o.Dir = c.name, TypeScript, filepath.Join(work, c.name)
		r, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		src, _ := os.ReadFile(filepath.Join(r.Dir, r.Server))
		js := filepath.Join(work, c.name+".js") // tsc wants a .js name
		if err := os.WriteFile(js, src, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, js)
	}
	// One tsc run; --moduleDetection force gives each file its own scope.
	args := append([]string{"--noEmit", "--allowJs", "--checkJs", "--strict", "--target", "es2022", "--module", "commonjs",
		"--moduleDetection", "force", "--types", "node", "--typeRoots", types}, files...)
	cmd := exec.CommandContext(t.Context(), tsc, args...)
	cmd.Dir = work
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("tsc: %v\n%s", err, strings.TrimSpace(string(out)))
	}
}

// TestTypeScriptSDKTemplateTypeChecks: for every facet combination, the
// --sdk server passes tsc --checkJs --strict against the vendored SDK's
// declarations and Node.js's types, in place in its package (so its
// imports of ../lib/yolop-sdk resolve), and so does the SDK's own
// index.js; an author who runs tsc starts from zero errors.
func TestTypeScriptSDKTemplateTypeChecks(t *testing.T) {
	t.Parallel()
	tsc, types := needTSC(t)
	work := t.TempDir()
	var files []string
	for i, c := range combos {
		o := c.o
		o.Name, o.Lang, o.SDK, o.Dir = c.name, TypeScript, true, filepath.Join(work, c.name)
		r, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		src, _ := os.ReadFile(filepath.Join(r.Dir, r.Server))
		js := filepath.Join(r.Dir, "bin", "server.js") // tsc wants a .js name
		if err := os.WriteFile(js, src, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, js)
		if i == 0 {
			files = append(files, filepath.Join(r.Dir, SDKDir, "src", "index.js"))
		}
	}
	// One tsc run; --moduleDetection force gives each file its own scope.
	args := append([]string{"--noEmit", "--allowJs", "--checkJs", "--strict", "--target", "es2022", "--module", "nodenext",
		"--moduleDetection", "force", "--types", "node", "--typeRoots", types}, files...)
	cmd := exec.CommandContext(t.Context(), tsc, args...)
	cmd.Dir = work
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("tsc: %v\n%s", err, strings.TrimSpace(string(out)))
	}
}
