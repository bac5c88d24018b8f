package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/harness"
	"yolop.dev/harness/manager"
	"yolop.dev/packaging"
)

// claudePluginSession installs packaging's bash-guard fixture — a Claude
// Code plugin with no yolop facet: a PreToolUse Bash validator in Python
// (claude-code's examples/hooks), commands, a skill, an MCP server and an
// agent — from a path through the harness's manager, enables it, and
// starts a session with the built-in coding tools. It returns the session,
// the package directory and the consent summary that was shown.
func claudePluginSession(t *testing.T) (*harness.Session, string, string) {
	return claudeFixtureSession(t, "bash-guard")
}

// claudeFixtureSession installs, enables and starts packaging's
// testdata/claudecode/<name> as claudePluginSession does.
func claudeFixtureSession(t *testing.T, name string) (*harness.Session, string, string) {
	t.Helper()
	h, pkg, summary := claudeFixtureInstalled(t, name)
	return startSession(t, h), pkg, summary
}

// claudeFixtureInstalled installs and enables packaging's
// testdata/claudecode/<name> from a copy in a fresh config directory. It
// returns the harness, the package directory and the consent summary.
func claudeFixtureInstalled(t *testing.T, name string) (*harness.Harness, string, string) {
	t.Helper()
	pkg := filepath.Join(t.TempDir(), name)
	if err := packaging.CopyTree("../packaging/testdata/claudecode/"+name, pkg); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := harness.Open(ctx, harness.Options{ConfigDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var summary string
	accept := func(_ context.Context, p manager.Proposal) error { summary = p.Text; return nil }
	if _, err := h.Manager().Install(ctx, manager.InstallRequest{Source: pkg, Consent: accept}); err != nil {
		t.Fatalf("installing the Claude Code plugin: %v", err)
	}
	if _, err := h.Manager().Enable(ctx, name); err != nil {
		t.Fatalf("enabling it: %v", err)
	}
	return h, pkg, summary
}

// startSession starts a session of h with the built-in coding tools.
func startSession(t *testing.T, h *harness.Harness) *harness.Session {
	t.Helper()
	ctx := context.Background()
	s, warnings := h.NewSession(ctx, harness.SessionOptions{CodingTools: true, WorkspaceRoot: t.TempDir()})
	t.Cleanup(s.Close)
	if len(warnings) != 0 {
		t.Fatalf("warnings: %q", warnings)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestClaudePluginHookBlocksBash runs the plugin's Python PreToolUse hook
// against built-in bash calls with Claude Code's protocol: a grep is
// blocked with the script's stderr (exit 2) as the reason, an echo runs.
func TestClaudePluginHookBlocksBash(t *testing.T) {
	s, pkg, summary := claudePluginSession(t)
	for _, want := range []string{"Claude Code plugin (no yolop facet)", "pre_tool_use bash", "pinned: hooks/bash_command_validator.py", "Agent command-reviewer"} {
		if !strings.Contains(summary, want) {
			t.Errorf("consent summary lacks %q:\n%s", want, summary)
		}
	}
	// The SessionStart loader's additionalContext reached the session.
	if got := s.SessionContext(); !strings.Contains(got, "Shell commands are validated by bash-guard") {
		t.Errorf("session_start context = %q", got)
	}
	// Its MCP server and skill are contributed, ${CLAUDE_PLUGIN_ROOT}
	// expanded to the package directory.
	e, ok := s.Extension("bash-guard")
	if !ok {
		t.Fatal("bash-guard is not in the session")
	}
	mcps := e.MCPServers()
	if len(mcps) != 1 || mcps[0].Name != "guard-notes" || mcps[0].Command != filepath.Join(pkg, "servers", "notes.py") ||
		len(mcps[0].Args) != 2 || mcps[0].Args[1] != pkg || mcps[0].Env["NOTES_DIR"] != filepath.Join(pkg, "notes") {
		t.Errorf("MCP servers %+v", mcps)
	}
	if sk := e.Skills(); len(sk) != 1 || filepath.Base(sk[0]) != "guard-rules" {
		t.Errorf("skills %q", sk)
	}
	ctx := context.Background()
	_, err := s.CallTool(ctx, "bash", "c1", json.RawMessage(`{"command":"grep -r TODO ."}`), nil)
	var blocked *host.HookBlockedError
	if !errors.As(err, &blocked) || blocked.Capability != "ext:bash-guard" || !strings.Contains(blocked.Reason, "Use 'rg' (ripgrep) instead of 'grep'") {
		t.Fatalf("grep = %v, want the hook's block", err)
	}
	res, err := s.CallTool(ctx, "bash", "c2", json.RawMessage(`{"command":"echo allowed"}`), nil)
	if err != nil || res.IsError || res.Output != "allowed\n" {
		t.Fatalf("echo = %+v, %v", res, err)
	}
}

// TestClaudePluginCommandExpands runs /bash-guard:review-file: it answers
// the command's prompt with $1, $2 and $ARGUMENTS filled.
func TestClaudePluginCommandExpands(t *testing.T) {
	s, _, _ := claudePluginSession(t)
	res, err := s.ExecuteCommand(context.Background(), "bash-guard:review-file", `main.go "error handling"`)
	if err != nil || !res.Success {
		t.Fatalf("command = %+v, %v", res, err)
	}
	if want := "Review the file main.go with a focus on error handling.\n\nThe user asked: main.go \"error handling\"\n"; !strings.Contains(res.Message, want) {
		t.Fatalf("expanded to %q, want %q", res.Message, want)
	}
}

// TestClaudePluginEditedHookRefused edits the approved hook script in
// place: the next call's hook is refused before it runs, and the call is
// blocked (fail-closed) rather than let through.
func TestClaudePluginEditedHookRefused(t *testing.T) {
	s, pkg, _ := claudePluginSession(t)
	script := filepath.Join(pkg, "hooks", "bash_command_validator.py")
	if err := os.WriteFile(script, []byte("import sys\nsys.exit(0)\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := s.CallTool(context.Background(), "bash", "c1", json.RawMessage(`{"command":"echo hi"}`), nil)
	var blocked *host.HookBlockedError
	if !errors.As(err, &blocked) || !strings.Contains(blocked.Reason, "hooks/bash_command_validator.py changed since it was approved") {
		t.Fatalf("after the edit = %v, want the call blocked because the script changed", err)
	}
}

// TestClaudePluginCrashingHookFailsClosed: a PreToolUse hook whose script
// crashes (exit 1, a traceback) blocks the call — Claude Code would run
// it — and the reason names the failure.
func TestClaudePluginCrashingHookFailsClosed(t *testing.T) {
	s, _, _ := claudeFixtureSession(t, "broken-guard")
	_, err := s.CallTool(context.Background(), "bash", "c1", json.RawMessage(`{"command":"echo never"}`), nil)
	var blocked *host.HookBlockedError
	if !errors.As(err, &blocked) || !strings.Contains(blocked.Reason, "on_error is block") || !strings.Contains(blocked.Reason, "KeyError: 'input'") {
		t.Fatalf("crashing hook = %v, want the call blocked naming the failure", err)
	}
}

// TestClaudePluginHungHookFailsClosed: a PreToolUse hook that never
// answers blocks the call once its 1 s timeout passes.
func TestClaudePluginHungHookFailsClosed(t *testing.T) {
	s, _, _ := claudeFixtureSession(t, "slow-guard")
	_, err := s.CallTool(context.Background(), "bash", "c1", json.RawMessage(`{"command":"echo never"}`), nil)
	var blocked *host.HookBlockedError
	if !errors.As(err, &blocked) || !strings.Contains(blocked.Reason, "on_error is block") {
		t.Fatalf("hung hook = %v, want the call blocked", err)
	}
}

// TestClaudePluginUpdateDiffsAndReapproves edits the hook script of an
// installed path source: the next session leaves the plugin off, naming
// the change; yolop ext update shows the script's change as a widening and
// asks; once approved, the new script is what runs.
func TestClaudePluginUpdateDiffsAndReapproves(t *testing.T) {
	h, pkg, _ := claudeFixtureInstalled(t, "bash-guard")
	script := filepath.Join(pkg, "hooks", "bash_command_validator.py")
	if err := os.WriteFile(script, []byte("import sys\nprint('grep is fine now', file=sys.stderr)\nsys.exit(2 if 'rm ' in sys.stdin.read() else 0)\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, warnings := h.NewSession(ctx, harness.SessionOptions{CodingTools: true, WorkspaceRoot: t.TempDir()})
	s.Close()
	if !strings.Contains(strings.Join(warnings, "\n"), "hook file hooks/bash_command_validator.py changed") {
		t.Fatalf("session warnings %q, want the plugin kept off with the change", warnings)
	}
	var asked string
	if _, err := h.Manager().Update(ctx, "bash-guard", func(_ context.Context, p manager.Proposal) error { asked = p.Text; return nil }); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(asked, "+ hook file hooks/bash_command_validator.py changed") {
		t.Fatalf("update asked:\n%s", asked)
	}
	s2 := startSession(t, h)
	if res, err := s2.CallTool(ctx, "bash", "c1", json.RawMessage(`{"command":"grep -c x /dev/null || true"}`), nil); err != nil || res.IsError {
		t.Fatalf("grep under the approved new script = %+v, %v", res, err)
	}
	_, err := s2.CallTool(ctx, "bash", "c2", json.RawMessage(`{"command":"rm -f nothing"}`), nil)
	var blocked *host.HookBlockedError
	if !errors.As(err, &blocked) || !strings.Contains(blocked.Reason, "grep is fine now") {
		t.Fatalf("rm under the new script = %v, want its block", err)
	}
}

// TestClaudePluginManifestCost: what a Claude Code plugin adds to every
// request is its skills' lines of the skills index, and nothing else.
func TestClaudePluginManifestCost(t *testing.T) {
	m, err := packaging.Load("../packaging/testdata/claudecode/bash-guard")
	if err != nil {
		t.Fatal(err)
	}
	c := harness.ManifestCost(m)
	if c.Skills == 0 || c.Tools != 0 || c.Prompt != 0 || c.Total() != c.Skills {
		t.Fatalf("cost %+v, want the guard-rules skill's line only", c)
	}
}

// TestClaudePluginPromptAndStopHooks fires the lifecycle events a turn
// fires at prompt-guard's UserPromptSubmit and Stop hooks: a prompt with
// a credential is blocked with the hook's reason, another gets the hook's
// context, and the end of a turn is refused once, then allowed.
func TestClaudePluginPromptAndStopHooks(t *testing.T) {
	s, _, _ := claudeFixtureSession(t, "prompt-guard")
	ctx := context.Background()
	out := s.FireEvent(ctx, yep.HookUserPromptSubmit, "", yep.HookPayload{Prompt: "my password is hunter2"})
	if !out.Blocked || !strings.Contains(out.Reason, "Prompts must not contain credentials.") {
		t.Errorf("prompt with a password: %+v", out)
	}
	out = s.FireEvent(ctx, yep.HookUserPromptSubmit, "", yep.HookPayload{Prompt: "fix the flaky test"})
	if out.Blocked || !slices.Contains(out.Context, "Project rule: run the tests before committing.") {
		t.Errorf("plain prompt: %+v", out)
	}
	if out := s.FireEvent(ctx, yep.HookStop, "", yep.HookPayload{Message: "done"}); !out.Blocked || !strings.Contains(out.Reason, "Run the tests before you finish.") {
		t.Errorf("first stop: %+v", out)
	}
	if out := s.FireEvent(ctx, yep.HookStop, "", yep.HookPayload{Message: "done", StopHookActive: true}); out.Blocked {
		t.Errorf("stop after a refusal: %+v", out)
	}
}
