package repl_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/agent"
	"yolop.dev/agent/provider"
	"yolop.dev/agent/scripted"
	"yolop.dev/harness"
	"yolop.dev/harness/manager"
	"yolop.dev/harness/repl"
	"yolop.dev/packaging"
)

// TestClaudeCommandRunsAsATurn installs packaging's bash-guard fixture (a
// Claude Code plugin) and runs /bash-guard:review-file: its expansion is
// the user's message of a turn, which the scripted model matches.
func TestClaudeCommandRunsAsATurn(t *testing.T) {
	pkg := filepath.Join(t.TempDir(), "bash-guard")
	if err := packaging.CopyTree("../../packaging/testdata/claudecode/bash-guard", pkg); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := harness.Open(ctx, harness.Options{ConfigDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	accept := func(context.Context, manager.Proposal) error { return nil }
	if _, err := h.Manager().Install(ctx, manager.InstallRequest{Source: pkg, Consent: accept}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Manager().Enable(ctx, "bash-guard"); err != nil {
		t.Fatal(err)
	}
	s, warnings := h.NewSession(ctx, harness.SessionOptions{})
	t.Cleanup(s.Close)
	if len(warnings) != 0 {
		t.Fatalf("warnings: %q", warnings)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	script, err := scripted.Parse([]byte(`{"steps": [
		{"name": "review", "when": {"user": "Review the file main.go with a focus on error handling."},
		 "reply": {"text": "main.go handles its errors."}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := scripted.NewServer(script, scripted.Options{})
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	a, err := agent.New(agent.Options{Session: s.Session, Model: "scripted",
		Provider: provider.OpenAI(provider.Options{BaseURL: srv.URL() + "/v1/", APIKey: "k"})})
	if err != nil {
		t.Fatal(err)
	}
	out := &recorder{}
	r := repl.New(repl.Options{Session: s.Session, Agent: a, Out: out})
	r.Run(ctx, `/bash-guard:review-file main.go "error handling"`)
	if err := srv.Verify(); err != nil {
		t.Fatal(err)
	}
	ev, _ := out.take()
	var turn string
	for _, e := range ev {
		if e.kind == "turn" {
			turn, _ = e.fields["text"].(string)
		}
	}
	if !strings.Contains(turn, "main.go handles its errors.") {
		t.Fatalf("events %v; want the turn's answer", kinds(ev))
	}
}
