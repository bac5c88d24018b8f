package agent_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/agent"
	"yolop.dev/core"
	"yolop.dev/core/host"
	"yolop.dev/core/yep"
)

// hooksGrant approves core/host's testdata/hooks.py, a real Python server
// serving only hooks, answering each event as behaviours says and logging
// every hook/fire to the returned file.
func hooksGrant(t *testing.T, behaviours map[string]string, hooks ...host.HookGrant) (host.Grant, string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "fired.jsonl")
	b, _ := json.Marshal(map[string]any{"name": "guard", "events": behaviours, "log": log})
	script, err := filepath.Abs("../core/host/testdata/hooks.py")
	if err != nil {
		t.Fatal(err)
	}
	return host.Grant{
		Name: "guard", ProtocolVersion: "1.0",
		Server: core.ServerSpec{Name: "guard", Command: "python3", Args: []string{"-u", script}, Env: map[string]string{"YEP_HOOKS_SPEC": string(b)}},
		Hooks:  hooks,
	}, log
}

func subscribed(onError string, events ...string) []host.HookGrant {
	var out []host.HookGrant
	for _, e := range events {
		out = append(out, host.HookGrant{Event: e, Matcher: "*", OnError: onError, TimeoutMS: 300})
	}
	return out
}

type fired struct {
	Event   string          `json:"event"`
	Tool    string          `json:"toolName"`
	Payload yep.HookPayload `json:"payload"`
}

