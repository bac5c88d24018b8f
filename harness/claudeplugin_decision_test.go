package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/harness"
	"yolop.dev/harness/manager"
	"yolop.dev/packaging"
)

// recordingAsk answers every question with answer(prompt) and keeps the
// prompts.
type recordingAsk struct {
	mu      sync.Mutex
	prompts []string
	answer  func(prompt string) string
}

func (a *recordingAsk) Ask(_ context.Context, _ string, p yep.UIAskParams) (yep.UIAskResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.prompts = append(a.prompts, p.Prompt)
	return yep.UIAskResult{Answer: a.answer(p.Prompt)}, nil
}

func (a *recordingAsk) take() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.prompts
	a.prompts = nil
	return out
}

// TestClaudePluginPermissionDecisions runs packaging's policy-guard — a
// PreToolUse Bash hook in Python whose rules live in a module it imports —
// in a session whose policy asks before every bash call:
// permissionDecision "deny" blocks with its reason and spares the user the
// question; "ask" puts the question to the user first (a denial blocks);
// "allow" removes no question of the user's policy; updatedInput replaces
// the arguments and is checked against the tool's schema again. Editing
// the imported module after approval refuses the hook, naming the file.
func TestClaudePluginPermissionDecisions(t *testing.T) {
	pkg := filepath.Join(t.TempDir(), "policy-guard")
	if err := packaging.CopyTree("../packaging/testdata/claudecode/policy-guard", pkg); err != nil {
		t.Fatal(err)
	}
	cfg := t.TempDir()
	if err := os.WriteFile(filepath.Join(cfg, "settings.toml"), []byte("[approval.tools]\nbash = \"ask\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := harness.Open(ctx, harness.Options{ConfigDir: cfg})
	if err != nil {
		t.Fatal(err)
	}
	var summary string
	accept := func(_ context.Context, p manager.Proposal) error { summary = p.Text; return nil }
	if _, err := h.Manager().Install(ctx, manager.InstallRequest{Source: pkg, Consent: accept}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(summary, "pinned: hooks/policy_rules.py") {
		t.Errorf("the consent summary does not pin the imported module:\n%s", summary)
	}
	if _, err := h.Manager().Enable(ctx, "policy-guard"); err != nil {
		t.Fatal(err)
	}
	ask := &recordingAsk{answer: func(p string) string {
		if strings.Contains(p, "refuse me") {
			return host.AnswerDeny
		}
		return host.AnswerAllow
	}}
	s, warnings := h.NewSession(ctx, harness.SessionOptions{CodingTools: true, WorkspaceRoot: t.TempDir(), Ask: ask})
	t.Cleanup(s.Close)
	if len(warnings) != 0 {
		t.Fatalf("warnings: %q", warnings)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	bash := func(command string) (yep.ToolResult, error) {
		args, _ := json.Marshal(map[string]string{"command": command})
		return s.CallTool(ctx, "bash", "c", args, nil)
	}
	var blocked *host.HookBlockedError

	// deny: blocked with the reason, nobody asked.
	if _, err := bash("rm -rf build"); !errors.As(err, &blocked) || blocked.Reason != "rm -rf is not allowed in this project" {
		t.Errorf("rm -rf = %v, want the hook's deny", err)
	}
	if p := ask.take(); len(p) != 0 {
		t.Errorf("a denied call asked %q", p)
	}

	// allow: the policy's question is still asked.
	if res, err := bash("echo trusted"); err != nil || res.Output != "trusted\n" {
		t.Errorf("echo trusted = %+v, %v", res, err)
	}
	if p := ask.take(); len(p) != 1 || strings.Contains(p[0], "echo is harmless") || !strings.Contains(p[0], "echo trusted") {
		t.Errorf("after the hook's allow the user was asked %q, want the policy's one question", p)
	}

	// ask: the hook's question, with its reason and the command, then the
	// policy's.
	if res, err := bash("echo deploy now"); err != nil || res.Output != "deploy now\n" {
		t.Errorf("echo deploy = %+v, %v", res, err)
	}
	if p := ask.take(); len(p) != 2 || !strings.Contains(p[0], "deploying needs a human") || !strings.Contains(p[0], "echo deploy now") || !strings.Contains(p[0], "policy-guard") {
		t.Errorf("questions %q, want the hook's then the policy's", p)
	}
	_, err = bash("echo deploy, refuse me")
	if !errors.As(err, &blocked) || !strings.Contains(blocked.Reason, "deploying needs a human") {
		t.Errorf("a refused ask = %v, want the call blocked", err)
	}
	if p := ask.take(); len(p) != 1 {
		t.Errorf("a refused ask asked %q, want one question", p)
	}

	// updatedInput: the replacement runs; one the schema refuses fails.
	if res, err := bash("echo npm test"); err != nil || res.Output != "pnpm test\n" {
		t.Errorf("echo npm test = %+v, %v; want the rewritten command's output", res, err)
	}
	if p := ask.take(); len(p) != 1 || !strings.Contains(p[0], "echo pnpm test") {
		t.Errorf("the user approved %q, want the rewritten command", p)
	}
	if res, err := bash("make it a number"); err == nil || errors.As(err, &blocked) {
		t.Errorf("a replacement the schema refuses = %+v, %v; want the argument check's error", res, err)
	}
	ask.take()

	// The module the script imports is re-verified before each run.
	module := filepath.Join(pkg, "hooks", "policy_rules.py")
	if err := os.WriteFile(module, []byte("def decide(tool, tool_input):\n    return None\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bash("rm -rf build"); !errors.As(err, &blocked) || !strings.Contains(blocked.Reason, "hooks/policy_rules.py changed since it was approved") {
		t.Errorf("after editing the imported module = %v, want the hook refused naming it", err)
	}
}
