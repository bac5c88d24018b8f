package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"yolop.dev/agent/scripted"
	"yolop.dev/core/yep"
	"yolop.dev/harness"
	"yolop.dev/harness/repl"
)

// fields are a typed session event's fields as the REPL reports them
// (the event marshalled, repl.SessionEvent).
func fields(typ string, data any) map[string]any {
	b, err := json.Marshal(map[string]any{"type": typ, "data": data})
	if err != nil {
		panic(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	return m
}

// started, update and completed report a call's events as a session does.
func (d *driver) started(data yep.ToolStartedData) {
	d.u.Event(yep.TraceToolStarted, fields(yep.TraceToolStarted, data), "")
}

func (d *driver) output(id, tool, out string) {
	d.u.Event(yep.EventToolUpdate, fields(yep.EventToolUpdate, yep.ToolUpdateData{Tool: tool, ToolCallID: id, Output: out}), "")
	d.u.Raw(out)
}

func (d *driver) completed(data yep.ToolCompletedData) {
	d.u.Event(yep.TraceToolCompleted, fields(yep.TraceToolCompleted, data), "")
}

var countCall = yep.ToolStartedData{Tool: "count", Extension: "echo", Capability: "echo", ToolCallID: "c1", Narration: "Counting to 3"}

// TestToolBlock: a started call prints its header (tool, extension,
// narration) and gets a spinner row in the live area; its streamed lines
// print indented under the header; when it completes its closing line
// has the outcome and the duration, and the row leaves the live area. A
// failed call's closing line says why.
func TestToolBlock(t *testing.T) {
	d := newDriver(t, nil)
	d.started(countCall)
	d.pump()
	if want := "→ count (echo): Counting to 3"; d.transcript() != want {
		t.Fatalf("transcript = %q, want %q", d.transcript(), want)
	}
	if row := "⠋ echo · count: Counting to 3"; !strings.Contains(d.view(), row) {
		t.Fatalf("the live area lacks the running row %q:\n%s", row, d.view())
	}
	d.output("c1", "count", "1\n")
	d.output("c1", "count", "2\n3\n")
	d.completed(yep.ToolCompletedData{Tool: "count", Extension: "echo", ToolCallID: "c1", DurationMS: 1234, Status: yep.ToolOK})
	d.pump()
	want := "→ count (echo): Counting to 3\n  │ 1\n  │ 2\n  │ 3\n✓ count (echo) 1.2s"
	if d.transcript() != want {
		t.Fatalf("transcript = %q, want %q", d.transcript(), want)
	}
	if strings.Contains(d.view(), "count") {
		t.Fatalf("the finished call is still in the live area:\n%s", d.view())
	}

	d = newDriver(t, nil)
	d.started(yep.ToolStartedData{Tool: "read_file", Capability: "builtin:files", ToolCallID: "c2", Args: json.RawMessage(`{"path":"nope"}`)})
	d.completed(yep.ToolCompletedData{Tool: "read_file", Capability: "builtin:files", ToolCallID: "c2", DurationMS: 3.2, Status: yep.ToolError, IsError: true, Error: "no such file"})
	d.pump()
	want = "→ read_file (builtin): {\"path\":\"nope\"}\n✗ read_file (builtin) 3ms: tool_error: no such file"
	if d.transcript() != want {
		t.Fatalf("transcript = %q, want %q", d.transcript(), want)
	}
	if len(d.m.live.calls) != 0 {
		t.Fatalf("rows left: %+v", d.m.live.calls)
	}
}

// TestConcurrentCalls: two running calls are two rows; output of one
// after the other's line says again whose it is; the first to end leaves
// the other's row.
func TestConcurrentCalls(t *testing.T) {
	d := newDriver(t, nil)
	d.started(countCall)
	d.started(yep.ToolStartedData{Tool: "grep", Capability: "mcp:search", ToolCallID: "c2", Narration: "Searching for TODO"})
	d.pump()
	v := d.view()
	if !strings.Contains(v, "⠋ echo · count: Counting to 3\n⠋ mcp:search · grep: Searching for TODO") {
		t.Fatalf("want both rows in start order:\n%s", v)
	}
	d.output("c1", "count", "1\n")
	d.output("c1", "count", "2\n")
	d.output("c2", "grep", "main.go:3: TODO\n")
	d.completed(yep.ToolCompletedData{Tool: "grep", Capability: "mcp:search", ToolCallID: "c2", DurationMS: 80, Status: yep.ToolOK})
	d.pump()
	want := "→ count (echo): Counting to 3\n→ grep (mcp:search): Searching for TODO\n" +
		"… count (echo)\n  │ 1\n  │ 2\n… grep (mcp:search)\n  │ main.go:3: TODO\n✓ grep (mcp:search) 80ms"
	if d.transcript() != want {
		t.Fatalf("transcript =\n%s\nwant\n%s", d.transcript(), want)
	}
	if v := d.view(); strings.Contains(v, "grep") || !strings.Contains(v, "count: Counting to 3") {
		t.Fatalf("want only count's row:\n%s", v)
	}
}

// manualTicker stands in for tea.Tick: it counts the frames asked for,
// and a frame is delivered only when the test fires it.
type manualTicker struct {
	mu    sync.Mutex
	asked int
	fire  chan time.Time
}

func newManualTicker(d *driver) *manualTicker {
	mt := &manualTicker{fire: make(chan time.Time)}
	d.u.tr.ticker = func(_ time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
		mt.mu.Lock()
		mt.asked++
		mt.mu.Unlock()
		return func() tea.Msg { return fn(<-mt.fire) }
	}
	return mt
}

func (mt *manualTicker) count() int {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	return mt.asked
}

// TestSpinnerTicks: the spinner asks for frames only while a call runs,
// one at a time however many calls run, and each frame advances it; once
// nothing runs the next frame asks for no other, so an idle UI sends
// none.
func TestSpinnerTicks(t *testing.T) {
	d := newDriver(t, nil)
	mt := newManualTicker(d)
	isTick := func(msg tea.Msg) bool { _, ok := msg.(spinner.TickMsg); return ok }
	d.pump()
	if mt.count() != 0 {
		t.Fatalf("an idle UI asked for %d frames", mt.count())
	}
	d.started(countCall)
	d.started(yep.ToolStartedData{Tool: "echo", Extension: "echo", ToolCallID: "c2"})
	d.pump()
	if mt.count() != 1 {
		t.Fatalf("two running calls asked for %d frames, want 1", mt.count())
	}
	mt.fire <- time.Now()
	d.until(isTick)
	if !strings.Contains(d.view(), "⠙ echo · count") || mt.count() != 2 {
		t.Fatalf("after a frame: %d asked, view:\n%s", mt.count(), d.view())
	}
	d.completed(yep.ToolCompletedData{Tool: "count", Extension: "echo", ToolCallID: "c1", Status: yep.ToolOK})
	d.completed(yep.ToolCompletedData{Tool: "echo", Extension: "echo", ToolCallID: "c2", Status: yep.ToolOK})
	d.pump()
	mt.fire <- time.Now()
	d.until(isTick)
	if mt.count() != 2 || d.m.live.ticking {
		t.Fatalf("idle after the calls ended, yet %d frames asked (ticking %v)", mt.count(), d.m.live.ticking)
	}
	// A call started later starts the frames again.
	d.started(countCall)
	d.pump()
	if mt.count() != 3 {
		t.Fatalf("a new call asked for %d frames in all, want 3", mt.count())
	}
	d.completed(yep.ToolCompletedData{Tool: "count", Extension: "echo", ToolCallID: "c1", Status: yep.ToolOK})
	d.pump()
	mt.fire <- time.Now() // the pending frame, which asks for no other
	d.until(isTick)
	if mt.count() != 3 {
		t.Fatalf("%d frames asked after the last call ended, want 3", mt.count())
	}
}

const plan = "# Plan\n\nFirst **read** the file, then:\n\n- count the lines\n- print `n`\n\n```go\nfmt.Println(n)\n```\n"

// TestReplyMarkdown: the model's reply shows whole in the live area while
// it streams, and nothing of it is printed; when the turn ends it is
// printed once, rendered as markdown, before the turn's line. A status
// line meanwhile prints without ending the reply; a tool call starting
// ends it.
func TestReplyMarkdown(t *testing.T) {
	d := newDriver(t, nil)
	for _, piece := range []string{"# Pl", "an\n\nFirst **read** the file", ", then:\n\n- count the lines\n- print `n`\n\n```go\nfmt.Println(n)\n```\n"} {
		d.u.Event("text.delta", nil, "")
		d.u.Raw(piece)
	}
	d.u.Event("status.changed", nil, "[lsp] ready")
	d.pump()
	if d.transcript() != "[lsp] ready" {
		t.Fatalf("printed while streaming: %q", d.transcript())
	}
	if v := d.view(); !strings.Contains(v, "# Plan\n\nFirst **read** the file, then:\n\n- count the lines") {
		t.Fatalf("the live area does not hold the reply as it came:\n%s", v)
	}
	d.u.Event("turn", nil, "(1 model request, 0 tool calls, 10 tokens in, 20 out)")
	d.pump()
	want := "[lsp] ready\n# Plan\n\nFirst **read** the file, then:\n\n• count the lines\n• print n\n\n  fmt.Println(n)\n(1 model request, 0 tool calls, 10 tokens in, 20 out)"
	if d.transcript() != want {
		t.Fatalf("transcript =\n%s\nwant\n%s", d.transcript(), want)
	}
	if strings.Contains(d.view(), "Plan") {
		t.Fatalf("the reply stayed in the live area:\n%s", d.view())
	}

	d = newDriver(t, nil)
	d.u.Raw("Let me count.")
	d.started(countCall)
	d.pump()
	if want := "Let me count.\n→ count (echo): Counting to 3"; d.transcript() != want {
		t.Fatalf("transcript = %q, want %q", d.transcript(), want)
	}
}

// TestReplyFitsHeight: a reply longer than the screen shows its last rows
// in the live area, wrapped to the width, and the live area never
// outgrows the height.
func TestReplyFitsHeight(t *testing.T) {
	d := newDriver(t, func(int) string { return "bar" })
	d.update(tea.WindowSizeMsg{Width: 20, Height: 10})
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	b.WriteString("and a last line that is longer than twenty columns")
	d.u.Raw(b.String())
	d.pump()
	rows := strings.Split(d.view(), "\n")
	if len(rows) != 10 {
		t.Fatalf("%d rows, want the height (10):\n%s", len(rows), d.view())
	}
	for _, r := range rows {
		if lipgloss.Width(r) > 20 {
			t.Fatalf("row %q is wider than 20", r)
		}
	}
	if !strings.Contains(d.view(), "line 30\nand a last line that\nis longer than\ntwenty columns\n>") {
		t.Fatalf("the reply's last rows, wrapped, are not above the prompt:\n%s", d.view())
	}
}

// TestMarkdownWidth: the printed reply is word-wrapped to the terminal's
// width, and carries no padding.
func TestMarkdownWidth(t *testing.T) {
	d := newDriver(t, nil)
	d.update(tea.WindowSizeMsg{Width: 30, Height: 24})
	d.u.Raw(strings.Repeat("word ", 20))
	d.u.Event("turn", nil, "(done)")
	d.pump()
	lines := strings.Split(d.transcript(), "\n")
	if len(lines) < 4 {
		t.Fatalf("100 columns of words at width 30 in %d lines:\n%s", len(lines), d.transcript())
	}
	for _, l := range lines {
		if len(l) > 30 || strings.HasSuffix(l, " ") {
			t.Fatalf("line %q: wider than 30 or padded", l)
		}
	}
}

// TestResultCollapsed: a long /call result shows its first lines and how
// many more there were; one a line longer than that shows whole.
func TestResultCollapsed(t *testing.T) {
	d := newDriver(t, nil)
	var lines []string
	for i := 1; i <= 20; i++ {
		lines = append(lines, fmt.Sprint("row ", i))
	}
	d.u.Event("result", map[string]any{"tool": "cat"}, strings.Join(lines, "\n"))
	want := strings.Join(lines[:resultLines], "\n") + "\n… (12 more lines)"
	if d.transcript() != want {
		t.Fatalf("transcript =\n%s\nwant\n%s", d.transcript(), want)
	}
	d = newDriver(t, nil)
	short := strings.Join(lines[:resultLines+1], "\n")
	d.u.Event("result", map[string]any{"tool": "cat"}, short)
	if d.transcript() != short {
		t.Fatalf("a result of %d lines was cut:\n%s", resultLines+1, d.transcript())
	}
}

// TestDuration: a closing line's duration reads 340ms, 1.2s or 2m05s.
func TestDuration(t *testing.T) {
	for ms, want := range map[float64]string{0.4: "0ms", 340: "340ms", 999.9: "999ms", 1234: "1.2s", 59_940: "59.9s", 125_400: "2m05s"} {
		if got := duration(ms); got != want {
			t.Errorf("duration(%v) = %q, want %q", ms, got, want)
		}
	}
}

// TestTranscriptColour: with colour on the user's line, the closing
// line, a denial (with who decided) and the markdown are styled, and the
// text is intact under the styles; with colour off nothing is.
func TestTranscriptColour(t *testing.T) {
	for _, colour := range []bool{true, false} {
		d := newDriver(t, nil)
		d.u.o.Colour = colour
		d.m = newModel(d.u)
		deny := yep.ToolApprovalData{Tool: "rm", Extension: "fs", Decision: yep.ApprovalDenied, By: yep.ApprovalByPolicy, Reason: "not in the workspace"}
		d.u.Event("input", nil, "> hello")
		d.u.Event(yep.TraceToolApproval, fields(yep.TraceToolApproval, deny), "denied: rm (fs) by policy: not in the workspace")
		d.started(countCall)
		d.completed(yep.ToolCompletedData{Tool: "count", Extension: "echo", ToolCallID: "c1", DurationMS: 5, Status: yep.ToolOK})
		d.u.Raw("**done**")
		d.u.Event("turn", nil, "(turn)")
		d.pump()
		d.mu.Lock()
		printed := append([]string(nil), d.printed...)
		d.mu.Unlock()
		for _, p := range printed {
			if got := strings.Contains(p, "\x1b["); got != colour {
				t.Errorf("colour %v: %q styled = %v", colour, p, got)
			}
		}
		plain := stripANSI(strings.Join(printed, "\n"))
		for _, want := range []string{"> hello", "denied: rm (fs) by policy: not in the workspace", "✓ count (echo) 5ms", "done"} {
			if !strings.Contains(plain, want) {
				t.Errorf("colour %v: transcript lacks %q:\n%s", colour, want, plain)
			}
		}
		if colour && strings.Contains(plain, "**done**") {
			t.Errorf("colour on: the markdown was not rendered: %q", plain)
		}
	}
}

func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// TestGoldenToolRunning: a turn's running call — its header and streamed
// lines printed, its spinner row in the live area above the prompt.
func TestGoldenToolRunning(t *testing.T) {
	d := newDriver(t, board(1))
	d.session()
	release, reported := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(release) })
	d.u.SetDispatch(func(ctx context.Context, line string) bool {
		d.u.Raw("I'll count to three.")
		d.started(countCall)
		d.output("c1", "count", "1\n")
		d.output("c1", "count", "2\n")
		close(reported)
		<-release
		return false
	})
	d.typ("count to three")
	d.press("enter")
	d.until(func(msg tea.Msg) bool { _, ok := msg.(toolStartMsg); return ok })
	<-reported
	d.pump()
	golden(t, "tool_running", d.frame())
}

