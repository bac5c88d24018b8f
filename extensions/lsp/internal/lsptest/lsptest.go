// Package lsptest holds helpers for the lsp extension's tests: finding the
// real language servers and copying the fixture workspaces in testdata/
// into per-test directories (edits made by the tests never touch the
// originals).
package lsptest

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// ModuleDir returns the lsp extension's module directory.
func ModuleDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// PutGoplsOnPath makes sure gopls can be found on PATH, adding
// $(go env GOPATH)/bin when gopls is installed there but not on PATH (as
// after `go install golang.org/x/tools/gopls@v0.23.0`). It returns the
// path of gopls, or "" when it is not installed. Call it from TestMain.
func PutGoplsOnPath() string {
	if p, err := exec.LookPath("gopls"); err == nil {
		return p
	}
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err != nil {
		return ""
	}
	for _, dir := range filepath.SplitList(strings.TrimSpace(string(out))) {
		bin := filepath.Join(dir, "bin")
		if _, err := os.Stat(filepath.Join(bin, "gopls")); err == nil {
			os.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			return filepath.Join(bin, "gopls")
		}
	}
	return ""
}

// RequireGopls fails the test when gopls is not installed: the suite runs
// against the real server.
func RequireGopls(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("gopls"); err != nil {
		t.Fatalf("gopls is not installed; the lsp tests need the real server: go install golang.org/x/tools/gopls@v0.23.0")
	}
}

// Fixture copies testdata/<name> into a fresh temporary directory and
// returns its path with symlinks resolved.
func Fixture(t testing.TB, name string) string {
	t.Helper()
	src := filepath.Join(ModuleDir(), "testdata", name)
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() && d.Name() == "node_modules" {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy fixture %s: %v", name, err)
	}
	root, err := filepath.EvalSymlinks(dst)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// Column returns the 1-based code-point column of the first occurrence of
// sub on 1-based line of file (fails the test when absent).
func Column(t testing.TB, file string, line int, sub string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	if line < 1 || line > len(lines) {
		t.Fatalf("%s has no line %d", file, line)
	}
	i := strings.Index(lines[line-1], sub)
	if i < 0 {
		t.Fatalf("%q not on line %d of %s: %q", sub, line, file, lines[line-1])
	}
	return len([]rune(lines[line-1][:i])) + 1
}
