package host

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"yolop.dev/core/yep"
)

// approvalGrant is the echo example with its manifest's approval "always"
// on echo, count and the deferred reverse; echo's text is a secret
// (writeOnly) and has a narration template.
func approvalGrant(t *testing.T) Grant {
	g := echoGrant(t, "echo")
	g.Version = "0.1.0"
	g.Hooks[0].TimeoutMS = 0 // bounded by the test's deadline; see TestSDKEchoThroughSession
	g.Tools = []ToolGrant{
		{Name: "echo", NeverDefer: true, Approval: ApprovalAlways, Risk: "high", Narration: "Echo {text}",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","writeOnly":true}}}`)},
		{Name: "count", NeverDefer: true, Streaming: true, Approval: ApprovalAlwaysAsk, Narration: "Count to {n}"},
		{Name: "reverse", Approval: ApprovalAlways, Narration: "Reverse {text}"},
	}
	return g
}

// questions is an ask sink that records every question and answers with
// answer.
type questions struct {
	mu     sync.Mutex
	asked  []yep.UIAskParams
	askers []string
	answer yep.UIAskResult
}

func (q *questions) Ask(_ context.Context, ext string, p yep.UIAskParams) (yep.UIAskResult, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.asked = append(q.asked, p)
	q.askers = append(q.askers, ext)
	return q.answer, nil
}

func (q *questions) count() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.asked)
}

func startApprovalSession(t *testing.T, opts SessionOptions) *Session {
	t.Helper()
	if opts.Grants == nil {
		opts.Grants = []Grant{approvalGrant(t)}
	}
	s := newTestSession(t, opts)
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.BeginTurn(t.Context())
	return s
}

// A manifest's "always" puts one allow/deny question naming ext@version,
// the tool, the narration and the arguments to the ask sink, asked as the
// extension; "allow" runs the call, anything else fails it with
// ErrApprovalDenied before the server sees it.
func TestManifestAlwaysAsksBeforeEveryCall(t *testing.T) {
	q := &questions{answer: yep.UIAskResult{Answer: AnswerAllow}}
	s := startApprovalSession(t, SessionOptions{Ask: q})
	var updates int
	res, err := s.CallTool(t.Context(), "count", "c1", json.RawMessage(`{"n":2,"delay_ms":1}`), func(yep.ToolUpdateParams) { updates++ })
	if err != nil || res.Output != "counted to 2" || updates != 2 {
		t.Fatalf("allowed count = %+v, %v, %d updates", res, err, updates)
	}
	if q.count() != 1 {
		t.Fatalf("asked %d questions, want 1", q.count())
	}
	p, asker := q.asked[0], q.askers[0]
	want := `Allow echo@0.1.0 to run "count" (Count to 2) with {"n":2,"delay_ms":1}?`
	if p.Prompt != want || !slices.Equal(p.Options, []string{"allow", "deny"}) || asker != "echo" {
		t.Fatalf("question %q %v asked as %q\nwant %q [allow deny] as echo", p.Prompt, p.Options, asker, want)
	}
	calls := s.Stats()[0].Calls

	for _, answer := range []yep.UIAskResult{{Answer: AnswerDeny}, {Cancelled: true}, {Answer: "yes please"}} {
		q.answer = answer
		updates = 0
		_, err = s.CallTool(t.Context(), "count", "c2", json.RawMessage(`{"n":3,"delay_ms":1}`), func(yep.ToolUpdateParams) { updates++ })
		var denied *ApprovalDeniedError
		if !errors.Is(err, ErrApprovalDenied) || !errors.As(err, &denied) || denied.By != "user" || denied.Extension != "echo" || denied.Version != "0.1.0" {
			t.Fatalf("answer %+v: err = %v, want a denial by the user", answer, err)
		}
		if !strings.Contains(err.Error(), `tool "count" of echo@0.1.0 was not run`) {
			t.Errorf("denial reads %q", err)
		}
		// The server streams every number it counts: it never ran.
		if updates != 0 || s.Stats()[0].Calls != calls {
			t.Fatalf("answer %+v: the server was called (%d updates, calls %d → %d)", answer, updates, calls, s.Stats()[0].Calls)
		}
	}
	if q.count() != 4 {
		t.Fatalf("asked %d questions, want 4", q.count())
	}
}

