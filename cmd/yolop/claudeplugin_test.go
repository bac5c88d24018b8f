package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/packaging"
)

// TestClaudePluginThroughTheBinary installs packaging's bash-guard fixture
// — a Claude Code plugin with no yolop facet — from a path with the
// binary, runs one of its commands in a session, and shows that editing
// its hook script after approval keeps it off until it is approved again.
func TestClaudePluginThroughTheBinary(t *testing.T) {
	t.Parallel()
	cfg, work := t.TempDir(), t.TempDir()
	pkg := filepath.Join(t.TempDir(), "bash-guard")
	if err := packaging.CopyTree("../../packaging/testdata/claudecode/bash-guard", pkg); err != nil {
		t.Fatal(err)
	}
	out := must(t, cfg, work, "ext", "install", pkg, "--yes", "--enable")
	for _, want := range []string{"Claude Code plugin (no yolop facet)", "/bash-guard:review-file <file> [concern]", "pre_tool_use bash (PreToolUse \"Bash\")",
		"pinned: hooks/bash_command_validator.py", "guard-notes: stdio", "Agent command-reviewer"} {
		if !strings.Contains(out, want) {
			t.Errorf("install output lacks %q:\n%s", want, out)
		}
	}
	out, errOut, code := yolopProc(t, cfg, work, "/bash-guard:review-file main.go \"error handling\"\n/quit\n", "session")
	if code != 0 || !strings.Contains(out, "Review the file main.go with a focus on error handling.") {
		t.Fatalf("session: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	script := filepath.Join(pkg, "hooks", "bash_command_validator.py")
	if err := os.WriteFile(script, []byte("import sys\nsys.exit(0)\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out = must(t, cfg, work, "ext", "list")
	if !strings.Contains(out, "manifest changed — needs approval") {
		t.Fatalf("ext list after the script was edited:\n%s", out)
	}
}
