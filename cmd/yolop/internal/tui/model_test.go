package tui

import (
	"context"
	"strings"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"

	"yolop.dev/core/yep"
)

// driver runs a model the way the program does, on the test's goroutine:
// messages the UI sends are queued and applied by pump or next, a
// command's message comes back the same way, and printed lines are
// recorded as the transcript.
type driver struct {
	t    *testing.T
	u    *UI
	m    *model
	msgs chan tea.Msg

	mu      sync.Mutex
	printed []string
}

func newDriver(t *testing.T, status func(int) string) *driver {
	t.Helper()
	d := &driver{t: t, msgs: make(chan tea.Msg, 1000)}
	d.u = &UI{o: Options{Status: status}, done: make(chan struct{})}
	d.u.send = func(msg tea.Msg) { d.msgs <- msg }
	d.u.print = func(text string) {
		d.mu.Lock()
		d.printed = append(d.printed, text)
		d.mu.Unlock()
	}
	d.m = newModel(d.u)
	t.Cleanup(func() {
		select {
		case <-d.u.done:
		default:
			close(d.u.done) // an Ask still waiting gives up
		}
	})
	return d
}

// update applies one message and starts its command as the program would
// (on a goroutine whose message is queued).
func (d *driver) update(msg tea.Msg) {
	_, cmd := d.m.Update(msg)
	d.run(cmd)
}

func (d *driver) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		if msg := cmd(); msg != nil {
			if _, ok := msg.(tea.QuitMsg); ok {
				d.msgs <- msg
				return
			}
			d.msgs <- msg
		}
	}()
}

// pump applies the queued messages without waiting.
func (d *driver) pump() {
	for {
		select {
		case msg := <-d.msgs:
			d.apply(msg)
		default:
			return
		}
	}
}

// next waits for one message and applies it.
func (d *driver) next() tea.Msg {
	msg := <-d.msgs
	d.apply(msg)
	return msg
}

// until applies messages until one satisfies ok.
func (d *driver) until(ok func(tea.Msg) bool) {
	for !ok(d.next()) {
	}
}

// waitFor applies messages until ok holds (it may already).
func (d *driver) waitFor(ok func() bool) {
	for !ok() {
		d.next()
	}
}

func (d *driver) apply(msg tea.Msg) {
	if _, ok := msg.(tea.QuitMsg); ok {
		return
	}
	if b, ok := msg.(tea.BatchMsg); ok {
		for _, c := range b {
			d.run(c)
		}
		return
	}
	d.update(msg)
}

// press sends keys: names such as "enter", "ctrl+c", "esc", "up", or
// text typed one rune at a time.
func (d *driver) press(keys ...string) {
	for _, k := range keys {
		d.update(keyMsg(k))
	}
}