// A denied call of a lazy extension does not start its server: approval
// comes before the start.
func TestDenialDoesNotStartALazyServer(t *testing.T) {
	g := approvalGrant(t)
	g.Hooks, g.Prompt = nil, nil // lazy: nothing needs the server before a call
	var l eventLog
	s := newTestSession(t, SessionOptions{Grants: []Grant{g}})
	s.Subscribe(l.add)
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	// No ask sink: the question is answered cancelled, so denied.
	if _, err := s.CallTool(t.Context(), "echo", "c1", json.RawMessage(`{"text":"hi"}`), nil); !errors.Is(err, ErrApprovalDenied) {
		t.Fatalf("err = %v, want ErrApprovalDenied", err)
	}
	e, _ := s.Extension("echo")
	if st, _ := e.State(); st != StateIdle {
		t.Fatalf("state after a denied call = %s, want idle (never started)", st)
	}
	if evs := l.all(t, s); slices.Contains(types(evs), yep.EventExtensionStarted) {
		t.Fatalf("the server started: %v", types(evs))
	}
}

// The user's policy can tighten the manifest but not loosen it.
func TestPolicyTightensButNeverLoosens(t *testing.T) {
	ctx := context.Background()
	q := &questions{answer: yep.UIAskResult{Answer: AnswerAllow}}
	rules := map[string]string{}
	var seen []string
	var mu sync.Mutex
	policy := func(ti ToolInfo, ext, version string) string {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, ti.Name+" "+ti.Capability+" "+ext+"@"+version)
		return rules[ti.Name]
	}
	g := approvalGrant(t)
	g.Tools[0].Approval = "" // echo: auto
	s := startApprovalSession(t, SessionOptions{Ask: q, Policy: policy, Grants: []Grant{g}})

	// No rule: an auto tool runs without a question.
	if res, err := s.CallTool(ctx, "echo", "c0", json.RawMessage(`{"text":"free"}`), nil); err != nil || res.Output != "free" || q.count() != 0 {
		t.Fatalf("auto echo = %+v, %v, %d questions", res, err, q.count())
	}
	if len(seen) != 1 || seen[0] != "echo ext:echo echo@0.1.0" {
		t.Fatalf("policy saw %q", seen)
	}

	// deny on an auto tool: denied without asking.
	rules["echo"] = RuleDeny
	_, err := s.CallTool(ctx, "echo", "c1", json.RawMessage(`{"text":"hi"}`), nil)
	var denied *ApprovalDeniedError
	if !errors.As(err, &denied) || denied.By != "policy" || q.count() != 0 {
		t.Fatalf("policy deny = %v (%d questions)", err, q.count())
	}
	if want := `tool "echo" of echo@0.1.0 was denied by your policy (settings.toml [approval])`; !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("denial reads %q, want it to start %q", err, want)
	}

	// ask on an auto tool: asked.
	rules["echo"] = RuleAsk
	if res, err := s.CallTool(ctx, "echo", "c2", json.RawMessage(`{"text":"hi"}`), nil); err != nil || res.Output != "hi" || q.count() != 1 {
		t.Fatalf("policy ask = %+v, %v, %d questions", res, err, q.count())
	}

	// allow on an "always" tool: still asked.
	rules["count"] = RuleAllow
	if _, err := s.CallTool(ctx, "count", "c3", json.RawMessage(`{"n":1,"delay_ms":1}`), nil); err != nil || q.count() != 2 {
		t.Fatalf("policy allow on always = %v, %d questions (want 2)", err, q.count())
	}
	// deny on an "always" tool: denied by the policy, not asked.
	rules["count"] = RuleDeny
	if _, err := s.CallTool(ctx, "count", "c4", nil, nil); !errors.As(err, &denied) || denied.By != "policy" || q.count() != 2 {
		t.Fatalf("policy deny on always = %v, %d questions", err, q.count())
	}
}

