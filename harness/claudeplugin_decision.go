package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"yolop.dev/core/host"
	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
	"yolop.dev/packaging"
)

// decisionAsk is the in-process decision of a PreToolUse command hook
// whose permissionDecision is "ask": the server puts the question to the
// user before it answers the host. It never reaches the wire.
const decisionAsk = "ask"

// preToolUseDecision applies what a PreToolUse hook's JSON output decides
// beyond a block (handled before): permissionDecision "ask" asks the user
// (reason as the question's reason), "allow" changes nothing — a hook
// never loosens the user's approval policy, whose question still comes —
// and updatedInput replaces the call's arguments (the host checks them
// against the tool's schema again). A file tool's file_path, which the
// hook was given beside path, is mapped back to path.
func preToolUseDecision(h packaging.DeclHook, ev *sdk.HookEvent, o hookOutput, res yep.HookFireResult) (yep.HookFireResult, error) {
	if len(o.Specific.UpdatedInput) > 0 && !bytes.Equal(bytes.TrimSpace(o.Specific.UpdatedInput), []byte("null")) {
		args, err := updatedArgs(ev.Args, o.Specific.UpdatedInput)
		if err != nil {
			return yep.HookFireResult{}, fmt.Errorf("hook command %q: updatedInput: %w", h.Command, err)
		}
		res.Decision, res.Args = yep.DecisionMutate, args
	}
	switch o.Specific.PermissionDecision {
	case "", "allow":
	case decisionAsk:
		// res.Args, if set, is the replacement the question shows.
		res.Decision = decisionAsk
		res.Reason = o.Specific.PermissionDecisionReason
	default:
		return yep.HookFireResult{}, fmt.Errorf("hook command %q: permissionDecision %q is not allow, deny or ask", h.Command, o.Specific.PermissionDecision)
	}
	return res, nil
}

// updatedArgs is a hook's updatedInput as the tool's arguments: a JSON
// object; a file_path the host added for the hook (the arguments had path
// and no file_path) becomes path again.
func updatedArgs(orig json.RawMessage, updated json.RawMessage) (json.RawMessage, error) {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(updated, &in); err != nil || in == nil {
		return nil, fmt.Errorf("not a JSON object: %s", oneLineJSON(updated))
	}
	var before map[string]json.RawMessage
	_ = json.Unmarshal(orig, &before)
	if fp, ok := in["file_path"]; ok {
		if _, had := before["file_path"]; !had {
			if _, hadPath := before["path"]; hadPath {
				in["path"] = fp
				delete(in, "file_path")
			}
		}
	}
	return json.Marshal(in)
}

// askForHook puts a PreToolUse hook's "ask" to the user through the
// session's questions (ui/ask): allow lets the call go on to the user's
// approval policy, anything else — a denial, a dismissed question, nobody
// to ask — blocks it. args is the hook's replacement of the arguments, if
// it made one: the question shows it and an allowed call gets it.
func askForHook(ctx context.Context, s *sdk.Server, plugin string, h packaging.DeclHook, ev *sdk.HookEvent, reason string, args json.RawMessage) (yep.HookFireResult, error) {
	if reason == "" {
		reason = "no reason given"
	}
	shown := ev.Args
	if args != nil {
		shown = args
	}
	prompt := fmt.Sprintf("A %s hook of plugin %s asks before this call: %s\n%s %s\nAllow it?", h.ClaudeEvent, plugin, reason, claudeToolName(ev.ToolName), oneLineJSON(shown))
	ans, err := s.Ask(ctx, yep.UIAskParams{Prompt: prompt, Options: []string{host.AnswerAllow, host.AnswerDeny}})
	switch {
	case err != nil:
		return yep.HookFireResult{Decision: yep.DecisionBlock, Reason: fmt.Sprintf("the hook asks before this call (%s) and nobody could be asked: %v", reason, err)}, nil
	case ans.Cancelled || ans.Answer != host.AnswerAllow:
		return yep.HookFireResult{Decision: yep.DecisionBlock, Reason: fmt.Sprintf("the hook asks before this call (%s) and the user denied it", reason)}, nil
	}
	if args != nil {
		return yep.HookFireResult{Decision: yep.DecisionMutate, Args: args}, nil
	}
	return yep.HookFireResult{Decision: yep.DecisionAllow}, nil
}

func oneLineJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return strings.Join(strings.Fields(string(raw)), " ")
	}
	return b.String()
}
