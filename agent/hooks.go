package agent

import (
	"context"
	"fmt"
	"strings"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
)

// The loop fires the session's lifecycle hooks (see [host.Session.FireEvent]):
//
//   - user_prompt_submit with each user message, before the model sees
//     it: a block ends the turn with a *[PromptBlockedError] and the
//     message never enters the conversation; context a hook adds goes
//     ahead of the message;
//   - stop when the model answers without calling a tool: a block
//     refuses the end of the turn once, its reason going to the model as a
//     user message, and the loop reasons again; a second block in the
//     same turn is not honoured (stop_hook_active tells the hook), so a
//     stop hook cannot keep a turn running for ever;
//   - pre_compact (source "auto") before old context is dropped because
//     the provider found the request too long;
//   - notification (source "idle") when a turn ended and the agent waits
//     for the user's next message.
//
// The host fires session_start and session_end (as the session starts and
// closes), post_tool_use_failure (after a failed call) and notification
// with source "ask" (when a question is put to the user).

// MaxStopRefusals bounds how often stop hooks may refuse the end of one
// turn.
const MaxStopRefusals = 1

// A PromptBlockedError reports a user message a user_prompt_submit hook
// blocked: the hook decided to block, or it failed and its on_error is
// block. It matches [host.ErrHookBlocked].
type PromptBlockedError struct {
	Capability, Reason string
}

func (e *PromptBlockedError) Error() string {
	return fmt.Sprintf("message blocked by %s: %s", e.Capability, e.Reason)
}

// Unwrap returns [host.ErrHookBlocked].
func (e *PromptBlockedError) Unwrap() error { return host.ErrHookBlocked }

// submit fires user_prompt_submit and returns the message as the model
// will read it: with the hooks' context ahead of it.
func (a *Agent) submit(ctx context.Context, message string) (string, error) {
	out := a.o.Session.FireEvent(ctx, yep.HookUserPromptSubmit, "", yep.HookPayload{Prompt: message})
	if out.Blocked {
		return "", &PromptBlockedError{Capability: out.Capability, Reason: out.Reason}
	}
	if len(out.Context) == 0 {
		return message, nil
	}
	return hookText(yep.HookUserPromptSubmit, strings.Join(out.Context, "\n\n")) + "\n\n" + message, nil
}

// stopRefused fires stop for a reply that would end the turn and says
// whether a hook refused the end, with the message that tells the model
// why; refusals counts the refusals of this turn so far.
func (a *Agent) stopRefused(ctx context.Context, text string, refusals int) (string, bool) {
	out := a.o.Session.FireEvent(ctx, yep.HookStop, "", yep.HookPayload{Message: text, StopHookActive: refusals > 0})
	if !out.Blocked || refusals >= MaxStopRefusals || ctx.Err() != nil {
		return "", false
	}
	return hookText(yep.HookStop, fmt.Sprintf("A stop hook of %s refused the end of the turn: %s", out.Capability, out.Reason)), true
}

// hookText wraps a hook's text for the model.
func hookText(event, text string) string {
	return fmt.Sprintf("<hook event=%q>\n%s\n</hook>", event, text)
}
