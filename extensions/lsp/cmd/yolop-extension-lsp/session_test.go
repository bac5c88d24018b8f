package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/extensions/lsp/internal/lsptest"
)

// TestYolopSession loads the lsp package in place into a real `yolop
// session` (the CLI built from this workspace) and drives all seven tools
// through host → extension → gopls on the fixture.
func TestYolopSession(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the yolop CLI; skipped with -short")
	}
	lsptest.RequireGopls(t)
	dir := t.TempDir()
	repo := filepath.Join(lsptest.ModuleDir(), "..", "..")
	yolop := filepath.Join(dir, "yolop")
	build := exec.Command("go", "build", "-o", yolop, "./cmd/yolop")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Skipf("the yolop CLI does not build in this tree (%v), so the session test cannot run:\n%s", err, out)
	}
	pkg := filepath.Join(dir, "lsp")
	copyDir(t, filepath.Join(lsptest.ModuleDir(), "package"), pkg)
	build = exec.Command("go", "build", "-o", filepath.Join(pkg, "bin", "yolop-extension-lsp"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build yolop-extension-lsp: %v\n%s", err, out)
	}
	root := lsptest.Fixture(t, "gomod")
	script := strings.Join([]string{
		`/call lsp_definition {"file":"cmd/app/main.go","line":12,"symbol":"Hello"}`,
		`/call lsp_references {"file":"greet/greet.go","line":7,"symbol":"Hello","limit":2}`,
		`/call lsp_hover {"file":"cmd/app/main.go","line":12,"symbol":"Hello"}`,
		`/call lsp_symbols {"query":"Shout"}`,
		`/call lsp_diagnostics {}`,
		`/call lsp_code_actions {"file":"greet/tidy.go","line":4,"column":2,"kind":"source.organizeImports","apply":1}`,
		`/call lsp_rename {"file":"greet/greet.go","line":7,"symbol":"Hello","new_name":"Hi"}`,
		`/call lsp_diagnostics {}`,
		"/quit",
	}, "\n")
	cmd := exec.Command(yolop, "session", "--ext", pkg, "--no-enabled", "--workspace", root)
	cmd.Env = append(os.Environ(), "YOLOP_CONFIG_DIR="+filepath.Join(dir, "config"))
	cmd.Stdin = strings.NewReader(script)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("yolop session: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	for _, want := range []string{
		"greet/greet.go:7:6: func Hello(name string) string {",
		"4 references to `Hello` in 3 files; showing the first 2, 2 more not shown",
		"func greet.Hello(name string) string",
		"Function Shout — greet/shout.go:6:6",
		`greet/tidy.go:4:2: error: "os" imported and not used`,
		`Applied code action "Organize Imports"; changed 1 file:`,
		"3/3 files patched: greet/shout.go",
		"Renamed `Hello` to `Hi`: 5 edits in 3 files:",
		"No problems found in the workspace (gopls).",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("session output lacks %q:\n%s", want, out.String())
		}
	}
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}
