package builtin

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/core/host"
	"yolop.dev/harness/scaffold"
	"yolop.dev/packaging"
)

// TestScaffoldExtensionWritesInsideTheWorkspace: the agent's
// scaffold_extension writes the package `yolop ext new` would, inside the
// workspace only, and it installs through install_extension with consent.
func TestScaffoldExtensionWritesInsideTheWorkspace(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 is not on PATH; .ci/run installs it")
		}
		t.Skip("python3 is not on PATH")
	}
	m, cfg, _ := setup(t)
	ws := t.TempDir()
	ask := &scripted{answers: []string{"y"}}
	ext := NewExtensions(m, ExtensionsOptions{Ask: ask, WorkspaceRoot: ws})
	s := host.NewSession(host.SessionOptions{Builtins: []host.Capability{ext}})
	defer s.Close()

	res := call(t, s, "scaffold_extension", map[string]any{"name": "guard", "lang": "python", "hooks": []string{"pre_tool_use"}, "skills": true})
	if res.IsError {
		t.Fatalf("scaffold_extension: %s", res.Output)
	}
	dir := filepath.Join(ws, "guard")
	for _, want := range []string{"scaffolded extension guard (python) in " + dir, "bin/yolop-extension-guard  handle_pre_tool_use", "yolop ext install " + dir + " --yes"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("output lacks %q:\n%s", want, res.Output)
		}
	}
	var r scaffold.Result
	if err := json.Unmarshal(res.Data, &r); err != nil || r.Dir != dir || r.Server != "bin/yolop-extension-guard" {
		t.Errorf("data = %s (%v)", res.Data, err)
	}
	if _, err := packaging.Load(dir); err != nil {
		t.Fatal(err)
	}
	if res := call(t, s, "install_extension", map[string]string{"source": dir}); res.IsError {
		t.Fatalf("install: %s", res.Output)
	}
	if len(ask.questions) != 1 || !strings.Contains(ask.questions[0], "Skills (1, read-only") {
		t.Errorf("consent questions: %q", ask.questions)
	}
	if _, err := os.Stat(filepath.Join(cfg, packaging.LockFileName)); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"name": "esc", "lang": "python", "tools": []string{"t"}, "dir": "../esc"}, "not inside the workspace"},
		{map[string]any{"name": "abs", "lang": "python", "tools": []string{"t"}, "dir": t.TempDir()}, "not inside the workspace"},
		{map[string]any{"name": "ws", "lang": "python", "tools": []string{"t"}, "dir": "."}, "not inside the workspace"},
		{map[string]any{"name": "guard", "lang": "python", "tools": []string{"t"}}, "already exists"},
		{map[string]any{"name": "x", "lang": "cobol", "tools": []string{"t"}}, "unknown language"},
		{map[string]any{"name": "x", "lang": "python", "tool": []string{"t"}}, `unknown field "tool"`},
	} {
		if res := call(t, s, "scaffold_extension", tc.args); !res.IsError || !strings.Contains(res.Output, tc.want) {
			t.Errorf("scaffold_extension %v = %+v; want an error with %q", tc.args, res, tc.want)
		}
	}

	// No workspace: refused with the command to run instead.
	s2 := host.NewSession(host.SessionOptions{Builtins: []host.Capability{NewExtensions(m, ExtensionsOptions{})}})
	defer s2.Close()
	if res := call(t, s2, "scaffold_extension", map[string]any{"name": "x", "lang": "go", "tools": []string{"t"}}); !res.IsError || !strings.Contains(res.Output, "yolop ext new x --lang go") {
		t.Errorf("no workspace: %+v", res)
	}
}

// TestScaffoldExtensionRefusesALinkOut: a directory of the workspace that
// is a symlink to somewhere else is not the workspace; scaffolding through
// it is refused and nothing is written at the link's target. A link that
// stays inside the workspace is followed.
func TestScaffoldExtensionRefusesALinkOut(t *testing.T) {
	m, _, _ := setup(t)
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(ws, "alias")); err != nil {
		t.Fatal(err)
	}
	ext := NewExtensions(m, ExtensionsOptions{WorkspaceRoot: ws})
	s := host.NewSession(host.SessionOptions{Builtins: []host.Capability{ext}})
	defer s.Close()
	for _, dir := range []string{"escape/sd", "escape", "escape/a/b", filepath.Join(ws, "escape", "sd")} {
		res := call(t, s, "scaffold_extension", map[string]any{"name": "sd", "lang": "python", "tools": []string{"t"}, "dir": dir})
		if !res.IsError || !strings.Contains(res.Output, "not inside the workspace") || !strings.Contains(res.Output, outside) {
			t.Errorf("dir %q through a link out: error %v, %s; want an error naming %s", dir, res.IsError, res.Output, outside)
		}
	}
	if ents, err := os.ReadDir(outside); err != nil || len(ents) != 0 {
		t.Fatalf("the link's target outside the workspace was written: %v %v", ents, err)
	}
	res := call(t, s, "scaffold_extension", map[string]any{"name": "in", "lang": "python", "tools": []string{"t"}, "dir": "alias/in"})
	if res.IsError {
		t.Fatalf("a link inside the workspace: %s", res.Output)
	}
	if _, err := packaging.Load(filepath.Join(ws, "real", "in")); err != nil {
		t.Fatal(err)
	}
}