// Approve, when set, decides instead of the ask sink; its error is a
// denial with that reason.
func TestApproveReplacesTheAskSink(t *testing.T) {
	ctx := context.Background()
	q := &questions{answer: yep.UIAskResult{Answer: AnswerAllow}}
	var got []ApprovalRequest
	verdict := func(context.Context) (bool, string, error) { return true, "", nil }
	approve := func(ctx context.Context, r ApprovalRequest) (bool, string, error) {
		got = append(got, r)
		return verdict(ctx)
	}
	s := startApprovalSession(t, SessionOptions{Ask: q, Approve: approve})
	if res, err := s.CallTool(ctx, "echo", "c1", json.RawMessage(`{"text":"s3cret"}`), nil); err != nil || res.Output != "s3cret" {
		t.Fatalf("approved echo = %+v, %v", res, err)
	}
	want := ApprovalRequest{Tool: "echo", Capability: "ext:echo", Extension: "echo", Version: "0.1.0", ToolCallID: "c1",
		Args: json.RawMessage(`{"text":"[redacted]"}`), Narration: "Echo [redacted]", Risk: "high", Reason: "the manifest asks before every call"}
	if len(got) != 1 || string(got[0].Args) != string(want.Args) {
		t.Fatalf("requests = %+v", got)
	}
	got[0].Args = want.Args
	if r := got[0]; r.Tool != want.Tool || r.Capability != want.Capability || r.Extension != want.Extension || r.Version != want.Version ||
		r.ToolCallID != want.ToolCallID || r.Narration != want.Narration || r.Risk != want.Risk || r.Reason != want.Reason {
		t.Fatalf("request = %+v\nwant %+v", r, want)
	}
	if q.count() != 0 {
		t.Fatalf("the ask sink was asked %d times", q.count())
	}

	verdict = func(context.Context) (bool, string, error) { return false, "not on a Friday", nil }
	if _, err := s.CallTool(ctx, "echo", "c2", json.RawMessage(`{"text":"x"}`), nil); !errors.Is(err, ErrApprovalDenied) || !strings.Contains(err.Error(), "not on a Friday") {
		t.Fatalf("refused = %v", err)
	}
	verdict = func(context.Context) (bool, string, error) { return true, "", errors.New("approver unreachable") }
	if _, err := s.CallTool(ctx, "echo", "c3", json.RawMessage(`{"text":"x"}`), nil); !errors.Is(err, ErrApprovalDenied) || !strings.Contains(err.Error(), "approver unreachable") {
		t.Fatalf("approver error = %v", err)
	}
}

// A deferred tool found through tool_search is gated like any other.
func TestFoundToolIsGated(t *testing.T) {
	ctx := context.Background()
	q := &questions{answer: yep.UIAskResult{Answer: AnswerDeny}}
	s := startApprovalSession(t, SessionOptions{Ask: q})
	found, err := s.CallTool(ctx, "tool_search", "c1", json.RawMessage(`{"query":"reverse"}`), nil)
	if err != nil || !strings.Contains(found.Output, `"name": "reverse"`) || q.count() != 0 {
		t.Fatalf("tool_search = %+v, %v (%d questions)", found, err, q.count())
	}
	if _, err := s.CallTool(ctx, "reverse", "c2", json.RawMessage(`{"text":"yolop"}`), nil); !errors.Is(err, ErrApprovalDenied) {
		t.Fatalf("denied reverse = %v", err)
	}
	q.answer = yep.UIAskResult{Answer: AnswerAllow}
	if res, err := s.CallTool(ctx, "reverse", "c3", json.RawMessage(`{"text":"yolop"}`), nil); err != nil || res.Output != "poloy" {
		t.Fatalf("allowed reverse = %+v, %v", res, err)
	}
	if q.count() != 2 || !strings.Contains(q.asked[0].Prompt, `"reverse" (Reverse yolop)`) {
		t.Fatalf("questions %+v", q.asked)
	}
}