func (d *driver) typ(text string) {
	for _, r := range text {
		d.update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func keyMsg(name string) tea.KeyPressMsg {
	switch name {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "ctrl+d":
		return tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
	}
	panic("unknown key " + name)
}

func (d *driver) transcript() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return strings.Join(d.printed, "\n")
}

func (d *driver) view() string { return d.m.View().Content }

// asker runs Ask on its own goroutine, as a session's extension call
// does, and waits for the overlay to open (or the answer, for a question
// refused at once).
type asker struct {
	res chan yep.UIAskResult
}

func (d *driver) ask(ctx context.Context, ext string, p yep.UIAskParams) *asker {
	a := &asker{res: make(chan yep.UIAskResult, 1)}
	go func() {
		r, err := d.u.Ask(ctx, ext, p)
		if err != nil {
			d.t.Errorf("Ask: %v", err)
		}
		a.res <- r
	}()
	d.until(func(msg tea.Msg) bool { _, ok := msg.(askMsg); return ok })
	return a
}

// TestSubmit: Enter runs the line through the dispatch with the input
// cleared, echoes it into the transcript, and the prompt is idle again
// when it returns; an empty line runs nothing.
func TestSubmit(t *testing.T) {
	d := newDriver(t, nil)
	var got []string
	d.u.SetDispatch(func(ctx context.Context, line string) bool {
		got = append(got, line)
		d.u.Event("result", nil, "ran "+line)
		return false
	})
	d.press("enter")
	if d.m.running {
		t.Fatal("an empty line started a command")
	}
	d.typ("/tools")
	if !strings.Contains(d.view(), "> /tools") {
		t.Fatalf("the input line does not show what was typed:\n%s", d.view())
	}
	d.press("enter")
	if !d.m.running || d.m.input.Value() != "" {
		t.Fatalf("after Enter: running=%v input=%q; want a running command and an empty input", d.m.running, d.m.input.Value())
	}
	if !strings.Contains(d.view(), hintRunning) {
		t.Errorf("a running command has no hint:\n%s", d.view())
	}
	d.until(func(msg tea.Msg) bool { _, ok := msg.(doneMsg); return ok })
	if d.m.running {
		t.Error("still running after the dispatch returned")
	}
	if len(got) != 1 || got[0] != "/tools" {
		t.Errorf("dispatched %q, want [/tools]", got)
	}
	if want := "> /tools\nran /tools"; d.transcript() != want {
		t.Errorf("transcript = %q, want %q", d.transcript(), want)
	}
}

// TestCtrlC: Ctrl-C during a command cancels its context and the UI
// stays; on an idle prompt the first Ctrl-C clears the line and warns,
// any other key disarms it, and a second one in a row quits. Ctrl-D on
// an empty line quits too, on a non-empty one it does not.
func TestCtrlC(t *testing.T) {
	d := newDriver(t, nil)
	cancelled := make(chan struct{})
	d.u.SetDispatch(func(ctx context.Context, line string) bool {
		<-ctx.Done()
		close(cancelled)
		d.u.Event("cancelled", nil, "cancelled")
		return false
	})
	d.typ("count to ten")
	d.press("enter")
	d.press("ctrl+c")
	<-cancelled
	if d.m.quit {
		t.Fatal("Ctrl-C during a command quit the UI")
	}
	d.until(func(msg tea.Msg) bool { _, ok := msg.(doneMsg); return ok })
	if d.m.running {
		t.Fatal("still running after the cancelled command returned")
	}

	d.typ("half a line")
	d.press("ctrl+c")
	if d.m.quit || d.m.input.Value() != "" || !strings.Contains(d.view(), hintQuit) {
		t.Fatalf("first idle Ctrl-C: quit=%v input=%q view:\n%s", d.m.quit, d.m.input.Value(), d.view())
	}
	d.typ("x")
	d.press("ctrl+c")
	if d.m.quit {
		t.Fatal("Ctrl-C after a typed key quit: the key should have disarmed the first one")
	}
	d.press("ctrl+c")
	if !d.m.quit {
		t.Fatal("a second Ctrl-C in a row on an idle prompt did not quit")
	}

	d = newDriver(t, nil)
	d.typ("x")
	d.press("ctrl+d")
	if d.m.quit {
		t.Fatal("Ctrl-D on a non-empty line quit")
	}
	d.press("backspace", "ctrl+d")
	if !d.m.quit {
		t.Fatal("Ctrl-D on an empty line did not quit")
	}
}

// TestDispatchQuit: a command that ends the session (/quit) ends the UI.
func TestDispatchQuit(t *testing.T) {
	d := newDriver(t, nil)
	d.u.SetDispatch(func(ctx context.Context, line string) bool { return line == "/quit" })
	d.typ("/quit")
	d.press("enter")
	d.until(func(msg tea.Msg) bool { _, ok := msg.(doneMsg); return ok })
	if !d.m.quit {
		t.Fatal("/quit did not end the UI")
	}
}

// TestNotStarted: Enter before the session has handed over its commands
// keeps the line and says why.
func TestNotStarted(t *testing.T) {
	d := newDriver(t, nil)
	d.typ("hello")
	d.press("enter")
	if d.m.running || d.m.input.Value() != "hello" || !strings.Contains(d.view(), hintStarting) {
		t.Fatalf("running=%v input=%q view:\n%s", d.m.running, d.m.input.Value(), d.view())
	}
}

// TestAskTakesKeys: a question opened mid-command takes the keys before
// the prompt (what is typed goes to the answer, not the input line);
// Enter answers it, the transcript shows the question and the answer,
// and the command goes on.
func TestAskTakesKeys(t *testing.T) {
	d := newDriver(t, nil)
	release := make(chan struct{})
	d.u.SetDispatch(func(ctx context.Context, line string) bool { <-release; return false })
	d.typ("run")
	d.press("enter")
	a := d.ask(context.Background(), "lsp", yep.UIAskParams{Prompt: "Which binary?", Placeholder: "path"})
	if !strings.Contains(d.view(), "[lsp asks] Which binary? (path)") {
		t.Fatalf("the overlay does not show the question:\n%s", d.view())
	}
	d.typ("/usr/bin/ra")
	if d.m.input.Value() != "" || d.m.ask.input.Value() != "/usr/bin/ra" {
		t.Fatalf("keys went to the prompt: input=%q answer=%q", d.m.input.Value(), d.m.ask.input.Value())
	}
	d.press("enter")
	if r := <-a.res; r.Cancelled || r.Answer != "/usr/bin/ra" {
		t.Fatalf("answer = %+v, want /usr/bin/ra", r)
	}
	if d.m.ask != nil {
		t.Fatal("the overlay stayed open after the answer")
	}
	if !d.m.running {
		t.Fatal("the running command stopped when the question was answered")
	}
	if want := "[lsp asks] Which binary?\n> /usr/bin/ra"; !strings.Contains(d.transcript(), want) {
		t.Errorf("transcript lacks %q:\n%s", want, d.transcript())
	}
	close(release)
}

// TestAskEsc: Esc answers cancelled, and Ctrl-C in the overlay cancels
// the question and the running command, but does not quit.
func TestAskEsc(t *testing.T) {
	d := newDriver(t, nil)
	a := d.ask(context.Background(), "echo", yep.UIAskParams{Prompt: "Name?"})
	d.typ("abc")
	d.press("esc")
	if r := <-a.res; !r.Cancelled {
		t.Fatalf("Esc answered %+v, want cancelled", r)
	}
	if !strings.Contains(d.transcript(), "[echo asks] Name?\n(cancelled)") {
		t.Errorf("transcript:\n%s", d.transcript())
	}

	cancelled := make(chan struct{})
	d.u.SetDispatch(func(ctx context.Context, line string) bool { <-ctx.Done(); close(cancelled); return false })
	d.typ("go")
	d.press("enter")
	a = d.ask(context.Background(), "echo", yep.UIAskParams{Prompt: "Name?"})
	d.press("ctrl+c")
	if r := <-a.res; !r.Cancelled {
		t.Fatalf("Ctrl-C answered %+v, want cancelled", r)
	}
	<-cancelled
	if d.m.quit {
		t.Fatal("Ctrl-C in the overlay quit the UI")
	}
}

// TestAskBusy: while a question is open a second one is answered
// cancelled at once, and the first still takes the keys.
func TestAskBusy(t *testing.T) {
	d := newDriver(t, nil)
	first := d.ask(context.Background(), "a", yep.UIAskParams{Prompt: "First?"})
	second := d.ask(context.Background(), "b", yep.UIAskParams{Prompt: "Second?"})
	if r := <-second.res; !r.Cancelled {
		t.Fatalf("the second question got %+v, want cancelled", r)
	}
	d.typ("one")
	d.press("enter")
	if r := <-first.res; r.Cancelled || r.Answer != "one" {
		t.Fatalf("the first question got %+v, want one", r)
	}
}

// TestAskContext: a question whose asker gives up (its context ends)
// closes the overlay and gives the keys back to the prompt.
func TestAskContext(t *testing.T) {
	d := newDriver(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	a := d.ask(ctx, "echo", yep.UIAskParams{Prompt: "Name?"})
	cancel()
	if r := <-a.res; !r.Cancelled {
		t.Fatalf("got %+v, want cancelled", r)
	}
	d.until(func(msg tea.Msg) bool { _, ok := msg.(askDoneMsg); return ok })
	if d.m.ask != nil {
		t.Fatal("the overlay stayed open after its asker gave up")
	}
	d.typ("x")
	if d.m.input.Value() != "x" {
		t.Fatalf("the prompt did not get the keys back: %q", d.m.input.Value())
	}
}

// TestSecretMasked: a secret's characters never appear in the view, only
// the mask; the answer is the typed value and the transcript says
// "(saved)".
func TestSecretMasked(t *testing.T) {
	d := newDriver(t, nil)
	a := d.ask(context.Background(), "github", yep.UIAskParams{Prompt: "Token", Secret: true})
	d.typ("hunter2")
	if v := d.view(); strings.Contains(v, "hunter2") || !strings.Contains(v, "*******") {
		t.Fatalf("the view shows the secret or no mask:\n%s", v)
	}
	d.press("enter")
	if r := <-a.res; r.Answer != "hunter2" {
		t.Fatalf("answer = %+v, want the typed secret", r)
	}
	tr := d.transcript()
	if strings.Contains(tr, "hunter2") || !strings.Contains(tr, "[github asks] Token\n(saved)") {
		t.Fatalf("transcript shows the secret or lacks (saved):\n%s", tr)
	}
	if strings.Contains(d.view(), "hunter2") {
		t.Fatalf("the view shows the secret after the answer:\n%s", d.view())
	}
}

// TestSelector: arrows move the choice (clamped at both ends), Enter
// picks the chosen option; typing filters the options (case ignored)
// and the choice restarts at the first match.
func TestSelector(t *testing.T) {
	d := newDriver(t, nil)
	p := yep.UIAskParams{Prompt: "Colour?", Options: []string{"red", "green", "blue", "Grey"}}
	a := d.ask(context.Background(), "paint", p)
	d.press("up", "down", "down", "down", "down", "down", "up")
	if !strings.Contains(d.view(), "› blue") {
		t.Fatalf("the choice is not on blue:\n%s", d.view())
	}
	d.press("enter")
	if r := <-a.res; r.Answer != "blue" {
		t.Fatalf("picked %+v, want blue", r)
	}
	if !strings.Contains(d.transcript(), "[paint asks] Colour?\n> blue") {
		t.Errorf("transcript:\n%s", d.transcript())
	}

	a = d.ask(context.Background(), "paint", p)
	d.press("down")
	d.typ("gr")
	v := d.view()
	if strings.Contains(v, "red") || strings.Contains(v, "blue") || !strings.Contains(v, "› green") || !strings.Contains(v, "  Grey") {
		t.Fatalf("filter gr: want green (chosen) and Grey only:\n%s", v)
	}
	d.press("down", "enter")
	if r := <-a.res; r.Answer != "Grey" {
		t.Fatalf("picked %+v, want Grey", r)
	}

	a = d.ask(context.Background(), "paint", p)
	d.typ("zzz")
	if !strings.Contains(d.view(), "(no option matches)") {
		t.Fatalf("no match shown:\n%s", d.view())
	}
	d.press("enter") // nothing to pick: the overlay stays
	if d.m.ask == nil {
		t.Fatal("Enter with no match closed the overlay")
	}
	d.press("esc")
	if r := <-a.res; !r.Cancelled {
		t.Fatalf("got %+v, want cancelled", r)
	}
}

// TestStreaming: the model's streamed reply stays in the live area while
// it streams and joins the transcript, rendered as markdown (its lines
// one paragraph), when an event line ends it; a tool's streamed output is
// indented under its call.
func TestStreaming(t *testing.T) {
	d := newDriver(t, nil)
	d.u.Raw("Hello, ")
	d.u.Raw("wor")
	d.pump()
	if !strings.Contains(d.view(), "Hello, wor") || d.transcript() != "" {
		t.Fatalf("open line: view:\n%s\ntranscript %q", d.view(), d.transcript())
	}
	d.u.Raw("ld\nnext")
	d.u.Event("tool.started", nil, "→ count: Counting to 2")
	d.u.Event("tool.update", nil, "")
	d.u.Raw("1\n")
	d.u.Event("tool.update", nil, "")
	d.u.Raw("2\n")
	d.u.Event("tool.completed", nil, "← count: ok")
	d.pump()
	want := "Hello, world next\n→ count: Counting to 2\n  │ 1\n  │ 2\n← count: ok"
	if d.transcript() != want {
		t.Fatalf("transcript = %q, want %q", d.transcript(), want)
	}
	if strings.Contains(d.view(), "next") {
		t.Fatalf("the ended line is still in the live area:\n%s", d.view())
	}
}

// TestResize: a resize re-lays out the status bar to the new width.
func TestResize(t *testing.T) {
	d := newDriver(t, func(w int) string { return strings.Repeat("s", w+10) })
	d.update(tea.WindowSizeMsg{Width: 40, Height: 10})
	rows := strings.Split(d.view(), "\n")
	if got := rows[len(rows)-1]; got != strings.Repeat("s", 40) {
		t.Fatalf("status bar at width 40 = %q", got)
	}
	d.update(tea.WindowSizeMsg{Width: 60, Height: 10})
	rows = strings.Split(d.view(), "\n")
	if got := rows[len(rows)-1]; got != strings.Repeat("s", 60) {
		t.Fatalf("status bar at width 60 = %q", got)
	}
}

// TestStatusBar: SetStatus sets what renders the bar and StatusChanged
// redraws it from there; the bar is the last row.
func TestStatusBar(t *testing.T) {
	d := newDriver(t, nil)
	if strings.Contains(d.view(), "echo") {
		t.Fatalf("a bar without a source:\n%s", d.view())
	}
	var mu sync.Mutex
	text := "echo ready"
	d.u.SetStatus(func(w int) string { mu.Lock(); defer mu.Unlock(); return text })
	d.pump()
	rows := strings.Split(d.view(), "\n")
	if got := strings.TrimRight(rows[len(rows)-1], " "); got != "echo ready" {
		t.Fatalf("bar = %q, want echo ready", got)
	}
	mu.Lock()
	text = "echo degraded: crashed"
	mu.Unlock()
	d.u.StatusChanged()
	d.pump()
	rows = strings.Split(d.view(), "\n")
	if got := strings.TrimRight(rows[len(rows)-1], " "); got != "echo degraded: crashed" {
		t.Fatalf("bar after StatusChanged = %q", got)
	}
}

// TestStopClearsLiveArea: Stop (the session ending from outside) quits,
// cancels the running line and leaves no live area on the screen.
func TestStopClearsLiveArea(t *testing.T) {
	d := newDriver(t, func(int) string { return "bar" })
	cancelled := make(chan struct{})
	d.u.SetDispatch(func(ctx context.Context, line string) bool { <-ctx.Done(); close(cancelled); return false })
	d.typ("wait")
	d.press("enter")
	d.update(stopMsg{})
	<-cancelled
	if !d.m.quit || d.view() != "" {
		t.Fatalf("after stop: quit=%v view=%q", d.m.quit, d.view())
	}
}

// TestEnterWhileRunning: Enter during a running command keeps the new
// line in the input, runs nothing and says why.
func TestEnterWhileRunning(t *testing.T) {
	d := newDriver(t, nil)
	release := make(chan struct{})
	runs := make(chan string, 2)
	d.u.SetDispatch(func(ctx context.Context, line string) bool { runs <- line; <-release; return false })
	d.typ("first")
	d.press("enter")
	d.typ("second")
	d.press("enter")
	if d.m.input.Value() != "second" || !strings.Contains(d.view(), hintBusy) {
		t.Fatalf("input=%q view:\n%s", d.m.input.Value(), d.view())
	}
	close(release)
	d.until(func(msg tea.Msg) bool { _, ok := msg.(doneMsg); return ok })
	if got := <-runs; got != "first" || len(runs) != 0 {
		t.Fatalf("ran %q and %d more, want only first", got, len(runs))
	}
}

// TestColour: with colour on the status bar and the overlay are styled
// (escape sequences); with colour off the view has none.
func TestColour(t *testing.T) {
	for _, colour := range []bool{true, false} {
		d := newDriver(t, func(int) string { return "echo ready" })
		d.u.o.Colour = colour
		d.m = newModel(d.u)
		d.ask(context.Background(), "x", yep.UIAskParams{Prompt: "Pick", Options: []string{"a", "b"}})
		if got := strings.Contains(d.view(), "\x1b["); got != colour {
			t.Errorf("colour %v: escapes in the view = %v:\n%q", colour, got, d.view())
		}
	}
}