// TestGoldenToolDone: a finished block with its duration, a failed one
// with its reason, a hook's block with the extension that decided, and
// the turn's line.
func TestGoldenToolDone(t *testing.T) {
	d := newDriver(t, board(0))
	d.session()
	d.u.Event("input", nil, "> count to three, then read main.go")
	d.started(countCall)
	for _, n := range []string{"1\n", "2\n", "3\n"} {
		d.output("c1", "count", n)
	}
	d.completed(yep.ToolCompletedData{Tool: "count", Extension: "echo", ToolCallID: "c1", DurationMS: 1234, Status: yep.ToolOK})
	d.started(yep.ToolStartedData{Tool: "read_file", Capability: "builtin:files", ToolCallID: "c2", Narration: "Reading main.go"})
	block := yep.ToolApprovalData{Tool: "read_file", Capability: "guard", ToolCallID: "c2", Decision: yep.ApprovalBlocked, By: yep.ApprovalByHook, Reason: "main.go is off limits"}
	d.u.Event(yep.TraceToolApproval, fields(yep.TraceToolApproval, block), "blocked: read_file by guard: main.go is off limits")
	d.completed(yep.ToolCompletedData{Tool: "read_file", Capability: "builtin:files", ToolCallID: "c2", DurationMS: 2, Status: yep.ToolBlocked, IsError: true,
		Error: `tool "read_file" blocked by guard: main.go is off limits`})
	d.u.Raw("Counted to three; main.go is off limits.\n")
	d.u.Event("turn", nil, "(2 model requests, 2 tool calls, 812 tokens in, 64 out)")
	d.pump()
	golden(t, "tool_done", d.frame())
}

