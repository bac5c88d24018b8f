package repl

import (
	"encoding/json"
	"testing"

	"yolop.dev/core/yep"
)

// TestToolLines: a turn's activity line shows the tool and its narration
// when the manifest gives one (else the arguments), and each approval
// decision has a line naming the tool, what serves it, who decided and
// why.
func TestToolLines(t *testing.T) {
	for _, c := range []struct {
		d    yep.ToolStartedData
		want string
	}{
		{yep.ToolStartedData{Tool: "reverse", Args: json.RawMessage(`{"text":"abc"}`), Narration: `Reversing "abc"`}, `→ reverse: Reversing "abc"`},
		{yep.ToolStartedData{Tool: "reverse", Args: json.RawMessage(`{"text":"abc"}`), Narration: "reverse"}, `→ reverse {"text":"abc"}`},
		{yep.ToolStartedData{Tool: "reverse", Args: json.RawMessage(`{"text":"abc"}`)}, `→ reverse {"text":"abc"}`},
		{yep.ToolStartedData{Tool: "list_files", Args: json.RawMessage(`{}`)}, `→ list_files`},
	} {
		if got := startedText(c.d); got != c.want {
			t.Errorf("startedText(%+v) = %q, want %q", c.d, got, c.want)
		}
	}
	for _, c := range []struct {
		d    yep.ToolApprovalData
		want string
	}{
		{yep.ToolApprovalData{Tool: "reverse", Capability: "ext:echo", Extension: "echo", Version: "0.1.0", Decision: "approved", By: "user", Reason: "the manifest asks before every call"},
			"approved: reverse (echo@0.1.0) by user"},
		{yep.ToolApprovalData{Tool: "reverse", Capability: "ext:echo", Extension: "echo", Version: "0.1.0", Decision: "denied", By: "user", Reason: "the user denied the call"},
			"denied: reverse (echo@0.1.0) by user: the user denied the call"},
		{yep.ToolApprovalData{Tool: "bash", Capability: "builtin:coding", Decision: "denied", By: "policy", Reason: "your policy denies this tool"},
			"denied: bash (builtin:coding) by policy: your policy denies this tool"},
		{yep.ToolApprovalData{Tool: "echo", Capability: "ext:guard", Extension: "echo", Version: "0.1.0", Decision: "blocked", By: "hook", Reason: "forbidden word"},
			"blocked: echo (echo@0.1.0) by ext:guard: forbidden word"},
		{yep.ToolApprovalData{Tool: "bash", Capability: "ext:guard", Decision: "blocked", By: "hook", Reason: "no"},
			"blocked: bash by ext:guard: no"},
	} {
		if got := approvalText(c.d); got != c.want {
			t.Errorf("approvalText(%+v) = %q, want %q", c.d, got, c.want)
		}
	}
}
