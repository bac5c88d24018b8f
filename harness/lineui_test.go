package harness_test

import (
	"testing"

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