// TestGoldenMarkdown: a reply with a heading, a list and a code block,
// rendered with colour off once the turn ends.
func TestGoldenMarkdown(t *testing.T) {
	d := newDriver(t, board(0))
	d.session()
	d.u.Event("input", nil, "> how do I print n?")
	d.u.Raw(plan)
	d.u.Event("turn", nil, "(1 model request, 0 tool calls, 120 tokens in, 48 out)")
	d.pump()
	golden(t, "markdown", d.frame())
}

// TestRefusedCall: a call denied or blocked shows who decided and why on
// its approval line, and its closing line only its outcome; a call that
// failed otherwise says why on its closing line.
func TestRefusedCall(t *testing.T) {
	d := newDriver(t, nil)
	d.started(yep.ToolStartedData{Tool: "rm", Extension: "fs", ToolCallID: "c1"})
	deny := yep.ToolApprovalData{Tool: "rm", Extension: "fs", ToolCallID: "c1", Decision: yep.ApprovalDenied, By: yep.ApprovalByUser, Reason: "asked"}
	d.u.Event(yep.TraceToolApproval, fields(yep.TraceToolApproval, deny), "denied: rm (fs) by user: asked")
	d.completed(yep.ToolCompletedData{Tool: "rm", Extension: "fs", ToolCallID: "c1", DurationMS: 900, Status: yep.ToolDenied, IsError: true, Error: "denied by the user"})
	d.started(yep.ToolStartedData{Tool: "rm", Extension: "fs", ToolCallID: "c2"})
	d.completed(yep.ToolCompletedData{Tool: "rm", Extension: "fs", ToolCallID: "c2", DurationMS: 5000, Status: yep.ToolTimeout, IsError: true, Error: "timed out after 5s"})
	want := "→ rm (fs)\ndenied: rm (fs) by user: asked\n✗ rm (fs) 900ms: denied\n→ rm (fs)\n✗ rm (fs) 5.0s: timeout: timed out after 5s"
	if d.transcript() != want {
		t.Fatalf("transcript =\n%s\nwant\n%s", d.transcript(), want)
	}
}

