package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"yolop.dev/core"
	"yolop.dev/core/sdk"
	"yolop.dev/core/transporttest"
	"yolop.dev/core/yep"
	"yolop.dev/packaging"
	"yolop.dev/packaging/hostgrant"
)

// DeclarativeTransport serves a package loaded through the declarative
// path (a Claude Code plugin) in-process: its commands expand to their
// approved prompt, and its command hooks run as subprocesses with Claude
// Code's protocol — the event JSON on stdin; exit 0 allows (a JSON
// decision on stdout may block), exit 2 blocks with stderr as the reason,
// anything else is a failure the subscription's on_error decides. Before
// every run the files the command names are checked against the digests
// the approval pinned; a changed script is refused, never run.
//
// The server is a real YEP peer over in-memory pipes, so the session
// clamps, times out and fails it closed as it does any extension.
type DeclarativeTransport struct{}

// Start implements [core.Transport].
func (DeclarativeTransport) Start(ctx context.Context, spec core.ServerSpec) (core.Instance, error) {
	d, err := hostgrant.DeclarativeSpec(spec)
	if err != nil {
		return nil, err
	}
	info := sdk.Info{Name: spec.Name, UIAsk: hostgrant.DeclarativeAsks(d)}
	srv := transporttest.SDK(info, func(s *sdk.Server) { serveDeclarative(s, spec.Name, spec.PackageDir, d) })
	return (&transporttest.Transport{Servers: map[string]transporttest.Server{spec.Name: srv}}).Start(ctx, spec)
}

func serveDeclarative(s *sdk.Server, name, dir string, d *packaging.Declarative) {
	for _, c := range d.Commands {
		s.Command(c.Name, c.Description, func(_ context.Context, args string) (yep.CommandExecuteResult, error) {
			return yep.CommandExecuteResult{Success: true, Message: c.Expand(args)}, nil
		})
	}
	for _, m := range d.MCPServers {
		x := func(v string) string { return packaging.ExpandPluginRoot(v, dir) }
		decl := yep.MCPServerDecl{Name: m.Name, Type: m.Type, Command: x(m.Command), URL: x(m.URL), Headers: m.Headers}
		for _, a := range m.Args {
			decl.Args = append(decl.Args, x(a))
		}
		if m.Env != nil {
			decl.Env = map[string]string{}
			for k, v := range m.Env {
				decl.Env[k] = x(v)
			}
		}
		s.MCPServer(decl)
	}
	type sub struct {
		event, matcher string
		opts           sdk.HookOptions
		hooks          []packaging.DeclHook
	}
	var subs []*sub
	for _, h := range d.Hooks {
		var cur *sub
		for _, x := range subs {
			if x.event == h.Event && x.matcher == h.Matcher {
				cur = x
			}
		}
		if cur == nil {
			cur = &sub{event: h.Event, matcher: h.Matcher, opts: sdk.HookOptions{OnError: yep.HookOnErrorWarn}}
			subs = append(subs, cur)
		}
		cur.hooks = append(cur.hooks, h)
		cur.opts.TimeoutMS = max(cur.opts.TimeoutMS, h.TimeoutMS)
		if h.OnError == yep.HookOnErrorBlock {
			cur.opts.OnError = yep.HookOnErrorBlock
		}
	}
	for _, x := range subs {
		s.OnHook(x.event, x.matcher, func(ctx context.Context, ev *sdk.HookEvent) (yep.HookFireResult, error) {
			var contexts []string
			var mutated json.RawMessage
			for _, h := range x.hooks {
				res, err := runCommandHook(ctx, dir, d, h, ev)
				if err == nil && res.Decision == decisionAsk {
					res, err = askForHook(ctx, s, name, h, ev, res.Reason, res.Args)
				}
				if err != nil || res.Decision == yep.DecisionBlock {
					return res, err
				}
				if res.Decision == yep.DecisionMutate && len(res.Args) > 0 {
					// The next command of the subscription sees the
					// replacement, as the next subscription would.
					mutated, ev.Args = res.Args, res.Args
				}
				if res.Context != "" {
					contexts = append(contexts, res.Context)
				}
			}
			if mutated != nil {
				return yep.HookFireResult{Decision: yep.DecisionMutate, Args: mutated, Reason: "updatedInput of a " + packaging.ClaudeEventName(x.event) + " hook"}, nil
			}
			return yep.HookFireResult{Decision: yep.DecisionAllow, Context: strings.Join(contexts, "\n\n")}, nil
		}, x.opts)
	}
}

// claudeToolName is the Claude Code name of a yolop tool, or the tool's
// own name.
func claudeToolName(tool string) string {
	for k, v := range packaging.ClaudeToolNames {
		if v == tool {
			return k
		}
	}
	return tool
}

