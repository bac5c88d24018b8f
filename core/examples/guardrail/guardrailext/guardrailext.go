// Package guardrailext is the guardrail extension's server logic: a
// pre_tool_use hook that blocks write_file, edit_file and bash calls that
// would write to a generated file — one whose first lines carry Go's
// marker "Code generated … DO NOT EDIT." (https://go.dev/s/generatedcode)
// behind a comment opener of any common language. The block reason names
// the file, quotes the marker and says what to do instead, so an agent
// that reads it edits the source and regenerates.
//
// [Check] is the whole decision; [New] serves it over YEP. The command in
// the parent directory serves it over stdio.
package guardrailext

import (
	"context"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
)

// Version is the server version.
var Version = "0.1.0"

// Prompt is the static system-prompt contribution.
const Prompt = "Files marked `Code generated … DO NOT EDIT.` are generated: change their source and regenerate."

// Tools are the tools the hook watches, one subscription each: a tool-name
// glob cannot name exactly these three.
var Tools = []string{"write_file", "edit_file", "bash"}

// HookTimeoutMS bounds one firing. A decision reads the heads of at most
// [MaxFiles] files, far less than this even on a loaded machine.
const HookTimeoutMS = 2000

// New returns the guardrail server with its hooks and prompt registered.
//
// The hooks fail open (on_error "warn"): when the server is slow or has
// crashed, the host lets the call through and warns. A generated file
// edited by mistake is found by the next regeneration or code review; a
// guardrail that failed closed would stop every write and every shell
// command of the session until it is fixed.
func New(log hclog.Logger) *sdk.Server {
	s := sdk.NewServer(sdk.Info{Name: "guardrail", Version: Version}, sdk.Options{Logger: log})

	// The workspace root comes with initialize; workspace/changed repoints
	// it.
	var moved atomic.Pointer[string]
	s.OnWorkspaceChanged(func(root string) { moved.Store(&root) })
	root := func() string {
		if r := moved.Load(); r != nil {
			return *r
		}
		return s.Init().WorkspaceRoot
	}

	for _, tool := range Tools {
		s.OnHook(yep.HookPreToolUse, tool, func(ctx context.Context, h *sdk.HookEvent) (yep.HookFireResult, error) {
			if reason := Check(root(), h.ToolName, h.Args); reason != "" {
				return yep.HookFireResult{Decision: yep.DecisionBlock, Reason: reason}, nil
			}
			return yep.HookFireResult{Decision: yep.DecisionAllow}, nil
		}, sdk.HookOptions{TimeoutMS: HookTimeoutMS, OnError: yep.HookOnErrorWarn})
	}

	s.Prompt(Prompt)
	return s
}