// TestApprovalInBlock: a call's approval line belongs to its block: the
// output after it needs no second header.
func TestApprovalInBlock(t *testing.T) {
	d := newDriver(t, nil)
	d.started(countCall)
	ok := yep.ToolApprovalData{Tool: "count", Extension: "echo", ToolCallID: "c1", Decision: yep.ApprovalApproved, By: yep.ApprovalByUser}
	d.u.Event(yep.TraceToolApproval, fields(yep.TraceToolApproval, ok), "approved: count (echo) by user")
	d.output("c1", "count", "1\n")
	want := "→ count (echo): Counting to 3\napproved: count (echo) by user\n  │ 1"
	if d.transcript() != want {
		t.Fatalf("transcript =\n%s\nwant\n%s", d.transcript(), want)
	}
}

// TestRealTurn drives a real agent turn through the UI — a scripted
// model over HTTP that streams a reply, calls the echo example's count
// and answers in markdown — through the same command layer as `yolop
// session --tui`: the reply before the call is printed when the call
// starts, the call is a block with its streamed lines and duration, and
// the answer is printed once, rendered, before the turn's line.
func TestRealTurn(t *testing.T) {
	ctx := context.Background()
	cfg := t.TempDir()
	t.Setenv("YOLOP_CONFIG_DIR", cfg)
	for _, k := range []string{"YOLOP_MODEL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"} {
		t.Setenv(k, "")
	}
	t.Setenv("OPENAI_API_KEY", "no key needed")
	script, err := scripted.Parse([]byte(`{"steps": [
		{"when": {"user": "count"}, "reply": {"text": "I'll *count*.", "tool_calls": [{"name": "count", "arguments": {"n": 3}}]}},
		{"when": {"tool_result": {"tool": "count"}}, "reply": {"text": "## Done\n\n- counted to **3**\n- in ` + "`echo`" + `\n"}}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := scripted.NewServer(script, scripted.Options{})
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	t.Setenv("OPENAI_BASE_URL", srv.URL()+"/v1")

	h, err := harness.Open(ctx, harness.Options{ConfigDir: cfg})
	if err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, nil)
	s, warnings, err := h.OpenSession(ctx, harness.SessionOptions{Ask: d.u, NoEnabled: true, NoBuiltins: true, WorkspaceRoot: t.TempDir()},
		[]string{echoPackage(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	for _, w := range warnings {
		d.u.Event("warning", nil, "warning: "+w)
	}
	ag, err := h.NewAgent(ctx, s, harness.AgentOptions{Model: "openai/scripted"})
	if err != nil {
		t.Fatal(err)
	}
	r := repl.New(repl.Options{Session: s.Session, Out: d.u, Ask: d.u, Agent: ag})
	t.Cleanup(r.Close)
	if errs, _ := s.StartInPlace(ctx, s.InPlace()); len(errs) > 0 {
		t.Fatalf("start: %v", errs)
	}
	d.u.SetDispatch(r.Run)
	d.typ("count to three")
	d.press("enter")
	d.until(func(msg tea.Msg) bool { _, ok := msg.(doneMsg); return ok })
	if err := srv.Verify(); err != nil {
		t.Fatal(err)
	}
	// Warnings (the echo example's catch-all hook) come when they come:
	// the turn's lines are the rest.
	var lines []string
	for _, l := range strings.Split(d.transcript(), "\n") {
		if !strings.HasPrefix(l, "warning: ") {
			lines = append(lines, l)
		}
	}
	tr := strings.Join(lines, "\n")
	want := "> count to three\nI'll *count*.\n→ count (echo): {\"n\":3}\n" + toolIndent + "1\n" + toolIndent + "2\n" + toolIndent + "3\n✓ count (echo) "
	if !strings.HasPrefix(tr, want) {
		t.Fatalf("transcript does not start with\n%s\n---\n%s", want, tr)
	}
	answer := "## Done\n\n• counted to **3**\n• in echo\n(2 model requests, 1 tool call, "
	if !strings.Contains(tr, answer) {
		t.Fatalf("the answer is not rendered before the turn's line %q:\n%s", answer, tr)
	}
	if d.m.partial != "" || len(d.m.live.calls) != 0 {
		t.Fatalf("the live area still holds %q and %d calls", d.m.partial, len(d.m.live.calls))
	}
}

// TestDataOnlyUpdate: an update with neither output nor progress has no
// text (the REPL sends no Raw for it), so the model's text after it is
// still the reply, not the call's output.
func TestDataOnlyUpdate(t *testing.T) {
	d := newDriver(t, nil)
	d.started(countCall)
	d.u.Event(yep.EventToolUpdate, fields(yep.EventToolUpdate, yep.ToolUpdateData{Tool: "count", ToolCallID: "c1", Data: json.RawMessage(`{"pct":50}`)}), "")
	d.completed(yep.ToolCompletedData{Tool: "count", Extension: "echo", ToolCallID: "c1", DurationMS: 5, Status: yep.ToolOK})
	d.u.Raw("All done.")
	d.pump()
	if strings.Contains(d.transcript(), toolIndent) || d.m.partial != "All done." {
		t.Fatalf("the reply went to the call: transcript %q, live %q", d.transcript(), d.m.partial)
	}
}
