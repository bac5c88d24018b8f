package repl_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/harness"
	"yolop.dev/harness/internal/echotest"
	"yolop.dev/harness/repl"
	"yolop.dev/harness/settings"
)

// TestApprovalLine: a call the user's policy denies gets a line saying
// which tool of which extension was denied, by whom and why, and the
// call's error.
func TestApprovalLine(t *testing.T) {
	ctx := context.Background()
	cfg := echotest.Installed(t)
	p := filepath.Join(cfg, settings.FileName)
	old, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append(old, "\n[approval.tools]\n\"echo.reverse\" = \"deny\"\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := harness.Open(ctx, harness.Options{ConfigDir: cfg})
	if err != nil {
		t.Fatal(err)
	}
	s, warnings := h.NewSession(ctx, harness.SessionOptions{})
	if len(warnings) > 0 {
		t.Fatalf("warnings: %v", warnings)
	}
	t.Cleanup(s.Close)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	out := &recorder{lifecycle: true}
	r := repl.New(repl.Options{Session: s.Session, Out: out})
	defer r.Close()
	r.Run(ctx, `/call reverse {"text":"abc"}`)
	if err := s.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	ev, _ := out.take()
	var lines []string
	for _, e := range ev {
		if e.text != "" {
			lines = append(lines, e.kind+": "+e.text)
		}
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{
		"tool.approval: denied: reverse (echo@0.1.0) by policy: your policy denies this tool",
		`tool "reverse" of echo@0.1.0 was denied by your policy (settings.toml [approval])`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lines lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "cba") {
		t.Errorf("the denied call ran:\n%s", got)
	}
}
