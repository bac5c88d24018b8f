package packaging

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"yolop.dev/core/yep"
)

// guardFixture copies the bash-guard Claude Code plugin to a fresh
// directory, so a test may edit it.
func guardFixture(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bash-guard")
	if err := CopyTree(filepath.Join("testdata", "claudecode", "bash-guard"), dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestClaudePluginLoadsDeclaratively(t *testing.T) {
	dir := guardFixture(t)
	m, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Yolop != nil || m.Declarative == nil || m.Declarative.Format != FormatClaudeCode {
		t.Fatalf("want a declarative manifest, got facet %v declarative %v", m.Yolop, m.Declarative)
	}
	if m.Name != "bash-guard" || filepath.Base(m.File) != "plugin.json" || filepath.Base(filepath.Dir(m.File)) != ".claude-plugin" {
		t.Fatalf("name %q file %q", m.Name, m.File)
	}
	d := m.Declarative
	var cmds []string
	for _, c := range d.Commands {
		cmds = append(cmds, c.Name)
	}
	if !slices.Equal(cmds, []string{"commit", "review-file"}) {
		t.Fatalf("commands %v", cmds)
	}
	rf := d.Commands[1]
	if rf.Description != "Review one file for a given concern" || rf.ArgumentHint != "<file> [concern]" {
		t.Fatalf("frontmatter %+v", rf)
	}
	// Matchers are mapped onto yolop's built-ins; MultiEdit and
	// NotebookEdit have no counterpart and are reported.
	var subs []string
	for _, h := range d.Hooks {
		subs = append(subs, h.Event+" "+h.Matcher+" "+h.OnError)
	}
	for _, want := range []string{"pre_tool_use bash block", "post_tool_use edit_file block", "post_tool_use write_file block"} {
		if !slices.Contains(subs, want) {
			t.Errorf("hooks %v lack %q", subs, want)
		}
	}
	// SessionStart is a hook when this yolop fires the event, else it is
	// reported as not supported: never dropped silently.
	unsupported := strings.Join(d.Unsupported, "\n")
	if slices.Contains(yep.HookEvents, "session_start") != slices.ContainsFunc(d.Hooks, func(h DeclHook) bool { return h.ClaudeEvent == "SessionStart" }) {
		t.Errorf("SessionStart mapped wrongly: hooks %v", subs)
	}
	if !slices.Contains(yep.HookEvents, "session_start") && !strings.Contains(unsupported, "hook SessionStart") {
		t.Errorf("SessionStart neither a hook nor reported: %s", unsupported)
	}
	for _, want := range []string{`matcher "MultiEdit"`, `matcher "NotebookEdit"`, "agents (1)", "command commit: !`…` shell expansions are not run", "command commit: allowed-tools"} {
		if !strings.Contains(unsupported, want) {
			t.Errorf("unsupported lacks %q:\n%s", want, unsupported)
		}
	}
	if len(d.MCPServers) != 1 || d.MCPServers[0].Name != "guard-notes" || d.MCPServers[0].Command != "${CLAUDE_PLUGIN_ROOT}/servers/notes.py" {
		t.Fatalf("mcp %+v", d.MCPServers)
	}
	if len(m.Skills) != 1 || m.Skills[0].Name != "guard-rules" || len(m.SkillPins) != 1 {
		t.Fatalf("skills %+v pins %+v", m.Skills, m.SkillPins)
	}
	if _, ok := d.Pins["hooks/bash_command_validator.py"]; !ok {
		t.Fatalf("hook script not pinned: %v", d.Pins)
	}
	s := Summary(m)
	for _, want := range []string{"Claude Code plugin (no yolop facet)", "/bash-guard:review-file <file> [concern]", "pre_tool_use bash (PreToolUse \"Bash\")", "pinned: hooks/bash_command_validator.py", "guard-notes: stdio", "guard-rules", "Agent command-reviewer", "not supported: never run", "Not supported"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
}

func TestClaudeCommandExpandsArguments(t *testing.T) {
	m, err := Load(guardFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	got := m.Declarative.Commands[1].Expand(`main.go "error handling"`)
	want := "\nReview the file main.go with a focus on error handling.\n\nThe user asked: main.go \"error handling\"\n"
	if got != want {
		t.Fatalf("expanded\n%q\nwant\n%q", got, want)
	}
}

func TestClaudePluginEditedHookScriptWidensAndFailsPins(t *testing.T) {
	dir := guardFixture(t)
	approved, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	cmd := approved.Declarative.Hooks[0].Command
	if err := approved.Declarative.VerifyPins(dir, cmd); err != nil {
		t.Fatalf("untouched script refused: %v", err)
	}
	script := filepath.Join(dir, "hooks", "bash_command_validator.py")
	if err := os.WriteFile(script, []byte("import sys\nsys.exit(0)\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := approved.Declarative.VerifyPins(dir, cmd); err == nil || !strings.Contains(err.Error(), "hooks/bash_command_validator.py changed since it was approved") {
		t.Fatalf("edited script: %v", err)
	}
	live, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ch := Diff(approved, live)
	if !ch.Widens() || !strings.Contains(ch.String(), "hook file hooks/bash_command_validator.py changed") {
		t.Fatalf("diff %s", ch)
	}
	// A new command widens too; the lock round trip keeps the baseline.
	os.WriteFile(filepath.Join(dir, "commands", "new.md"), []byte("do $ARGUMENTS\n"), 0o644)
	live, _ = Load(dir)
	if ch := Diff(approved, live); !strings.Contains(ch.String(), "command /bash-guard:new") {
		t.Fatalf("diff %s", ch)
	}
	if ch := Diff(approved, approved); !ch.Empty() {
		t.Fatalf("identical diff %s", ch)
	}
}

func TestClaudePluginLockRoundTrip(t *testing.T) {
	m, err := Load(guardFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	mj, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	e := LockEntry{Name: m.Name, Manifest: mj, Skills: m.SkillPins}
	back, err := e.ApprovedManifest()
	if err != nil {
		t.Fatal(err)
	}
	if ch := Diff(back, m); !ch.Empty() {
		t.Fatalf("the approved manifest read back differs from the live one: %s", ch)
	}
}

// TestClaudePluginWithoutVersion: Claude Code requires only a name; a
// plugin.json without a version loads as 0.0.0 with a warning, and a
// hooks path it names must exist.
func TestClaudePluginWithoutVersion(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".claude-plugin"), 0o755)
	os.MkdirAll(filepath.Join(dir, "commands"), 0o755)
	os.WriteFile(filepath.Join(dir, ".claude-plugin", "plugin.json"), []byte(`{"name":"tiny","author":{"name":"a"},"hooks":"./extra/hooks.json"}`), 0o644)
	os.WriteFile(filepath.Join(dir, "commands", "hi.md"), []byte("Say hi to $ARGUMENTS.\n"), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "extra/hooks.json") {
		t.Fatalf("a missing hooks path: %v", err)
	}
	os.MkdirAll(filepath.Join(dir, "extra"), 0o755)
	os.WriteFile(filepath.Join(dir, "extra", "hooks.json"), []byte(`{"hooks":{}}`), 0o644)
	m, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != NoVersion || !slices.Contains(m.Warnings, "plugin.json names no version; recorded as 0.0.0") {
		t.Fatalf("version %q warnings %q", m.Version, m.Warnings)
	}
	if got := m.Declarative.Commands[0].Expand("yolop"); got != "Say hi to yolop.\n" {
		t.Fatalf("expanded %q", got)
	}
}