// tool.approval sits between tool.started and tool.completed under the
// call's span: approved and denied when asked, denied by the policy, and
// blocked by a hook; a call allowed without asking has none. The question
// and tool.started's narration show a secret argument redacted.
func TestApprovalEvents(t *testing.T) {
	ctx := context.Background()
	q := &questions{answer: yep.UIAskResult{Answer: AnswerAllow}}
	g := approvalGrant(t)
	g.Tools[1].Approval, g.Tools[1].Narration = "", "" // count: auto, no template
	policy := func(ti ToolInfo, _, _ string) string {
		if ti.Name == "reverse" {
			return RuleDeny
		}
		return ""
	}
	s := startApprovalSession(t, SessionOptions{Ask: q, Grants: []Grant{g}, Policy: policy})
	var l eventLog
	s.Subscribe(l.add)

	if _, err := s.CallTool(ctx, "echo", "a", json.RawMessage(`{"text":"hunter2"}`), nil); err != nil {
		t.Fatal(err)
	}
	q.answer = yep.UIAskResult{Answer: AnswerDeny}
	if _, err := s.CallTool(ctx, "echo", "b", json.RawMessage(`{"text":"nope"}`), nil); !errors.Is(err, ErrApprovalDenied) {
		t.Fatal(err)
	}
	if _, err := s.CallTool(ctx, "reverse", "c", json.RawMessage(`{"text":"x"}`), nil); !errors.Is(err, ErrApprovalDenied) {
		t.Fatal(err)
	}
	if _, err := s.CallTool(ctx, "echo", "d", json.RawMessage(`{"text":"forbidden"}`), nil); !errors.Is(err, ErrHookBlocked) {
		t.Fatal(err)
	}
	if _, err := s.CallTool(ctx, "count", "e", json.RawMessage(`{"n":0}`), nil); err != nil {
		t.Fatal(err)
	}
	if q.count() != 2 {
		t.Fatalf("%d questions, want 2 (the hook's block and the policy's deny ask nothing)", q.count())
	}
	for _, p := range q.asked {
		if strings.Contains(p.Prompt, "hunter2") || !strings.Contains(p.Prompt, `{"text":"[redacted]"}`) || !strings.Contains(p.Prompt, "(Echo [redacted]; risk high)") {
			t.Fatalf("question %q leaks the secret or lacks the redacted argument", p.Prompt)
		}
	}

	if info, _ := yep.EventFor(yep.TraceToolApproval); !info.Forward {
		t.Error("tool.approval is not forwarded to trace consumers")
	}
	evs := l.all(t, s)
	var calls [][]Event
	var cur []Event
	for _, ev := range evs {
		switch ev.Type {
		case yep.TraceToolStarted:
			cur = []Event{ev}
		case yep.TraceToolApproval, yep.TraceHookFired:
			cur = append(cur, ev)
		case yep.TraceToolCompleted:
			calls = append(calls, append(cur, ev))
		}
	}
	type want struct {
		types    string
		approval yep.ToolApprovalData
		status   string
	}
	wants := []want{
		{"tool.started hook.fired tool.approval tool.completed", yep.ToolApprovalData{Tool: "echo", Capability: "ext:echo", Extension: "echo", Version: "0.1.0", ToolCallID: "a",
			Decision: "approved", By: "user", Reason: "the manifest asks before every call"}, yep.ToolOK},
		{"tool.started hook.fired tool.approval tool.completed", yep.ToolApprovalData{Tool: "echo", Capability: "ext:echo", Extension: "echo", Version: "0.1.0", ToolCallID: "b",
			Decision: "denied", By: "user", Reason: "the user denied the call"}, yep.ToolDenied},
		{"tool.started hook.fired tool.approval tool.completed", yep.ToolApprovalData{Tool: "reverse", Capability: "ext:echo", Extension: "echo", Version: "0.1.0", ToolCallID: "c",
			Decision: "denied", By: "policy", Reason: "your policy denies this tool"}, yep.ToolDenied},
		{"tool.started hook.fired tool.approval tool.completed", yep.ToolApprovalData{Tool: "echo", Capability: "ext:echo", Extension: "echo", Version: "0.1.0", ToolCallID: "d",
			Decision: "blocked", By: "hook", Reason: `echo: the arguments of echo contain the word "forbidden"`}, yep.ToolBlocked},
		{"tool.started hook.fired tool.completed", yep.ToolApprovalData{}, yep.ToolOK},
	}
	if len(calls) != len(wants) {
		t.Fatalf("%d calls in the events, want %d: %v", len(calls), len(wants), types(evs))
	}
	for i, w := range wants {
		c := calls[i]
		if got := strings.Join(types(c), " "); got != w.types {
			t.Errorf("call %d: events %s, want %s", i, got, w.types)
			continue
		}
		if done := c[len(c)-1].Data.(yep.ToolCompletedData); done.Status != w.status {
			t.Errorf("call %d: status %q, want %q", i, done.Status, w.status)
		}
		if w.approval.Decision == "" {
			continue
		}
		a := c[2]
		if got := a.Data.(yep.ToolApprovalData); got != w.approval {
			t.Errorf("call %d: tool.approval = %+v\nwant %+v", i, got, w.approval)
		}
		if a.SpanID != c[0].SpanID || a.TraceID != c[0].TraceID {
			t.Errorf("call %d: tool.approval not under the tool's span", i)
		}
	}
	if n := calls[0][0].Data.(yep.ToolStartedData).Narration; n != "Echo [redacted]" {
		t.Errorf("tool.started narration = %q", n)
	}
	if n := calls[4][0].Data.(yep.ToolStartedData).Narration; n != "count" {
		t.Errorf("tool.started narration without a template = %q, want the tool name", n)
	}
}

