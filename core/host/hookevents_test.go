package host

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"yolop.dev/core"
	"yolop.dev/core/yep"
)

// lifecycleGrant is a grant for testdata/hooks.py, a real Python server
// that serves only hooks, answering each event as behaviours says; every
// hook/fire it gets is appended to the returned log file.
func lifecycleGrant(t *testing.T, name string, behaviours map[string]string, hooks ...HookGrant) (Grant, string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "fired.jsonl")
	b, _ := json.Marshal(map[string]any{"name": name, "events": behaviours, "log": log})
	script, _ := filepath.Abs("testdata/hooks.py")
	return Grant{
		Name:            name,
		ProtocolVersion: "1.0",
		Server:          core.ServerSpec{Name: name, Command: "python3", Args: []string{"-u", script}, Env: map[string]string{"YEP_HOOKS_SPEC": string(b)}},
		Hooks:           hooks,
	}, log
}

// firedLog reads the hook/fire params a hooks.py server logged.
func firedLog(t *testing.T, path string) []yep.HookFireParams {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []yep.HookFireParams
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var p yep.HookFireParams
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, p)
	}
	return out
}

func payloadOf(t *testing.T, p yep.HookFireParams) yep.HookPayload {
	t.Helper()
	var pl yep.HookPayload
	if err := json.Unmarshal(p.Payload, &pl); err != nil {
		t.Fatal(err)
	}
	return pl
}

// failing is a built-in with one tool, fail, whose call fails.
type failing struct{ Base }

func (failing) Name() string { return "builtin:failing" }
func (failing) Tools() []ToolDef {
	return []ToolDef{{Name: "fail", NeverDefer: true}}
}
func (failing) CallTool(context.Context, ToolCall, func(yep.ToolUpdateParams)) (yep.ToolResult, error) {
	return yep.ToolResult{}, errors.New("disk on fire")
}

func every(events ...string) []HookGrant {
	var out []HookGrant
	for _, e := range events {
		out = append(out, HookGrant{Event: e, Matcher: "*", OnError: yep.HookOnErrorBlock})
	}
	return out
}

