package harness_test

import (
	"strings"
	"testing"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/harness"
)

func TestCompleteLine(t *testing.T) {
	for _, tc := range []struct {
		line  string
		cands []string
		want  string
		ok    bool
	}{
		{"/ca", []string{"/call", "/commands"}, "/call ", true},
		{"/c", []string{"/call", "/commands"}, "/c", false}, // common prefix already typed
		{"/call ec", []string{"echo", "echo_twice"}, "/call echo", true},
		{"/call echo", []string{"echo"}, "/call echo ", true},
		{"/x", []string{"/call"}, "", false},
	} {
		got, pos, ok := harness.CompleteLine(tc.line, len(tc.line), tc.cands)
		if ok != tc.ok || (ok && (got != tc.want || pos != len(got))) {
			t.Errorf("CompleteLine(%q, %q) = %q, %d, %v; want %q, %v", tc.line, tc.cands, got, pos, ok, tc.want, tc.ok)
		}
	}
}

func TestAsk(t *testing.T) {
	p := yep.UIAskParams{Prompt: "Which one?", Options: []string{"red", "blue"}}
	if got, want := harness.AskPrompt("paint", p), "[paint asks] Which one?\n  1) red\n  2) blue\nchoose a number: "; got != want {
		t.Errorf("AskPrompt = %q, want %q", got, want)
	}
	for line, want := range map[string]string{" 2\n": "blue", "1": "red", "3": "3", "green ": "green"} {
		if got := harness.AskAnswer(p, line); got != want {
			t.Errorf("AskAnswer(%q) = %q, want %q", line, got, want)
		}
	}
	q := yep.UIAskParams{Prompt: "Name?", Placeholder: "e.g. Ada"}
	if got, want := harness.AskPrompt("x", q), "[x asks] Name? (e.g. Ada)"; got != want {
		t.Errorf("AskPrompt = %q, want %q", got, want)
	}
}

// TestApprovalAnswers: a tool call's approval question takes allow or
// deny, their numbers, and a/y/yes or d/n/no.
func TestApprovalAnswers(t *testing.T) {
	p := yep.UIAskParams{Prompt: `Allow echo@0.1.0 to run "reverse"?`, Options: []string{host.AnswerAllow, host.AnswerDeny}}
	if got := harness.AskPrompt("echo", p); !strings.HasSuffix(got, "\n  1) allow\n  2) deny\nchoose a number, or allow (a, y) or deny (d, n): ") {
		t.Errorf("AskPrompt = %q", got)
	}
	for line, want := range map[string]string{"allow": "allow", "a": "allow", "Y": "allow", "yes\n": "allow", "1": "allow",
		"deny": "deny", "d": "deny", "n": "deny", "NO": "deny", "2": "deny", "maybe": "maybe"} {
		if got := harness.AskAnswer(p, line); got != want {
			t.Errorf("AskAnswer(%q) = %q, want %q", line, got, want)
		}
	}
	// Another question's options are not guessed at.
	q := yep.UIAskParams{Prompt: "Which?", Options: []string{"allow", "deny", "later"}}
	if got := harness.AskAnswer(q, "y"); got != "y" {
		t.Errorf("AskAnswer(other question, y) = %q", got)
	}
}