// blockingAsk holds the first question open until released; any other
// question is answered at once.
type blockingAsk struct {
	asked   chan string
	release chan yep.UIAskResult
}

func (b *blockingAsk) Ask(ctx context.Context, ext string, p yep.UIAskParams) (yep.UIAskResult, error) {
	b.asked <- p.Prompt
	select {
	case r := <-b.release:
		return r, nil
	case <-ctx.Done():
		return yep.UIAskResult{Cancelled: true}, nil
	}
}

// One question at a time: a call that needs approval while another
// call's question is open is denied at once, without a question.
func TestConcurrentApprovalIsDenied(t *testing.T) {
	ctx := context.Background()
	b := &blockingAsk{asked: make(chan string, 2), release: make(chan yep.UIAskResult, 1)}
	s := startApprovalSession(t, SessionOptions{Ask: b})
	first := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, "echo", "c1", json.RawMessage(`{"text":"one"}`), nil)
		first <- err
	}()
	<-b.asked
	_, err := s.CallTool(ctx, "echo", "c2", json.RawMessage(`{"text":"two"}`), nil)
	if !errors.Is(err, ErrApprovalDenied) || !strings.Contains(err.Error(), "another question was open") {
		t.Fatalf("second call = %v, want a denial", err)
	}
	b.release <- yep.UIAskResult{Answer: AnswerAllow}
	if err := <-first; err != nil {
		t.Fatalf("first call = %v", err)
	}
	if len(b.asked) != 0 {
		t.Fatalf("the second call was asked too: %q", <-b.asked)
	}
}