// TestLifecycleEventsOfARealServer fires the lifecycle events through a
// real Python server: session_start's context lands in the dynamic
// segment of the system prompt, user_prompt_submit blocks a prompt or adds
// context, stop blocks, a failed tool call fires post_tool_use_failure
// with its error, Close fires session_end, and hook.report names the
// subscriptions that never fired.
func TestLifecycleEventsOfARealServer(t *testing.T) {
	g, log := lifecycleGrant(t, "life", map[string]string{
		yep.HookSessionStart:     "context:the repo uses tabs",
		yep.HookUserPromptSubmit: "guard",
		yep.HookStop:             "block:tests were not run",
	}, every(yep.HookSessionStart, yep.HookSessionEnd, yep.HookUserPromptSubmit, yep.HookStop,
		yep.HookPreCompact, yep.HookNotification, yep.HookPostToolUseFailure)...)
	s := newTestSession(t, SessionOptions{Builtins: []Capability{failing{}}, Grants: []Grant{g}})
	var mu sync.Mutex
	var reports []yep.HookReportData
	s.Subscribe(func(ev Event) {
		if ev.Type == yep.EventHookReport {
			mu.Lock()
			reports = append(reports, ev.Data.(yep.HookReportData))
			mu.Unlock()
		}
	})
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	prompt := s.SystemPrompt(ctx, "BASE")
	want := "<" + EnvironmentContextTag + ">\n<hook event=\"session_start\">\nthe repo uses tabs\n</hook>\n</" + EnvironmentContextTag + ">"
	if !strings.HasSuffix(prompt, want) {
		t.Fatalf("system prompt = %q, want it to end with the session_start context in the dynamic segment %q", prompt, want)
	}

	out := s.FireEvent(ctx, yep.HookUserPromptSubmit, "", yep.HookPayload{Prompt: "here is my secret"})
	if !out.Blocked || out.Reason != "prompts must not carry secrets" || out.Capability != "ext:life" {
		t.Fatalf("guarded prompt = %+v, want blocked by life with the hook's reason", out)
	}
	out = s.FireEvent(ctx, yep.HookUserPromptSubmit, "", yep.HookPayload{Prompt: "hello"})
	if out.Blocked || len(out.Context) != 1 || out.Context[0] != "guard checked the prompt" {
		t.Fatalf("plain prompt = %+v, want allowed with the hook's context", out)
	}
	out = s.FireEvent(ctx, yep.HookStop, "", yep.HookPayload{Message: "done"})
	if !out.Blocked || out.Reason != "tests were not run" {
		t.Fatalf("stop = %+v, want refused with the hook's reason", out)
	}
	// A block of an event that cannot block changes nothing.
	if out := s.FireEvent(ctx, yep.HookSessionStart, "startup", yep.HookPayload{Source: "startup"}); out.Blocked {
		t.Fatalf("session_start = %+v, want never blocked", out)
	}
	if _, err := s.CallTool(ctx, "fail", "c1", json.RawMessage(`{"n":1}`), nil); err == nil {
		t.Fatal("fail succeeded")
	}
	s.Close()

	fired := firedLog(t, log)
	var events []string
	for _, p := range fired {
		events = append(events, p.Event)
		if p.Matcher != "*" {
			t.Errorf("%s fired with matcher %q, want the subscription's *", p.Event, p.Matcher)
		}
	}
	wantEvents := "session_start user_prompt_submit user_prompt_submit stop session_start post_tool_use_failure session_end"
	if got := strings.Join(events, " "); got != wantEvents {
		t.Fatalf("fired %s\nwant  %s", got, wantEvents)
	}
	if pl := payloadOf(t, fired[0]); pl.Source != "startup" {
		t.Errorf("session_start payload = %+v, want source startup", pl)
	}
	if pl := payloadOf(t, fired[1]); pl.Prompt != "here is my secret" {
		t.Errorf("user_prompt_submit payload = %+v, want the prompt", pl)
	}
	failure := fired[5]
	var args bytes.Buffer
	pl := payloadOf(t, failure)
	_ = json.Compact(&args, pl.Args)
	if failure.ToolName != "fail" || pl.ToolCallID != "c1" || !strings.Contains(pl.Error, "disk on fire") || args.String() != `{"n":1}` {
		t.Errorf("post_tool_use_failure = %+v %+v, want the tool, call id, args and error", failure, pl)
	}
	if pl := payloadOf(t, fired[6]); pl.Source != "exit" {
		t.Errorf("session_end payload = %+v, want source exit", pl)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(reports) != 1 {
		t.Fatalf("%d hook reports, want 1", len(reports))
	}
	var never []string
	for _, h := range reports[0].Hooks {
		if h.Fired != 0 || h.Capability != "ext:life" || h.Extension != "life" {
			t.Errorf("reported %+v, want only never-fired hooks of life", h)
		}
		never = append(never, h.Event)
	}
	if got := strings.Join(never, " "); got != "pre_compact notification" {
		t.Fatalf("never fired = %q, want pre_compact notification", got)
	}
}

// TestLifecycleBlockingEventsFailClosed: a user_prompt_submit hook under
// on_error "block" that times out, crashes, answers garbage or answers no
// decision blocks the prompt, naming the failure; under "warn" the same
// failures let it through. The hook report counts timeouts and failures.
func TestLifecycleBlockingEventsFailClosed(t *testing.T) {
	for _, tc := range []struct {
		behaviour, want string
		timeouts        int
	}{
		{"hang", "timed out", 1},
		{"crash", "exited", 0},
		{"garbage", "hook/fire", 0},
		{"empty", "no decision", 0},
	} {
		for _, onError := range []string{yep.HookOnErrorBlock, yep.HookOnErrorWarn} {
			t.Run(tc.behaviour+"/"+onError, func(t *testing.T) {
				t.Parallel()
				g, _ := lifecycleGrant(t, "guard", map[string]string{yep.HookUserPromptSubmit: tc.behaviour},
					HookGrant{Event: yep.HookUserPromptSubmit, Matcher: "*", TimeoutMS: 300, OnError: onError})
				s := newTestSession(t, SessionOptions{Grants: []Grant{g}})
				if err := s.Start(context.Background()); err != nil {
					t.Fatal(err)
				}
				out := s.FireEvent(context.Background(), yep.HookUserPromptSubmit, "", yep.HookPayload{Prompt: "hi"})
				if onError == yep.HookOnErrorWarn {
					if out.Blocked {
						t.Fatalf("on_error warn = %+v, want the prompt let through", out)
					}
					return
				}
				if !out.Blocked || !strings.Contains(out.Reason, "on_error is block") || !strings.Contains(out.Reason, tc.want) {
					t.Fatalf("on_error block = %+v, want blocked naming %q", out, tc.want)
				}
				rep := s.HookReport()
				if len(rep) != 1 || rep[0].Fired != 1 || rep[0].Timeouts != tc.timeouts || rep[0].Timeouts+rep[0].Failures != 1 || rep[0].LastError == "" {
					t.Fatalf("report = %+v, want one firing that failed (%d timeouts)", rep, tc.timeouts)
				}
			})
		}
	}
}