func firedHooks(t *testing.T, path string) []fired {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []fired
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var p fired
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// failTool is a built-in whose one tool, fail, fails.
type failTool struct{ host.Base }

func (failTool) Name() string { return "builtin:fail" }
func (failTool) Tools() []host.ToolDef {
	return []host.ToolDef{{Name: "fail", Description: "Always fails.", NeverDefer: true}}
}
func (failTool) CallTool(context.Context, host.ToolCall, func(yep.ToolUpdateParams)) (yep.ToolResult, error) {
	return yep.ToolResult{}, errors.New("disk on fire")
}

// TestLifecycleHooksInTurns runs turns against the scripted model with a
// real Python hook server: session_start's context reaches the system
// prompt, user_prompt_submit blocks a message before the model sees it and
// adds context to another, a failed tool call fires
// post_tool_use_failure, stop refuses the end of the turn once (the model
// reads the reason and the second refusal is not honoured), pre_compact
// fires before context is dropped, and notification fires as the agent
// waits for the user.
func TestLifecycleHooksInTurns(t *testing.T) {
	g, log := hooksGrant(t, map[string]string{
		yep.HookSessionStart:     "context:the project indents with tabs",
		yep.HookUserPromptSubmit: "guard",
		yep.HookStop:             "block:run the tests first",
	}, subscribed(yep.HookOnErrorBlock, yep.HookSessionStart, yep.HookUserPromptSubmit, yep.HookStop,
		yep.HookPreCompact, yep.HookNotification, yep.HookPostToolUseFailure)...)
	f := newFixture(t, `{"steps": [
		{"when": {"user": "hello"}, "reply": {"tool_calls": [{"name": "fail", "arguments": {}}]}},
		{"when": {"tool_result": {"tool": "fail", "contains": "disk on fire"}}, "reply": {"text": "done"}},
		{"when": {"user": "refused the end of the turn: run the tests first"}, "reply": {"text": "tests ran"}},
		{"when": {"user": "two"}, "reply": {"error": {"status": 400, "code": "context_length_exceeded", "message": "too long"}}},
		{"when": {"user": "two"}, "reply": {"text": "second"}},
		{"when": {"user": "refused the end of the turn"}, "reply": {"text": "second, tested"}}
	]}`, setup{grants: []host.Grant{g}, builtins: []host.Capability{failTool{}}})

	_, err := f.agent.Turn(context.Background(), "here is my secret")
	var pb *agent.PromptBlockedError
	if !errors.As(err, &pb) || !errors.Is(err, host.ErrHookBlocked) || pb.Reason != "prompts must not carry secrets" || pb.Capability != "ext:guard" {
		t.Fatalf("secret message = %v, want blocked by the hook", err)
	}
	if n := len(f.srv.Requests()); n != 0 || len(f.agent.History()) != 0 {
		t.Fatalf("a blocked message reached the model (%d requests) or the conversation (%d messages)", n, len(f.agent.History()))
	}

	res, err := f.agent.Turn(context.Background(), "hello")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "tests ran" || res.Steps != 3 || res.Stop != agent.StopDone {
		t.Fatalf("turn = %+v, want the model to answer the stop hook's refusal once", res)
	}
	reqs := f.srv.Requests()
	system, user := reqs[0].Chat.Messages[0].Text(), reqs[0].Chat.Messages[1].Text()
	if !strings.Contains(system, "<hook event=\"session_start\">\nthe project indents with tabs\n</hook>") {
		t.Errorf("system prompt lacks session_start's context:\n%s", system)
	}
	if want := "<hook event=\"user_prompt_submit\">\nguard checked the prompt\n</hook>\n\nhello"; user != want {
		t.Errorf("user message = %q, want %q", user, want)
	}
	if _, err := f.agent.Turn(context.Background(), "two"); err != nil {
		t.Fatal(err)
	}
	f.verify(t)

	var got []string
	for _, h := range firedHooks(t, log) {
		got = append(got, h.Event)
		switch h.Event {
		case yep.HookPostToolUseFailure:
			if h.Tool != "fail" || !strings.Contains(h.Payload.Error, "disk on fire") {
				t.Errorf("post_tool_use_failure = %+v", h)
			}
		case yep.HookNotification:
			if h.Payload.Source != host.NotifyIdle {
				t.Errorf("notification = %+v, want source idle", h)
			}
		case yep.HookPreCompact:
			if h.Payload.Source != "auto" {
				t.Errorf("pre_compact = %+v, want source auto", h)
			}
		}
	}
	want := "session_start user_prompt_submit user_prompt_submit post_tool_use_failure stop stop notification " +
		"user_prompt_submit pre_compact stop stop notification"
	if strings.Join(got, " ") != want {
		t.Fatalf("fired %s\nwant  %s", strings.Join(got, " "), want)
	}
	stops := 0
	for _, h := range firedHooks(t, log) {
		if h.Event == yep.HookStop {
			// Each turn: refused once, then the end with stop_hook_active.
			if h.Payload.StopHookActive != (stops%2 == 1) {
				t.Errorf("stop %d: stop_hook_active %v", stops, h.Payload.StopHookActive)
			}
			stops++
		}
	}
	if stops != 4 {
		t.Errorf("%d stop firings, want 4", stops)
	}
}

// TestLifecycleHooksFailClosedInTurns: under on_error "block" a
// user_prompt_submit hook that times out or crashes blocks the message,
// and a crashing stop hook refuses the end of the turn once.
func TestLifecycleHooksFailClosedInTurns(t *testing.T) {
	for _, tc := range []struct{ behaviour, want string }{{"hang", "timed out"}, {"crash", "exited"}} {
		t.Run("user_prompt_submit/"+tc.behaviour, func(t *testing.T) {
			t.Parallel()
			g, _ := hooksGrant(t, map[string]string{yep.HookUserPromptSubmit: tc.behaviour}, subscribed(yep.HookOnErrorBlock, yep.HookUserPromptSubmit)...)
			f := newFixture(t, `{"steps": [{"when": {"any": true}, "reply": {"text": "never asked"}}]}`, setup{grants: []host.Grant{g}})
			_, err := f.agent.Turn(context.Background(), "hello")
			var pb *agent.PromptBlockedError
			if !errors.As(err, &pb) || !strings.Contains(pb.Reason, "on_error is block") || !strings.Contains(pb.Reason, tc.want) {
				t.Fatalf("turn = %v, want the message blocked naming %q", err, tc.want)
			}
			if len(f.srv.Requests()) != 0 {
				t.Fatal("the model was asked")
			}
		})
	}
	t.Run("stop/crash", func(t *testing.T) {
		t.Parallel()
		g, _ := hooksGrant(t, map[string]string{yep.HookStop: "crash"}, subscribed(yep.HookOnErrorBlock, yep.HookStop)...)
		f := newFixture(t, `{"steps": [
			{"when": {"user": "hello"}, "reply": {"text": "done"}},
			{"when": {"user": "on_error is block"}, "reply": {"text": "still done"}}
		]}`, setup{grants: []host.Grant{g}})
		res, err := f.agent.Turn(context.Background(), "hello")
		if err != nil || res.Text != "still done" || res.Steps != 2 {
			t.Fatalf("turn = %+v, %v; want one refusal by the failing stop hook", res, err)
		}
		f.verify(t)
	})
}
