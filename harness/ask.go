package harness

import (
	"fmt"
	"slices"
	"strings"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
)

// AskPrompt is the text a line front-end shows for a ui/ask question
// from extension ext: the prompt, then its options numbered from 1 and
// "choose a number: ", or its placeholder in parentheses.
func AskPrompt(ext string, p yep.UIAskParams) string {
	prompt := fmt.Sprintf("[%s asks] %s", ext, p.Prompt)
	if len(p.Options) > 0 {
		for i, o := range p.Options {
			prompt += fmt.Sprintf("\n  %d) %s", i+1, o)
		}
		if approvalQuestion(p) {
			return prompt + "\nchoose a number, or allow (a, y) or deny (d, n): "
		}
		return prompt + "\nchoose a number: "
	}
	if p.Placeholder != "" {
		prompt += fmt.Sprintf(" (%s)", p.Placeholder)
	}
	return prompt
}

// AskAnswer is the answer a typed line gives to the question p: the line
// trimmed, or, for a question with options, the option its number picks
// (a line that is not one of the numbers is the answer as typed). To a
// tool call's approval question (the options "allow" and "deny") a, y
// and yes answer allow, and d, n and no deny, in any case.
func AskAnswer(p yep.UIAskParams, line string) string {
	answer := strings.TrimSpace(line)
	if approvalQuestion(p) {
		switch strings.ToLower(answer) {
		case "a", "y", "yes", host.AnswerAllow:
			return host.AnswerAllow
		case "d", "n", "no", host.AnswerDeny:
			return host.AnswerDeny
		}
	}
	if len(p.Options) > 0 {
		var n int
		if _, err := fmt.Sscanf(answer, "%d", &n); err == nil && n >= 1 && n <= len(p.Options) {
			return p.Options[n-1]
		}
	}
	return answer
}

// approvalQuestion reports whether p is a tool call's approval question:
// its options are "allow" and "deny" (see [host.SessionOptions] Approve).
func approvalQuestion(p yep.UIAskParams) bool {
	return slices.Equal(p.Options, []string{host.AnswerAllow, host.AnswerDeny})
}
