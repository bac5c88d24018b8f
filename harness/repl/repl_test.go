package repl_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"yolop.dev/core/yep"
	"yolop.dev/harness"
	"yolop.dev/harness/internal/echotest"
	"yolop.dev/harness/manager"
	"yolop.dev/harness/repl"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

type event struct {
	kind   string
	fields map[string]any
	text   string
}

// recorder is an Output that keeps what it is given; onRaw, if set, sees
// each streamed line. It keeps the commands' events and tool.update; the
// session's other typed events only when lifecycle is set.
type recorder struct {
	mu        sync.Mutex
	events    []event
	raw       []string
	onRaw     func(string)
	lifecycle bool
}

func (r *recorder) Event(kind string, fields map[string]any, text string) {
	if _, typed := yep.EventFor(kind); typed && kind != yep.EventToolUpdate && !r.lifecycle {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, event{kind, fields, text})
}

func (r *recorder) Raw(text string) {
	r.mu.Lock()
	r.raw = append(r.raw, text)
	f := r.onRaw
	r.mu.Unlock()
	if f != nil {
		f(text)
	}
}

// take returns and forgets what was recorded.
func (r *recorder) take() ([]event, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev, raw := r.events, r.raw
	r.events, r.raw = nil, nil
	return ev, raw
}

func kinds(evs []event) []string {
	var k []string
	for _, e := range evs {
		k = append(k, e.kind)
	}
	return k
}

// session starts a session over the echo example, installed and enabled
// in a fresh config directory.
func session(t *testing.T) (*harness.Harness, *harness.Session) {
	t.Helper()
	ctx := context.Background()
	h, err := harness.Open(ctx, harness.Options{ConfigDir: echotest.Installed(t)})
	if err != nil {
		t.Fatal(err)
	}
	s, warnings := h.NewSession(ctx, harness.SessionOptions{})
	if len(warnings) > 0 {
		t.Fatalf("warnings: %v", warnings)
	}
	t.Cleanup(s.Close)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return h, s
}

// TestCommands drives every kind of command line through a real session
// over the echo example and checks the events each reports.
func TestCommands(t *testing.T) {
	h, s := session(t)
	out := &recorder{}
	r := repl.New(repl.Options{Session: s.Session, Out: out, BasePrompt: "BASE PROMPT",
		Manager: func() (*manager.Manager, error) { return h.Manager(), nil },
		Paint:   func(w string) string { return "<" + strings.TrimSpace(w) + ">" }})
	ctx := context.Background()

	for _, line := range []string{"", "   ", "# a comment"} {
		if r.Run(ctx, line) {
			t.Fatalf("%q quit", line)
		}
	}
	if ev, _ := out.take(); len(ev) != 0 {
		t.Fatalf("blank and comment lines reported %v", kinds(ev))
	}

	r.Run(ctx, "/tools")
	ev, _ := out.take()
	var names []string
	for _, e := range ev {
		names = append(names, e.fields["name"].(string))
	}
	if !slices.Contains(names, "echo") || !slices.Contains(names, "count") {
		t.Fatalf("/tools listed %v", names)
	}

	r.Run(ctx, `/call echo {"text":"round trip"}`)
	ev, _ = out.take()
	if len(ev) != 1 || ev[0].kind != "result" || ev[0].fields["output"] != "round trip" || ev[0].text != "round trip" {
		t.Fatalf("/call echo = %+v", ev)
	}

	r.Run(ctx, `/call count {"n":3,"delay_ms":1}`)
	ev, raw := out.take()
	if got := strings.Join(raw, ""); got != "1\n2\n3\n" {
		t.Fatalf("streamed text = %q", got)
	}
	if k := kinds(ev); !slices.Equal(k, []string{"tool.update", "tool.update", "tool.update", "result"}) || ev[0].text != "" {
		t.Fatalf("/call count events = %v (an update must have no text line of its own)", k)
	}

	for line, want := range map[string]string{
		"/call nosuch {}":      "/tools lists them",
		"/call echo {not json": "not valid JSON",
		"/call":                "usage: /call",
		"/frobnicate":          `unknown command "/frobnicate"; /help lists them`,
		"/echo:nosuch":         "/commands lists them",
		"/skills nosuch":       "/skills lists them",
	} {
		r.Run(ctx, line)
		ev, _ = out.take()
		if len(ev) != 1 || ev[0].kind != "error" || !strings.Contains(ev[0].text, want) {
			t.Fatalf("%s = %+v, want an error saying %q", line, ev, want)
		}
	}

	r.Run(ctx, "/echo:greet world")
	ev, _ = out.take()
	if len(ev) != 1 || ev[0].kind != "command_result" || !strings.Contains(ev[0].text, "world") {
		t.Fatalf("/echo:greet = %+v", ev)
	}

	r.Run(ctx, "/prompt")
	ev, _ = out.take()
	if len(ev) != 1 || !strings.HasPrefix(ev[0].text, "BASE PROMPT") || !strings.Contains(ev[0].text, "echo extension is installed") {
		t.Fatalf("/prompt = %+v", ev)
	}

	r.Run(ctx, "/status")
	ev, _ = out.take()
	if len(ev) != 1 || ev[0].fields["extension"] != "echo" || !strings.Contains(ev[0].text, "<ready>") || ev[0].fields["calls"].(int64) < 2 {
		t.Fatalf("/status = %+v (the state word painted, the calls counted)", ev)
	}
	if ev[0].fields["protocol_violations"] != int64(0) || !strings.Contains(ev[0].text, " violations=0 ") {
		t.Fatalf("/status = %+v, want the protocol violations counted (none)", ev)
	}

	// /disable and /enable go through the manager: the settings change.
	r.Run(ctx, "/disable echo")
	ev, _ = out.take()
	if len(ev) != 1 || ev[0].kind != "disabled" || ev[0].fields["live"] != true {
		t.Fatalf("/disable echo = %+v", ev)
	}
	if on, err := h.Settings().Enabled(ctx); err != nil || slices.Contains(on, "echo") {
		t.Fatalf("after /disable the settings enable %v (%v)", on, err)
	}
	r.Run(ctx, "/enable echo")
	ev, _ = out.take()
	if len(ev) != 1 || ev[0].kind != "enabled" {
		t.Fatalf("/enable echo = %+v", ev)
	}
	if on, err := h.Settings().Enabled(ctx); err != nil || !slices.Contains(on, "echo") {
		t.Fatalf("after /enable the settings enable %v (%v)", on, err)
	}

	if c := r.Completions("/ca"); !slices.Contains(c, "/call") || !slices.Contains(c, "/echo:greet") {
		t.Fatalf("completions of /ca = %v", c)
	}
	if c := r.Completions("/call "); !slices.Contains(c, "echo") {
		t.Fatalf("completions of /call = %v", c)
	}
	if !r.Run(ctx, "/quit") || !r.Run(ctx, "/exit") {
		t.Fatal("/quit and /exit did not quit")
	}
}

