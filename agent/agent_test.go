package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"yolop.dev/agent"
	"yolop.dev/agent/provider"
	"yolop.dev/agent/scripted"
	"yolop.dev/core"
	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/transport/stdio"
)

var bins = map[string]string{} // package → built server

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "yolop-agent-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for name, pkg := range map[string]string{"testext": "yolop.dev/agent/internal/testext", "echo": "yolop.dev/core/examples/echo", "benchext": "yolop.dev/agent/internal/benchext"} {
		bin := filepath.Join(dir, name)
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", pkg, err, out)
			os.Exit(1)
		}
		bins[name] = bin
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines leaked:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// testextGrant approves the test extension: ask, wait and the deferred
// lookup, its block-on-"forbidden" hook and its dynamic prompt.
func testextGrant() host.Grant {
	obj := func(props string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{` + props + `}}`)
	}
	return host.Grant{
		Name: "testext", ProtocolVersion: "1.0",
		Server: core.ServerSpec{Name: "testext", Command: bins["testext"]},
		Tools: []host.ToolGrant{
			{Name: "ask", Description: "Ask the user a question.", InputSchema: obj(`"question":{"type":"string"}`), NeverDefer: true},
			{Name: "wait", Description: "Wait until cancelled.", InputSchema: obj(``), NeverDefer: true, Streaming: true},
			{Name: "lookup", Description: "Look a key up in the table.", InputSchema: obj(`"key":{"type":"string"}`)},
		},
		Hooks:  []host.HookGrant{{Event: yep.HookPreToolUse, Matcher: "*"}},
		Prompt: &host.PromptGrant{Text: "fallback", Dynamic: true},
		UIAsk:  true,
	}
}

func echoGrant() host.Grant {
	return host.Grant{
		Name: "echo", ProtocolVersion: "1.0",
		Server: core.ServerSpec{Name: "echo", Command: bins["echo"]},
		Tools: []host.ToolGrant{
			{Name: "echo", Description: "Return the given text unchanged.", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`), NeverDefer: true},
			{Name: "count", Description: "Count from 1 to n.", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`), NeverDefer: true, Streaming: true},
		},
		Prompt: &host.PromptGrant{Text: "The echo extension is installed."},
	}
}

// askSink answers every ui/ask with answer and records the prompts.
type askSink struct {
	answer string
	mu     sync.Mutex
	asked  []string
}

func (a *askSink) Ask(ctx context.Context, ext string, p yep.UIAskParams) (yep.UIAskResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, ext+": "+p.Prompt)
	return yep.UIAskResult{Answer: a.answer}, nil
}

// fixture is a started session, a scripted model and an agent over both.
type fixture struct {
	s      *host.Session
	srv    *scripted.Server
	agent  *agent.Agent
	events *recorder
}

type setup struct {
	grants   []host.Grant
	builtins []host.Capability
	ask      host.AskSink
	opts     agent.Options
	sopts    scripted.Options
	wrap     func(provider.Provider) provider.Provider
	// anthropic: talk to the scripted model over Anthropic's Messages
	// API instead of Chat Completions.
	anthropic bool
}

func newFixture(t *testing.T, script string, su setup) *fixture {
	t.Helper()
	s := host.NewSession(host.SessionOptions{
		Grants: su.grants, Builtins: su.builtins, Ask: su.ask,
		Transport: stdio.New(stdio.Options{}), SessionID: "test",
	})
	t.Cleanup(s.Close)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	parsed, err := scripted.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	srv := scripted.NewServer(parsed, su.sopts)
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	var p provider.Provider = provider.OpenAI(provider.Options{BaseURL: srv.URL() + "/v1/", APIKey: "test-key"})
	if su.anthropic {
		p = provider.Anthropic(provider.Options{BaseURL: srv.URL() + "/", APIKey: "test-key"})
	}
	if su.wrap != nil {
		p = su.wrap(p)
	}
	o := su.opts
	o.Session, o.Provider, o.Model = s, p, "scripted"
	if o.BasePrompt == "" {
		o.BasePrompt = "You are yolop's test agent."
	}
	a, err := agent.New(o)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	t.Cleanup(s.Subscribe(rec.add))
	return &fixture{s: s, srv: srv, agent: a, events: rec}
}

// recorder keeps the session's events.
type recorder struct {
	mu     sync.Mutex
	events []host.Event
}

func (r *recorder) add(ev host.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

// all flushes the session's stream and returns every event so far.
func (f *fixture) all(t *testing.T) []host.Event {
	t.Helper()
	if err := f.s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.events.mu.Lock()
	defer f.events.mu.Unlock()
	return slices.Clone(f.events.events)
}

func (f *fixture) verify(t *testing.T) {
	t.Helper()
	if err := f.srv.Verify(); err != nil {
		t.Error(err)
	}
}

// lastToolResults returns the tool messages a recorded request ends with.
func lastToolResults(r scripted.Request) []string {
	var out []string
	for _, m := range r.Chat.Messages {
		if m.Role == "tool" {
			out = append(out, m.Text())
		} else {
			out = nil
		}
	}
	return out
}

// barrier is a built-in with two tools, left and right, each of which
// returns only once both have been called: run one after the other, they
// would wait for ever.
type barrier struct {
	host.Base
	arrived sync.WaitGroup
}

func newBarrier() *barrier {
	b := &barrier{}
	b.arrived.Add(2)
	return b
}

func (*barrier) Name() string { return "builtin:barrier" }
func (*barrier) Tools() []host.ToolDef {
	return []host.ToolDef{{Name: "left", NeverDefer: true}, {Name: "right", NeverDefer: true}}
}
func (b *barrier) CallTool(ctx context.Context, c host.ToolCall, _ func(yep.ToolUpdateParams)) (yep.ToolResult, error) {
	b.arrived.Done()
	done := make(chan struct{})
	go func() { b.arrived.Wait(); close(done) }()
	select {
	case <-done:
		return yep.ToolResult{Output: c.Name + " met its peer"}, nil
	case <-ctx.Done():
		return yep.ToolResult{}, ctx.Err()
	}
}

func TestParallelToolCallsRunConcurrently(t *testing.T) {
	f := newFixture(t, `{"steps": [
		{"when": {"user": "meet"}, "reply": {"tool_calls": [{"name": "left", "arguments": {}}, {"name": "right", "arguments": {}}]}},
		{"when": {"tool_result": {"tool": "right", "contains": "met its peer"}}, "reply": {"text": "Both met."}}
	]}`, setup{builtins: []host.Capability{newBarrier()}})
	res, err := f.agent.Turn(context.Background(), "meet")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Both met." || res.Stop != agent.StopDone || res.Steps != 2 || res.ToolCalls != 2 {
		t.Fatalf("turn = %+v", res)
	}
	reqs := f.srv.Requests()
	if got := lastToolResults(reqs[1]); !cmp.Equal(got, []string{"left met its peer", "right met its peer"}) {
		t.Errorf("results sent back = %q", got)
	}
	// Both calls started before either completed, under the act span.
	var act string
	started, completedFirst := 0, false
	for _, ev := range f.all(t) {
		switch ev.Type {
		case yep.TraceActStarted:
			act = ev.SpanID
		case yep.TraceToolStarted:
			started++
			if ev.ParentID != act || act == "" {
				t.Errorf("tool.started parent %q, want the act span %q", ev.ParentID, act)
			}
		case yep.TraceToolCompleted:
			if started < 2 && !completedFirst {
				t.Error("a call completed before the other started")
			}
			completedFirst = true
		}
	}
	if started != 2 {
		t.Errorf("%d tool.started, want 2", started)
	}
	f.verify(t)
}

func TestHookBlockIsSeenByTheModel(t *testing.T) {
	f := newFixture(t, `{"steps": [
		{"when": {"user": "ask"}, "reply": {"tool_calls": [{"name": "ask", "arguments": {"question": "a forbidden question"}}]}},
		{"when": {"tool_result": {"tool": "ask", "contains": "forbidden words are not allowed"}}, "reply": {"text": "The hook refused; I will ask differently."}}
	]}`, setup{grants: []host.Grant{testextGrant()}, ask: &askSink{answer: "never"}})
	res, err := f.agent.Turn(context.Background(), "ask the user")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "The hook refused; I will ask differently." {
		t.Fatalf("answer %q", res.Text)
	}
	got := lastToolResults(f.srv.Requests()[1])
	want := []string{"blocked by a hook of ext:testext: forbidden words are not allowed; ask for something else"}
	if !cmp.Equal(got, want) {
		t.Errorf("the model saw %q, want %q", got, want)
	}
	var status string
	for _, ev := range f.all(t) {
		if d, ok := ev.Data.(yep.ToolCompletedData); ok {
			status = d.Status
		}
	}
	if status != yep.ToolBlocked {
		t.Errorf("tool.completed status %q, want blocked", status)
	}
	f.verify(t)
}

func TestStablePrefixAcrossTurns(t *testing.T) {
	f := newFixture(t, `{"steps": [
		{"when": {"user": "one"}, "reply": {"text": "first"}},
		{"when": {"user": "two"}, "reply": {"text": "second"}}
	]}`, setup{grants: []host.Grant{echoGrant(), testextGrant()}})
	for _, msg := range []string{"one", "two"} {
		if _, err := f.agent.Turn(context.Background(), msg); err != nil {
			t.Fatal(err)
		}
	}
	reqs := f.srv.Requests()
	sys := func(r scripted.Request) string { return r.Chat.Messages[0].Text() }
	tag := "<" + host.EnvironmentContextTag + ">"
	s1, s2 := sys(reqs[0]), sys(reqs[1])
	i1, i2 := strings.Index(s1, tag), strings.Index(s2, tag)
	if i1 < 0 || i2 < 0 {
		t.Fatalf("no environment context:\n%s\n---\n%s", s1, s2)
	}
	if s1[:i1] != s2[:i2] {
		t.Errorf("prefix changed between turns:\n%q\n%q", s1[:i1], s2[:i2])
	}
	if !strings.HasPrefix(s1, "You are yolop's test agent.") || !strings.Contains(s1[:i1], "The echo extension is installed.") {
		t.Errorf("prefix lacks the base or the static contribution: %q", s1[:i1])
	}
	if !strings.Contains(s1[i1:], "turn 1") || !strings.Contains(s2[i2:], "turn 2") || s1[i1:] == s2[i2:] {
		t.Errorf("dynamic segments: %q, %q", s1[i1:], s2[i2:])
	}
	b1, _ := json.Marshal(reqs[0].Chat.Tools)
	b2, _ := json.Marshal(reqs[1].Chat.Tools)
	if string(b1) != string(b2) {
		t.Errorf("tool block changed between turns:\n%s\n%s", b1, b2)
	}
	f.verify(t)
}

func TestToolSearchFindsADeferredToolTheNextRequestCarries(t *testing.T) {
	f := newFixture(t, `{"steps": [
		{"when": {"user": "look up k"}, "reply": {"tool_calls": [{"name": "tool_search", "arguments": {"query": "lookup"}}]}},
		{"when": {"tool_result": {"tool": "tool_search", "contains": "lookup"}, "offered": ["lookup"]},
		 "reply": {"tool_calls": [{"name": "lookup", "arguments": {"key": "k"}}]}},
		{"when": {"tool_result": {"tool": "lookup", "contains": "value of k"}}, "reply": {"text": "k is found."}},
		{"when": {"user": "again", "offered": ["lookup"]}, "reply": {"text": "still here"}}
	]}`, setup{grants: []host.Grant{testextGrant()}, ask: &askSink{}})
	names := func(r scripted.Request) []string {
		var out []string
		for _, tl := range r.Chat.Tools {
			out = append(out, tl.Function.Name)
		}
		return out
	}
	if _, err := f.agent.Turn(context.Background(), "look up k"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.agent.Turn(context.Background(), "again"); err != nil {
		t.Fatal(err)
	}
	reqs := f.srv.Requests()
	if got := names(reqs[0]); slices.Contains(got, "lookup") || !slices.Contains(got, "tool_search") {
		t.Errorf("first request offers %v: lookup is deferred", got)
	}
	before := names(reqs[0])
	for i, r := range reqs[1:] {
		got := names(r)
		if !cmp.Equal(got, append(slices.Clone(before), "lookup")) {
			t.Errorf("request %d offers %v, want the first request's tools then lookup", i+2, got)
		}
	}
	if got := f.agent.Found(); !cmp.Equal(got, []string{"lookup"}) {
		t.Errorf("found %v", got)
	}
	f.verify(t)
}

func TestUIAskDuringATurn(t *testing.T) {
	ask := &askSink{answer: "blue"}
	f := newFixture(t, `{"steps": [
		{"when": {"user": "colour"}, "reply": {"tool_calls": [{"name": "ask", "arguments": {"question": "Which colour?"}}]}},
		{"when": {"tool_result": {"tool": "ask", "contains": "the user answered: blue"}}, "reply": {"text": "Blue it is."}}
	]}`, setup{grants: []host.Grant{testextGrant()}, ask: ask})
	res, err := f.agent.Turn(context.Background(), "pick a colour")
	if err != nil || res.Text != "Blue it is." {
		t.Fatalf("turn = %+v, %v", res, err)
	}
	if !cmp.Equal(ask.asked, []string{"testext: Which colour?"}) {
		t.Errorf("asked %q", ask.asked)
	}
	f.verify(t)
}

func TestCancelMidToolLeavesTheSessionUsable(t *testing.T) {
	f := newFixture(t, `{"steps": [
		{"when": {"user": "wait"}, "reply": {"text": "Waiting.", "tool_calls": [{"name": "wait", "arguments": {}}]}},
		{"when": {"user": "still there?"}, "reply": {"text": "Yes."}}
	]}`, setup{grants: []host.Grant{testextGrant()}, ask: &askSink{}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := f.s.Subscribe(func(ev host.Event) {
		if ev.Type == yep.EventToolUpdate {
			cancel() // the user pressed Ctrl-C while the tool ran
		}
	})
	defer stop()
	_, err := f.agent.Turn(ctx, "wait")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled turn = %v", err)
	}
	var status string
	for _, ev := range f.all(t) {
		if d, ok := ev.Data.(yep.ToolCompletedData); ok && d.Tool == "wait" {
			status = d.Status
		}
	}
	if status != yep.ToolCancelled {
		t.Errorf("wait ended %q, want cancelled", status)
	}
	// The next turn goes on: its request answers the cancelled call (the
	// scripted server refuses a call left without a result).
	res, err := f.agent.Turn(context.Background(), "still there?")
	if err != nil || res.Text != "Yes." {
		t.Fatalf("next turn = %+v, %v", res, err)
	}
	h := f.agent.History()
	if r := h[2].ToolResult; r == nil || !r.IsError || !strings.Contains(r.Content, "cancelled") {
		t.Errorf("the cancelled call was answered %+v", h[2])
	}
	f.verify(t)
}

// cancelOnDelta cancels the turn from inside the stream, on its first
// delta: the user pressed Ctrl-C while the reply streamed.
type cancelOnDelta struct {
	provider.Provider
	cancel context.CancelFunc
}

func (c cancelOnDelta) Stream(ctx context.Context, req provider.Request, on func(provider.Delta)) (provider.Result, error) {
	return c.Provider.Stream(ctx, req, func(d provider.Delta) {
		c.cancel()
		on(d)
	})
}

func TestCancelMidStream(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	f := newFixture(t, `{"steps": [
		{"when": {"user": "talk"}, "reply": {"text": "a long answer that streams word by word for a while"}},
		{"when": {"user": "again"}, "reply": {"text": "short"}}
	]}`, setup{wrap: func(p provider.Provider) provider.Provider { return cancelOnDelta{p, func() { once.Do(cancel) }} }})
	res, err := f.agent.Turn(ctx, "talk")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("turn = %+v, %v; want cancelled", res, err)
	}
	if res.Text == "a long answer that streams word by word for a while" {
		t.Error("the whole answer arrived after the cancel")
	}
	res, err = f.agent.Turn(context.Background(), "again")
	if err != nil || res.Text != "short" {
		t.Fatalf("next turn = %+v, %v", res, err)
	}
	ev := f.all(t)
	var turnErr string
	for _, e := range ev {
		if e.Type == yep.TraceTurnCompleted {
			if d, ok := e.Data.(yep.PhaseData); ok && turnErr == "" {
				turnErr = d.Error
			}
		}
	}
	if !strings.Contains(turnErr, "context canceled") {
		t.Errorf("the cancelled turn.completed says %q", turnErr)
	}
}

func TestTurnEvents(t *testing.T) {
	f := newFixture(t, `{"steps": [
		{"when": {"user": "say"}, "reply": {"text": "Echoing.", "tool_calls": [{"name": "echo", "arguments": {"text": "hi"}}],
		 "usage": {"prompt_tokens": 120, "completion_tokens": 9, "cached_tokens": 100}}},
		{"when": {"tool_result": {"tool": "echo", "contains": "hi"}}, "reply": {"text": "Done.", "usage": {"prompt_tokens": 140, "completion_tokens": 2}}}
	]}`, setup{grants: []host.Grant{echoGrant()}})
	res, err := f.agent.Turn(context.Background(), "say hi")
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage != (provider.Usage{InputTokens: 260, OutputTokens: 11, CachedInputTokens: 100}) {
		t.Errorf("usage %+v", res.Usage)
	}
	var types []string
	spans := map[string]host.Event{}
	var text strings.Builder
	for _, ev := range f.all(t) {
		if ev.Type == yep.EventTextDelta {
			text.WriteString(ev.Data.(yep.TextDeltaData).Text)
			continue
		}
		if strings.HasPrefix(ev.Type, "session.") || strings.HasPrefix(ev.Type, "extension.") {
			continue
		}
		types = append(types, ev.Type)
		spans[ev.SpanID] = ev
	}
	want := []string{"turn.started", "reason.started", "llm.generation", "reason.completed", "act.started", "tool.started", "tool.completed", "act.completed",
		"reason.started", "llm.generation", "reason.completed", "turn.completed"}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("event types (-want +got):\n%s", diff)
	}
	if text.String() != "Echoing.Done." {
		t.Errorf("streamed text %q", text.String())
	}
	var turn, trace string
	for _, ev := range f.all(t) {
		if ev.Type == yep.TraceTurnStarted {
			turn, trace = ev.SpanID, ev.TraceID
		}
	}
	for _, ev := range spans {
		if ev.TraceID != trace {
			t.Errorf("%s in trace %q, want %q", ev.Type, ev.TraceID, trace)
		}
		switch ev.Type {
		case yep.TraceReasonStarted, yep.TraceActStarted:
			if ev.ParentID != turn {
				t.Errorf("%s parent %q, want the turn %q", ev.Type, ev.ParentID, turn)
			}
		case yep.TraceLLMGeneration:
			if p := spans[ev.ParentID]; p.Type != yep.TraceReasonCompleted {
				t.Errorf("llm.generation parent is %q, want a reason span", p.Type)
			}
		case yep.TraceToolCompleted:
			if p := spans[ev.ParentID]; p.Type != yep.TraceActCompleted {
				t.Errorf("tool parent is %q, want the act span", p.Type)
			}
		}
	}
	var gens []yep.LLMGenerationData
	for _, ev := range f.all(t) {
		if d, ok := ev.Data.(yep.LLMGenerationData); ok {
			gens = append(gens, d)
		}
	}
	if len(gens) != 2 {
		t.Fatalf("%d generations", len(gens))
	}
	g := gens[0]
	if g.Provider != "openai" || g.Model != "scripted" || g.InputTokens != 120 || g.CachedInputTokens != 100 || g.OutputTokens != 9 ||
		!cmp.Equal(g.FinishReasons, []string{"tool_calls"}) || g.ResponseID == "" || g.DurationMS <= 0 {
		t.Errorf("first generation %+v", g)
	}
	f.verify(t)
}

func TestBounds(t *testing.T) {
	script := `{"steps": [{"repeat": true, "when": {"any": true}, "reply": {"tool_calls": [{"name": "echo", "arguments": {"text": "again"}}], "usage": {"prompt_tokens": 10, "completion_tokens": 7}}}]}`
	t.Run("steps", func(t *testing.T) {
		f := newFixture(t, script, setup{grants: []host.Grant{echoGrant()}, opts: agent.Options{MaxSteps: 3}})
		res, err := f.agent.Turn(context.Background(), "loop")
		if err != nil || res.Stop != agent.StopMaxSteps || res.Steps != 3 || res.ToolCalls != 3 {
			t.Fatalf("turn = %+v, %v", res, err)
		}
	})
	t.Run("tokens", func(t *testing.T) {
		f := newFixture(t, script, setup{grants: []host.Grant{echoGrant()}, opts: agent.Options{MaxTurnTokens: 14}})
		res, err := f.agent.Turn(context.Background(), "loop")
		if err != nil || res.Stop != agent.StopMaxTokens || res.Steps != 2 {
			t.Fatalf("turn = %+v, %v", res, err)
		}
	})
}

func TestRateLimitedThenAnswered(t *testing.T) {
	f := newFixture(t, `{"steps": [{"when": {"user": ""}, "reply": {"text": "after the wait"}}]}`,
		setup{sopts: scripted.Options{RateLimit: 1, RetryAfter: 0}})
	res, err := f.agent.Turn(context.Background(), "hello")
	if err != nil || res.Text != "after the wait" {
		t.Fatalf("turn = %+v, %v", res, err)
	}
	var statuses []int
	for _, r := range f.srv.Requests() {
		statuses = append(statuses, r.Status)
	}
	if !cmp.Equal(statuses, []int{429, 200}) {
		t.Errorf("statuses %v", statuses)
	}
}

func TestProviderFailureEndsTheTurnWithAdvice(t *testing.T) {
	f := newFixture(t, `{"steps": [{"when": {"any": true}, "reply": {"text": "never"}}]}`,
		setup{sopts: scripted.Options{APIKey: "another-key"}})
	_, err := f.agent.Turn(context.Background(), "hello")
	if !errors.Is(err, provider.ErrAuth) || strings.Contains(err.Error(), "test-key") {
		t.Fatalf("turn error = %v", err)
	}
	if _, err := f.agent.Turn(context.Background(), "hello"); !errors.Is(err, provider.ErrAuth) {
		t.Fatalf("second turn = %v", err)
	}
}

// big is a built-in whose tool returns n bytes of output.
type big struct {
	host.Base
	n int
}

func (*big) Name() string { return "builtin:big" }
func (*big) Tools() []host.ToolDef {
	return []host.ToolDef{{Name: "big", Description: "Return a lot of output.", NeverDefer: true}}
}
func (b *big) CallTool(ctx context.Context, c host.ToolCall, _ func(yep.ToolUpdateParams)) (yep.ToolResult, error) {
	return yep.ToolResult{Output: strings.Repeat("x", b.n)}, nil
}

// toolTexts returns the text of every tool message of a request.
func toolTexts(r scripted.Request) []string {
	var out []string
	for _, m := range r.Chat.Messages {
		if m.Role == "tool" {
			out = append(out, m.Text())
		}
	}
	return out
}

func userTexts(r scripted.Request) []string {
	var out []string
	for _, m := range r.Chat.Messages {
		if m.Role == "user" {
			out = append(out, m.Text())
		}
	}
	return out
}

// TestContextWindowElidesThenDrops runs turns whose tool output outgrows a
// small window: old results are elided first, the unseen one never, and
// when eliding is not enough the oldest turn goes whole; what was elided
// stays elided, so the requests after share their prefix.
func TestContextWindowElidesThenDrops(t *testing.T) {
	out := strings.Repeat("x", 2000) // 500 tokens at four bytes a token
	turn := `{"when": {"user": ""}, "reply": {"tool_calls": [{"name": "big", "arguments": {}}]}},
		{"when": {"tool_result": {"tool": "big"}}, "reply": {"text": "ok"}}`
	script := `{"steps": [` + turn + `,` + turn + `,` + turn + `]}`
	// Room for about 1,480 tokens of messages: two results fit, three do
	// not.
	f := newFixture(t, script, setup{builtins: []host.Capability{&big{n: 2000}}, opts: agent.Options{ContextWindow: 1600, MaxTokens: 100}})
	for i := range 3 {
		if _, err := f.agent.Turn(context.Background(), fmt.Sprintf("turn %d", i+1)); err != nil {
			t.Fatal(err)
		}
	}
	reqs := f.srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d requests", len(reqs))
	}
	// Turn 2's second request holds two results: they fit.
	if got := toolTexts(reqs[3]); !cmp.Equal(got, []string{out, out}) {
		t.Errorf("turn 2 sent %d results, elided %v", len(got), slices.Contains(got, agent.Elided))
	}
	// Turn 3's second request would hold three: the oldest is elided, the
	// one the model has not seen is whole.
	if got := toolTexts(reqs[5]); !cmp.Equal(got, []string{agent.Elided, out, out}) {
		t.Errorf("turn 3 sent %q", summarize(got))
	}
	// In room for about 520, even elided results do not fit beside the
	// unseen one: the older turns go whole.
	f2 := newFixture(t, script, setup{builtins: []host.Capability{&big{n: 2000}}, opts: agent.Options{ContextWindow: 640, MaxTokens: 100}})
	for i := range 3 {
		if _, err := f2.agent.Turn(context.Background(), fmt.Sprintf("turn %d", i+1)); err != nil {
			t.Fatal(err)
		}
	}
	reqs = f2.srv.Requests()
	last := reqs[len(reqs)-1]
	if got := userTexts(last); !cmp.Equal(got, []string{"turn 3"}) {
		t.Errorf("the last request kept the turns %q", got)
	}
	if got := toolTexts(last); got[len(got)-1] != out {
		t.Errorf("the unseen result was cut: %q", summarize(got))
	}
	f.verify(t)
	f2.verify(t)
}

func summarize(texts []string) []string {
	out := make([]string, len(texts))
	for i, s := range texts {
		if len(s) > 20 {
			s = fmt.Sprintf("%s… (%d bytes)", s[:10], len(s))
		}
		out[i] = s
	}
	return out
}

// TestContextTooLongRetriesOnceWithRoom: the provider says the
// conversation is too long although the count said it fit; the loop makes
// room and asks once more.
func TestContextTooLongRetriesOnceWithRoom(t *testing.T) {
	out := strings.Repeat("x", 2000)
	f := newFixture(t, `{"steps": [
		{"when": {"user": "one"}, "reply": {"tool_calls": [{"name": "big", "arguments": {}}]}},
		{"when": {"tool_result": {"tool": "big"}}, "reply": {"text": "ok"}},
		{"when": {"user": "two"}, "reply": {"error": {"status": 400, "code": "context_length_exceeded", "message": "This model's maximum context length is 2000 tokens."}}},
		{"when": {"user": "two"}, "reply": {"text": "fits now"}},
		{"when": {"user": "three"}, "reply": {"error": {"status": 400, "code": "context_length_exceeded", "message": "still too long"}}},
		{"when": {"user": "three"}, "reply": {"error": {"status": 400, "code": "context_length_exceeded", "message": "still too long"}}}
	]}`, setup{builtins: []host.Capability{&big{n: 2000}}, opts: agent.Options{ContextWindow: 2200, MaxTokens: 100}})
	if _, err := f.agent.Turn(context.Background(), "one"); err != nil {
		t.Fatal(err)
	}
	res, err := f.agent.Turn(context.Background(), "two")
	if err != nil || res.Text != "fits now" {
		t.Fatalf("turn two = %+v, %v", res, err)
	}
	reqs := f.srv.Requests()
	if got := toolTexts(reqs[2]); !cmp.Equal(got, []string{out}) {
		t.Errorf("first try sent %q", summarize(got))
	}
	if got := toolTexts(reqs[3]); !cmp.Equal(got, []string{agent.Elided}) {
		t.Errorf("the retry sent %q, want the old output elided", summarize(got))
	}
	// Once only: a second refusal ends the turn with the provider's advice.
	if _, err := f.agent.Turn(context.Background(), "three"); !errors.Is(err, provider.ErrContextTooLong) {
		t.Fatalf("turn three = %v", err)
	}
	f.verify(t)
}

// TestTurnOverAnthropic runs a turn with parallel calls and a hook's block
// through the Anthropic provider: the loop is the same whatever the API.
func TestTurnOverAnthropic(t *testing.T) {
	f := newFixture(t, `{"steps": [
		{"when": {"user": "both"}, "reply": {"text": "Two at once.", "tool_calls": [{"name": "echo", "arguments": {"text": "hi"}}, {"name": "ask", "arguments": {"question": "forbidden?"}}]}},
		{"when": {"tool_result": {"tool": "ask", "contains": "forbidden words are not allowed"}}, "reply": {"text": "One was refused."}}
	]}`, setup{grants: []host.Grant{echoGrant(), testextGrant()}, ask: &askSink{}, anthropic: true})
	res, err := f.agent.Turn(context.Background(), "both")
	if err != nil || res.Text != "One was refused." || res.ToolCalls != 2 {
		t.Fatalf("turn = %+v, %v", res, err)
	}
	reqs := f.srv.Requests()
	if reqs[0].Messages == nil || reqs[0].Path != "/v1/messages" {
		t.Fatalf("first request went to %s", reqs[0].Path)
	}
	var gen yep.LLMGenerationData
	for _, ev := range f.all(t) {
		if d, ok := ev.Data.(yep.LLMGenerationData); ok {
			gen = d
		}
	}
	if gen.Provider != "anthropic" || !cmp.Equal(gen.FinishReasons, []string{"stop"}) {
		t.Errorf("last generation %+v", gen)
	}
	f.verify(t)
}

// TestCountsOnlyNearTheWindow: a token covers at least a byte, so a
// request whose bytes fit the window is sent without counting (a real
// tokenizer's first use costs a noticeable load); one that might not fit
// is counted.
func TestCountsOnlyNearTheWindow(t *testing.T) {
	var mu sync.Mutex
	counted := 0
	count := func(s string) int {
		mu.Lock()
		defer mu.Unlock()
		counted++
		return (len(s) + 3) / 4
	}
	turn := `{"when": {"user": ""}, "reply": {"tool_calls": [{"name": "big", "arguments": {}}]}},
		{"when": {"tool_result": {"tool": "big"}}, "reply": {"text": "ok"}}`
	f := newFixture(t, `{"steps": [`+turn+`,`+turn+`]}`, setup{builtins: []host.Capability{&big{n: 2000}},
		opts: agent.Options{ContextWindow: 2100 + 8192, Count: count}})
	if _, err := f.agent.Turn(context.Background(), "far from the window"); err != nil {
		t.Fatal(err)
	}
	if counted != 0 {
		t.Fatalf("counted %d texts of a request far from the window", counted)
	}
	if _, err := f.agent.Turn(context.Background(), "near it"); err != nil {
		t.Fatal(err)
	}
	if counted == 0 {
		t.Fatal("a request whose bytes exceed the window was not counted")
	}
	if got := toolTexts(f.srv.Requests()[3]); len(got) != 2 || got[0] == agent.Elided {
		t.Errorf("counted, the request fits without eliding: %q", summarize(got))
	}
	f.verify(t)
}

// TestRetryAfterIsHonoured: a 429 asking for a one-second wait is retried
// after at least that second (the SDKs' own first backoff is at most half
// of it), over both APIs, and the turn then completes.
func TestRetryAfterIsHonoured(t *testing.T) {
	for _, anthropic := range []bool{false, true} {
		t.Run(fmt.Sprintf("anthropic=%v", anthropic), func(t *testing.T) {
			f := newFixture(t, `{"steps": [{"when": {"user": ""}, "reply": {"text": "after the wait"}}]}`,
				setup{sopts: scripted.Options{RateLimit: 1, RetryAfter: 1}, anthropic: anthropic})
			start := time.Now()
			res, err := f.agent.Turn(context.Background(), "hello")
			waited := time.Since(start)
			if err != nil || res.Text != "after the wait" {
				t.Fatalf("turn = %+v, %v", res, err)
			}
			if waited < time.Second {
				t.Errorf("retried after %v, before the Retry-After of 1s", waited)
			}
			var statuses []int
			for _, r := range f.srv.Requests() {
				statuses = append(statuses, r.Status)
			}
			if !cmp.Equal(statuses, []int{429, 200}) {
				t.Errorf("statuses %v", statuses)
			}
		})
	}
}