// A call cancelled while its question is open fails with the context's
// error, not as a denial.
func TestCancelWhileAsking(t *testing.T) {
	b := &blockingAsk{asked: make(chan string, 1), release: make(chan yep.UIAskResult)}
	s := startApprovalSession(t, SessionOptions{Ask: b})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, "echo", "c1", json.RawMessage(`{"text":"one"}`), nil)
		done <- err
	}()
	<-b.asked
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || errors.Is(err, ErrApprovalDenied) {
		t.Fatalf("cancelled call = %v", err)
	}
}

// The scrubber rewrites stored secrets out of the question.
func TestQuestionIsScrubbed(t *testing.T) {
	q := &questions{answer: yep.UIAskResult{Answer: AnswerDeny}}
	g := approvalGrant(t)
	g.Tools[2].InputSchema = nil
	s := startApprovalSession(t, SessionOptions{Ask: q, Grants: []Grant{g},
		Extension: ExtensionOptions{Scrub: func(s string) string { return strings.ReplaceAll(s, "tok-123", "[secret]") }}})
	if _, err := s.CallTool(t.Context(), "reverse", "c1", json.RawMessage(`{"text":"tok-123"}`), nil); !errors.Is(err, ErrApprovalDenied) {
		t.Fatal(err)
	}
	if p := q.asked[0].Prompt; strings.Contains(p, "tok-123") || !strings.Contains(p, "Reverse [secret]") || !strings.Contains(p, `{"text":"[secret]"}`) {
		t.Fatalf("question %q", p)
	}
}