// TestCancelledCall: cancelling the context of a running call reports it
// cancelled, and the session goes on.
func TestCancelledCall(t *testing.T) {
	_, s := session(t)
	ctx, cancel := context.WithCancel(context.Background())
	out := &recorder{onRaw: func(line string) {
		if line == "2\n" {
			cancel()
		}
	}}
	r := repl.New(repl.Options{Session: s.Session, Out: out})
	r.Run(ctx, `/call count {"n":100000,"delay_ms":1}`)
	ev, _ := out.take()
	if last := ev[len(ev)-1]; last.kind != "cancelled" || last.text != "cancelled" {
		t.Fatalf("a cancelled call ended with %+v", last)
	}
	r.Run(context.Background(), `/call echo {"text":"still here"}`)
	ev, _ = out.take()
	if len(ev) != 1 || ev[0].fields["output"] != "still here" {
		t.Fatalf("the call after the cancel = %+v", ev)
	}
	r.Run(context.Background(), "/disable echo")
	ev, _ = out.take()
	if len(ev) != 1 || ev[0].kind != "error" || !strings.Contains(ev[0].text, "only those loaded in place") {
		t.Fatalf("/disable without a manager = %+v", ev)
	}
}

// TestFailedCallNamesTheCall: a tool call that fails reports an "error"
// event carrying the call's call_id and tool, as a result or an update
// does, so a --json reader can tell which call failed.
func TestFailedCallNamesTheCall(t *testing.T) {
	_, s := session(t)
	out := &recorder{}
	r := repl.New(repl.Options{Session: s.Session, Out: out})
	for _, tc := range []struct{ line, tool, want string }{
		{`/call echo {"text":5}`, "echo", "text"},
		{`/call nosuch {}`, "nosuch", "/tools lists them"},
	} {
		r.Run(context.Background(), tc.line)
		ev, _ := out.take()
		if len(ev) != 1 || ev[0].kind != "error" || !strings.Contains(ev[0].text, tc.want) {
			t.Fatalf("%s = %+v, want one error saying %q", tc.line, ev, tc.want)
		}
		f := ev[0].fields
		if f["tool"] != tc.tool || !strings.HasPrefix(fmt.Sprint(f["call_id"]), "call-") || f["message"] == "" {
			t.Errorf("%s: error fields = %v, want tool %q, a call_id and the message", tc.line, f, tc.tool)
		}
	}
}

