package harness_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"yolop.dev/harness"
	"yolop.dev/harness/manager"
	"yolop.dev/packaging"
)

// answer is a YesNo that records the question and answers as told.
func answer(asked *string, yes, tty bool) harness.YesNo {
	return func(q string) (bool, bool) {
		*asked = q
		return yes, tty
	}
}

func TestConfirmation(t *testing.T) {
	var asked string
	c := harness.Confirmation{Question: "Approve? [y/N] ", Undone: "nothing was approved"}
	if err := c.Ask(answer(&asked, true, true)); err != nil || asked != "Approve? [y/N] " {
		t.Fatalf("yes: %v, asked %q", err, asked)
	}
	if err := c.Ask(answer(&asked, false, true)); err == nil || err.Error() != "declined, nothing was approved" {
		t.Fatalf("no: %v", err)
	}
	err := c.Ask(answer(&asked, false, false))
	if err == nil || err.Error() != "there is no terminal to ask on, and nothing was approved; read the summary above, then re-run with --yes to approve it" {
		t.Fatalf("no terminal: %v", err)
	}
	c.Rerun = "yolop mcp approve"
	if err := c.Ask(answer(&asked, false, false)); err == nil || !strings.HasSuffix(err.Error(), "approve it:\n  yolop mcp approve --yes") {
		t.Fatalf("no terminal, with a rerun: %v", err)
	}
	asked = ""
	c.Yes = true
	if err := c.Ask(answer(&asked, false, false)); err != nil || asked != "" {
		t.Fatalf("--yes: %v, asked %q", err, asked)
	}
}

func TestLineConsent(t *testing.T) {
	ctx := context.Background()
	fresh := manager.Proposal{Name: "echo", Fresh: true, Text: "Extension echo 0.1.0\n  tools: echo\n"}
	update := manager.Proposal{Name: "echo", Text: "+ tool shout\n"}
	var out strings.Builder
	var asked string
	if err := harness.LineConsent(&out, false, "yolop ext install ./echo", answer(&asked, true, true))(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	if out.String() != "Extension echo 0.1.0\n  tools: echo\n" || asked != "Install echo? [y/N] " {
		t.Fatalf("fresh: out %q, asked %q", out.String(), asked)
	}
	out.Reset()
	err := harness.LineConsent(&out, false, "yolop ext update echo", answer(&asked, false, true))(ctx, update)
	if !errors.Is(err, packaging.ErrNotApproved) || !strings.Contains(err.Error(), "declined, nothing was changed") || asked != "Apply this update to echo? [y/N] " {
		t.Fatalf("update declined: %v, asked %q", err, asked)
	}
	err = harness.LineConsent(&out, false, "yolop ext update echo", answer(&asked, false, false))(ctx, update)
	if !errors.Is(err, packaging.ErrNotApproved) || !strings.HasSuffix(err.Error(), "\n  yolop ext update echo --yes") {
		t.Fatalf("update without a terminal: %v", err)
	}
	out.Reset()
	asked = ""
	if err := harness.LineConsent(&out, true, "", answer(&asked, false, false))(ctx, update); err != nil || asked != "" {
		t.Fatalf("--yes: %v, asked %q", err, asked)
	}
	if out.String() != "+ tool shout\nApply this update to echo: approved with --yes\n" {
		t.Fatalf("--yes: out %q", out.String())
	}
}