func TestRedactArgs(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"user":{"type":"string"},
		"pw":{"type":"string","format":"password"},
		"key":{"type":"string","writeOnly":true},
		"tok":{"x-secret":true},
		"auth":{"type":"object","properties":{"bearer":{"type":"string","writeOnly":true},"realm":{"type":"string"}}}}}`)
	cases := []struct{ args, want string }{
		{`{"user":"ann","pw":"p","key":{"k":1},"tok":7,"auth":{"bearer":"b","realm":"r"}}`,
			`{"auth":{"bearer":"[redacted]","realm":"r"},"key":"[redacted]","pw":"[redacted]","tok":"[redacted]","user":"ann"}`},
		{`{"user":"ann"}`, `{"user":"ann"}`},
		{`[1,2]`, `[1,2]`},
	}
	for _, c := range cases {
		if got := string(redactArgs(schema, json.RawMessage(c.args))); got != c.want {
			t.Errorf("redactArgs(%s) = %s, want %s", c.args, got, c.want)
		}
	}
	if got := string(redactArgs(nil, json.RawMessage(`{"pw":"x"}`))); got != `{"pw":"x"}` {
		t.Errorf("no schema: %s", got)
	}
}

func TestNarrate(t *testing.T) {
	long := strings.Repeat("é", 100)
	cases := []struct {
		name, template, args, want string
	}{
		{"no template", "", `{"text":"x"}`, "tool"},
		{"string value", "Reverse {text}", `{"text":"yolop"}`, "Reverse yolop"},
		{"two values", "Copy {from} to {to}", `{"from":"a","to":"b"}`, "Copy a to b"},
		{"number", "Count to {n}", `{"n":3}`, "Count to 3"},
		{"object as compact JSON", "Set {opts}", `{"opts":{ "a" : [1, 2] }}`, `Set {"a":[1,2]}`},
		{"null", "Set {v}", `{"v":null}`, "Set null"},
		{"missing placeholder", "Reverse {text} in {dir}", `{"text":"x"}`, "tool"},
		{"not an object", "Reverse {text}", `"x"`, "tool"},
		{"no placeholders", "Reversing text", `null`, "Reversing text"},
		{"long value", "Say {text}", `{"text":"` + long + `"}`, "Say " + strings.Repeat("é", 79) + "…"},
		{"exactly 80 runes", "Say {text}", `{"text":"` + long[:160] + `"}`, "Say " + long[:160]},
		{"control characters", "Say {text}", `{"text":"a\nb\u001b[31mc\td"}`, "Say a b [31mc d"},
		{"control in template", "Say\n{text}", `{"text":"x"}`, "Say x"},
		{"brace that is no placeholder", "Match {a b} as {text}", `{"text":"x"}`, "Match {a b} as x"},
		{"unclosed brace", "Match {text", `{"text":"x"}`, "Match {text"},
	}
	for _, c := range cases {
		if got := Narrate(c.template, "tool", json.RawMessage(c.args)); got != c.want {
			t.Errorf("%s: Narrate(%q, %s) = %q, want %q", c.name, c.template, c.args, got, c.want)
		}
	}
}

func TestQuestionShape(t *testing.T) {
	cases := []struct {
		r    ApprovalRequest
		want string
	}{
		{ApprovalRequest{Tool: "reverse", Capability: "ext:echo", Extension: "echo", Version: "0.1.0", Args: json.RawMessage(`{"text":"x"}`), Narration: "Reverse x", Risk: "low"},
			`Allow echo@0.1.0 to run "reverse" (Reverse x; risk low) with {"text":"x"}?`},
		{ApprovalRequest{Tool: "bash", Capability: "builtin:coding", Args: json.RawMessage(`{}`), Narration: "bash"},
			`Allow builtin:coding to run "bash"?`},
		{ApprovalRequest{Tool: "t", Capability: "ext:x", Extension: "x", Args: json.RawMessage("{\"a\":\"\u2028\"}")},
			"Allow x to run \"t\" with {\"a\":\" \"}?"},
	}
	for _, c := range cases {
		if got := c.r.Question(); got != c.want {
			t.Errorf("Question() = %q, want %q", got, c.want)
		}
	}
}

// tool.started shows the arguments with the schema's secret fields
// redacted, while the server still gets them whole.
func TestToolStartedRedactsSecretArgs(t *testing.T) {
	q := &questions{answer: yep.UIAskResult{Answer: AnswerAllow}}
	s := startApprovalSession(t, SessionOptions{Ask: q})
	var l eventLog
	s.Subscribe(l.add)
	res, err := s.CallTool(t.Context(), "echo", "a", json.RawMessage(`{"text":"hunter2"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Output, "hunter2") {
		t.Fatalf("the server did not get the secret argument: %q", res.Output)
	}
	var started int
	for _, ev := range l.all(t, s) {
		if ev.Type != yep.TraceToolStarted {
			continue
		}
		started++
		d := ev.Data.(yep.ToolStartedData)
		if string(d.Args) != `{"text":"[redacted]"}` {
			t.Errorf("tool.started args = %s, want the secret redacted", d.Args)
		}
	}
	if started != 1 {
		t.Fatalf("%d tool.started events, want 1", started)
	}
}

// A built-in tool the user's policy asks about is asked as its
// capability (a built-in has no extension name), and the question names
// it.
func TestBuiltinApprovalIsAskedAsItsCapability(t *testing.T) {
	q := &questions{answer: yep.UIAskResult{Answer: AnswerAllow}}
	c := &argsCap{}
	policy := func(ti ToolInfo, _, _ string) string { return RuleAsk }
	s := NewSession(SessionOptions{Builtins: []Capability{c}, Ask: q, Policy: policy})
	t.Cleanup(s.Close)
	if _, err := s.CallTool(t.Context(), "greet", "a", json.RawMessage(`{"name":"x"}`), nil); err != nil {
		t.Fatal(err)
	}
	if q.count() != 1 || c.calls != 1 {
		t.Fatalf("%d questions, %d calls; want 1 and 1", q.count(), c.calls)
	}
	if q.askers[0] != "builtin:args" || !strings.Contains(q.asked[0].Prompt, "builtin:args") {
		t.Errorf("asked as %q with %q; want the capability builtin:args named", q.askers[0], q.asked[0].Prompt)
	}
}