// TestDisableAndEnableShowAtOnce: after /disable the extension's tools
// leave /tools at once, agreeing with /call, which no longer finds them;
// after /enable they are back in both.
func TestDisableAndEnableShowAtOnce(t *testing.T) {
	h, s := session(t)
	out := &recorder{}
	r := repl.New(repl.Options{Session: s.Session, Out: out,
		Manager: func() (*manager.Manager, error) { return h.Manager(), nil }})
	ctx := context.Background()
	listed := func() []string {
		r.Run(ctx, "/tools")
		ev, _ := out.take()
		var names []string
		for _, e := range ev {
			names = append(names, e.fields["name"].(string))
		}
		return names
	}

	r.Run(ctx, "/disable echo")
	if ev, _ := out.take(); len(ev) != 1 || ev[0].kind != "disabled" {
		t.Fatalf("/disable echo = %+v", ev)
	}
	if names := listed(); slices.Contains(names, "echo") {
		t.Errorf("/tools after /disable echo lists %v, want no echo", names)
	}
	r.Run(ctx, `/call echo {"text":"hi"}`)
	if ev, _ := out.take(); len(ev) != 1 || ev[0].kind != "error" || !strings.Contains(ev[0].text, `no tool "echo"`) {
		t.Fatalf("/call echo after /disable = %+v, want no such tool", ev)
	}

	r.Run(ctx, "/enable echo")
	if ev, _ := out.take(); len(ev) != 1 || ev[0].kind != "enabled" {
		t.Fatalf("/enable echo = %+v", ev)
	}
	if names := listed(); !slices.Contains(names, "echo") {
		t.Errorf("/tools after /enable echo lists %v, want echo", names)
	}
	r.Run(ctx, `/call echo {"text":"back"}`)
	if ev, _ := out.take(); len(ev) != 1 || ev[0].kind != "result" || ev[0].fields["output"] != "back" {
		t.Fatalf("/call echo after /enable = %+v", ev)
	}
}

// TestWorkspaceMustBeADirectory: /workspace refuses a path that does not
// exist or is a file, saying so, and leaves the workspace as it was.
func TestWorkspaceMustBeADirectory(t *testing.T) {
	_, s := session(t)
	out := &recorder{}
	r := repl.New(repl.Options{Session: s.Session, Out: out})
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "file.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}

	r.Run(ctx, "/workspace "+dir)
	if ev, _ := out.take(); len(ev) != 1 || ev[0].kind != "workspace" || ev[0].fields["root"] != dir {
		t.Fatalf("/workspace %s = %+v", dir, ev)
	}
	for _, bad := range []string{filepath.Join(dir, "missing"), file} {
		r.Run(ctx, "/workspace "+bad)
		ev, _ := out.take()
		if len(ev) != 1 || ev[0].kind != "error" || !strings.Contains(ev[0].text, bad) || !strings.Contains(ev[0].text, "workspace stays "+dir) {
			t.Errorf("/workspace %s = %+v, want an error naming it and the workspace kept", bad, ev)
		}
		if got := s.Session.WorkspaceRoot(); got != dir {
			t.Errorf("after /workspace %s the workspace is %q, want %q", bad, got, dir)
		}
	}
}

// TestSessionEventsAreTyped: the REPL reports the session's own events as
// typed events, kind = type and fields = the event as a trace/event, so a
// --json rendering prints them as they are; a tool's stream comes as
// tool.update with its output, before the call's result.
func TestSessionEventsAreTyped(t *testing.T) {
	_, s := session(t)
	out := &recorder{lifecycle: true}
	r := repl.New(repl.Options{Session: s.Session, Out: out})
	defer r.Close()
	r.Run(context.Background(), `/call count {"n":2,"delay_ms":1}`)
	if err := s.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	ev, _ := out.take()
	got := strings.Join(kinds(ev), " ")
	if want := "turn.started tool.started hook.fired tool.update tool.update tool.completed result turn.completed"; got != want {
		t.Fatalf("events = %s, want %s", got, want)
	}
	started, update, done := ev[1].fields, ev[3].fields, ev[5].fields
	data := func(f map[string]any) map[string]any { d, _ := f["data"].(map[string]any); return d }
	if started["type"] != "tool.started" || data(started)["tool"] != "count" || data(started)["tool_call_id"] != "call-1" || started["span_id"] == "" {
		t.Errorf("tool.started fields = %v", started)
	}
	if data(update)["output"] != "1" || update["span_id"] != started["span_id"] {
		t.Errorf("tool.update fields = %v", update)
	}
	if data(done)["status"] != "ok" || data(done)["duration_ms"] == nil || done["session_id"] == "" {
		t.Errorf("tool.completed fields = %v", done)
	}
}