// claudeHookInput is the JSON a Claude Code hook reads on stdin. A file
// tool's path is also given as file_path, the name Claude Code's tools use.
func claudeHookInput(h packaging.DeclHook, ev *sdk.HookEvent) ([]byte, error) {
	cwd, _ := os.Getwd()
	in := map[string]any{"hook_event_name": h.ClaudeEvent, "cwd": cwd, "session_id": ""}
	if ev.ToolName != "" {
		in["tool_name"] = claudeToolName(ev.ToolName)
		input := map[string]any{}
		if len(ev.Args) > 0 {
			if err := json.Unmarshal(ev.Args, &input); err != nil {
				return nil, fmt.Errorf("arguments of %s: %w", ev.ToolName, err)
			}
		}
		if p, ok := input["path"].(string); ok {
			if _, has := input["file_path"]; !has {
				input["file_path"] = p
			}
		}
		in["tool_input"] = input
	}
	if ev.Result != nil {
		in["tool_response"] = ev.Result
	}
	pl := ev.Payload
	switch h.Event {
	case "session_start":
		in["source"] = pl.Source
	case "session_end":
		in["reason"] = pl.Source
	case "pre_compact":
		in["trigger"] = pl.Source
	case "user_prompt_submit":
		in["prompt"] = pl.Prompt
	case "notification":
		in["message"] = pl.Message
	case "stop":
		in["stop_hook_active"] = pl.StopHookActive
	case "post_tool_use_failure":
		in["error"] = pl.Error
	}
	return json.Marshal(in)
}

// hookOutput is the JSON a Claude Code hook may print on stdout.
type hookOutput struct {
	Continue   *bool  `json:"continue"`
	StopReason string `json:"stopReason"`
	Decision   string `json:"decision"`
	Reason     string `json:"reason"`
	Specific   struct {
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		AdditionalContext        string          `json:"additionalContext"`
		UpdatedInput             json.RawMessage `json:"updatedInput"`
	} `json:"hookSpecificOutput"`
}

// runCommandHook runs one command hook after re-verifying its pinned
// files.
func runCommandHook(ctx context.Context, dir string, d *packaging.Declarative, h packaging.DeclHook, ev *sdk.HookEvent) (yep.HookFireResult, error) {
	if err := d.VerifyPins(dir, h.Command); err != nil {
		return yep.HookFireResult{}, fmt.Errorf("hook command %q refused: %w", h.Command, err)
	}
	input, err := claudeHookInput(h, ev)
	if err != nil {
		return yep.HookFireResult{}, err
	}
	// The shell expands ${CLAUDE_PLUGIN_ROOT} from the environment, so a
	// package directory with spaces or shell characters stays one word
	// where the command quotes it, and is never parsed as shell.
	cmd := exec.CommandContext(ctx, "sh", "-c", h.Command)
	cmd.Dir, _ = os.Getwd()
	// Python writes no bytecode cache beside a hook's modules: every file
	// under hooks/ is pinned, and a new one refuses the hook.
	cmd.Env = []string{"CLAUDE_PLUGIN_ROOT=" + dir, "CLAUDE_PROJECT_DIR=" + cmd.Dir, "PYTHONDONTWRITEBYTECODE=1"}
	for _, k := range []string{"PATH", "HOME", "LANG", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(input), &stdout, &stderr
	cmd.WaitDelay = packagingHookWaitDelay
	ownGroup(cmd)
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() == 2:
		reason := strings.TrimSpace(stderr.String())
		if reason == "" {
			reason = "blocked by " + h.Command
		}
		return yep.HookFireResult{Decision: yep.DecisionBlock, Reason: reason}, nil
	default:
		return yep.HookFireResult{}, fmt.Errorf("hook command %q failed: %v: %s", h.Command, err, strings.TrimSpace(stderr.String()))
	}
	out := bytes.TrimSpace(stdout.Bytes())
	// Plain stdout of a context event is context, as in Claude Code.
	contextEvent := h.Event == "session_start" || h.Event == "user_prompt_submit"
	if len(out) == 0 || out[0] != '{' {
		if contextEvent && len(out) > 0 {
			return yep.HookFireResult{Decision: yep.DecisionAllow, Context: string(out)}, nil
		}
		return yep.HookFireResult{Decision: yep.DecisionAllow}, nil
	}
	var o hookOutput
	if err := json.Unmarshal(out, &o); err != nil {
		return yep.HookFireResult{}, fmt.Errorf("hook command %q printed malformed JSON: %v", h.Command, err)
	}
	switch {
	case o.Decision == "block" || o.Specific.PermissionDecision == "deny":
		return yep.HookFireResult{Decision: yep.DecisionBlock, Reason: firstNonEmpty(o.Reason, o.Specific.PermissionDecisionReason, "blocked by "+h.Command)}, nil
	case o.Continue != nil && !*o.Continue:
		return yep.HookFireResult{Decision: yep.DecisionBlock, Reason: firstNonEmpty(o.StopReason, "stopped by "+h.Command)}, nil
	}
	res := yep.HookFireResult{Decision: yep.DecisionAllow}
	if contextEvent {
		res.Context = o.Specific.AdditionalContext
	}
	if h.Event == yep.HookPreToolUse {
		return preToolUseDecision(h, ev, o, res)
	}
	return res, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// packagingHookWaitDelay bounds how long a hook's pipes are drained after
// it was killed for its timeout.
const packagingHookWaitDelay = 2 * time.Second

// TransportDeclarative is the transport name a declarative package's
// grant names; [Harness.Transport] serves it with [DeclarativeTransport].
const TransportDeclarative = hostgrant.TransportDeclarative
