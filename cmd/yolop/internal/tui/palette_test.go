package tui

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"yolop.dev/core/yep"
	"yolop.dev/harness"
	"yolop.dev/harness/repl"
)

// paletteEntries is a palette as a session with the echo example lists
// it: built-in commands, an extension's command and tools.
func paletteEntries() []repl.Entry {
	return []repl.Entry{
		{Kind: repl.KindCommand, Name: "/tools", Description: "list the session's tools"},
		{Kind: repl.KindCommand, Name: "/prompt", Description: "show the system prompt with the extensions' contributions"},
		{Kind: repl.KindCommand, Name: "/call", Args: "<tool> [json]", NeedsArgs: true, Description: "call a tool with JSON arguments"},
		{Kind: repl.KindCommand, Name: "/commands", Description: "list the extensions' slash commands"},
		{Kind: repl.KindCommand, Name: "/skills", Args: "[name]", Description: "list the skills, or show one's SKILL.md"},
		{Kind: repl.KindCommand, Name: "/reload", Args: "<ext>", NeedsArgs: true, Description: "restart an extension"},
		{Kind: repl.KindCommand, Name: "/enable", Args: "<ext>", NeedsArgs: true, Description: "enable an extension"},
		{Kind: repl.KindCommand, Name: "/disable", Args: "<ext>", NeedsArgs: true, Description: "disable an extension"},
		{Kind: repl.KindCommand, Name: "/workspace", Args: "<dir>", NeedsArgs: true, Description: "change the workspace directory"},
		{Kind: repl.KindCommand, Name: "/status", Description: "extensions, MCP servers and context use"},
		{Kind: repl.KindCommand, Name: "/help", Description: "list the commands and keys"},
		{Kind: repl.KindCommand, Name: "/quit", Description: "end the session"},
		{Kind: repl.KindExtensionCommand, Name: "/echo:greet", Args: "[args]", Description: "Greet someone: /echo:greet <name>"},
		{Kind: repl.KindTool, Name: "echo", Args: "{text: string}", NeedsArgs: true, Description: "Return the given text unchanged."},
		{Kind: repl.KindTool, Name: "count", Args: "{delay_ms?: integer, n?: integer}", Description: "Count from 1 to n, streaming each number as progress."},
		{Kind: repl.KindTool, Name: "reverse", Args: "{text: string}", NeedsArgs: true, Description: "Reverse the given text."},
	}
}

// paletteDriver is a driver whose UI lists entries in its palette and
// records the lines it runs.
func paletteDriver(t *testing.T, entries []repl.Entry) (*driver, chan string) {
	d := newDriver(t, nil)
	d.u.SetPalette(func() []repl.Entry { return entries })
	runs := make(chan string, 10)
	d.u.SetDispatch(func(ctx context.Context, line string) bool { runs <- line; return false })
	return d, runs
}

// paletteNames are the names the open palette shows, in order, and the
// chosen one.
func (d *driver) paletteNames() (names []string, chosen string) {
	if !d.m.paletteOpen() {
		return nil, ""
	}
	for _, r := range d.m.paletteRows() {
		f := strings.Fields(strings.TrimPrefix(r, "›"))
		if len(f) == 0 || strings.HasPrefix(r, hintPalette) {
			continue
		}
		names = append(names, f[0])
		if strings.HasPrefix(r, "›") {
			chosen = f[0]
		}
	}
	return names, chosen
}

// TestPaletteOpens: "/" typed into an empty input opens the palette with
// every command (not the tools); "/" typed later in a line does not;
// with no source there is none.
func TestPaletteOpens(t *testing.T) {
	d, _ := paletteDriver(t, paletteEntries())
	d.typ("/")
	names, chosen := d.paletteNames()
	if len(names) != maxPaletteRows || names[0] != "/tools" || chosen != "/tools" || !strings.Contains(d.view(), hintPalette+" · 13 entries") {
		t.Fatalf("palette after /: %v (chosen %q):\n%s", names, chosen, d.view())
	}
	if strings.Contains(d.view(), "Return the given text") {
		t.Fatalf("the commands' palette lists tools:\n%s", d.view())
	}
	d.press("backspace")
	if d.m.paletteOpen() {
		t.Fatal("the palette stayed open over an empty input")
	}
	d.typ("a/b")
	if d.m.paletteOpen() {
		t.Fatal("a / inside a line opened the palette")
	}

	d = newDriver(t, nil)
	d.typ("/")
	if d.m.paletteOpen() || d.m.input.Value() != "/" {
		t.Fatalf("without a source: open=%v input=%q", d.m.paletteOpen(), d.m.input.Value())
	}
}

// TestPaletteFilter: what follows "/" filters the commands, case
// ignored: names it starts first, then names that contain it; no match
// hides the palette and Enter runs the line as typed.
func TestPaletteFilter(t *testing.T) {
	d, runs := paletteDriver(t, paletteEntries())
	d.typ("/E")
	names, chosen := d.paletteNames()
	if want := "/enable /echo:greet /reload /disable /workspace /help"; strings.Join(names, " ") != want || chosen != "/enable" {
		t.Fatalf("/E lists %v (chosen %q), want %s", names, chosen, want)
	}
	d.typ("cho")
	if names, _ := d.paletteNames(); strings.Join(names, " ") != "/echo:greet" {
		t.Fatalf("/Echo lists %v", names)
	}
	d.typ("zz")
	if d.m.paletteOpen() || strings.Contains(d.view(), hintPalette) {
		t.Fatalf("no match still shows the palette:\n%s", d.view())
	}
	d.press("enter")
	if got := <-runs; got != "/Echozz" {
		t.Fatalf("Enter with no match ran %q, want the line as typed", got)
	}
}

// TestPaletteKeys: Up/Down move the choice (clamped), scrolling past
// the rows shown; Tab completes the chosen command; Enter runs a command
// that needs no argument, and completes one that does.
func TestPaletteKeys(t *testing.T) {
	d, runs := paletteDriver(t, paletteEntries())
	d.typ("/")
	d.press("up")
	if _, chosen := d.paletteNames(); chosen != "/tools" {
		t.Fatalf("Up at the top: chosen %q", chosen)
	}
	for range 9 {
		d.press("down")
	}
	names, chosen := d.paletteNames()
	if chosen != "/status" || names[0] != "/call" || len(names) != maxPaletteRows {
		t.Fatalf("after 9 Downs: %v chosen %q, want /status at the bottom of 8 rows", names, chosen)
	}
	for range 10 {
		d.press("down")
	}
	if _, chosen := d.paletteNames(); chosen != "/echo:greet" {
		t.Fatalf("Down at the bottom: chosen %q", chosen)
	}
	d.update(tab)
	if d.m.input.Value() != "/echo:greet " || d.m.paletteOpen() {
		t.Fatalf("Tab: input %q, open %v; want the command and a space, the palette closed", d.m.input.Value(), d.m.paletteOpen())
	}
	d.press("ctrl+c", "esc") // clear the line, disarm

	d.typ("/sta")
	d.press("enter")
	if got := <-runs; got != "/status" {
		t.Fatalf("Enter on /status ran %q", got)
	}
	d.until(func(msg tea.Msg) bool { _, ok := msg.(doneMsg); return ok })
	if d.m.paletteOpen() || d.m.input.Value() != "" {
		t.Fatalf("after running: open=%v input=%q", d.m.paletteOpen(), d.m.input.Value())
	}

	d.typ("/ena")
	d.press("enter")
	if d.m.input.Value() != "/enable " || d.m.running {
		t.Fatalf("Enter on /enable: input %q running %v; want it completed, not run", d.m.input.Value(), d.m.running)
	}
}

// TestPaletteCall: after "/call " the palette lists the tools with their
// arguments, filtered by what is typed; Enter on a tool that takes
// arguments completes "/call <tool> " for them, on one that needs none
// runs it.
func TestPaletteCall(t *testing.T) {
	d, runs := paletteDriver(t, paletteEntries())
	d.typ("/ca")
	d.update(tab)
	if d.m.input.Value() != "/call " {
		t.Fatalf("Tab on /call: %q", d.m.input.Value())
	}
	names, _ := d.paletteNames()
	if strings.Join(names, " ") != "echo count reverse" || !strings.Contains(d.view(), "› echo {text: string}                      Return the given text unchanged.") {
		t.Fatalf("after /call : %v\n%s", names, d.view())
	}
	d.typ("E")
	if names, _ := d.paletteNames(); strings.Join(names, " ") != "echo reverse" {
		t.Fatalf("/call E lists %v, want echo then reverse", names)
	}
	d.press("enter")
	if d.m.input.Value() != "/call echo " || d.m.paletteOpen() || d.m.running {
		t.Fatalf("Enter on echo: input %q open %v running %v", d.m.input.Value(), d.m.paletteOpen(), d.m.running)
	}
	d.typ(`{"text":"hi"}`)
	d.press("enter")
	if got := <-runs; got != `/call echo {"text":"hi"}` {
		t.Fatalf("ran %q", got)
	}
	d.until(func(msg tea.Msg) bool { _, ok := msg.(doneMsg); return ok })

	d.typ("/call co")
	d.press("enter")
	if got := <-runs; got != "/call count" {
		t.Fatalf("Enter on count ran %q", got)
	}
}

// TestPaletteEsc: Esc closes the palette, which stays closed while the
// line is edited (Up and Down walk the history again) and opens again
// on a "/" typed into an emptied input.
func TestPaletteEsc(t *testing.T) {
	d, _ := historyDriver(t, "older")
	d.u.SetPalette(paletteEntries)
	d.typ("/s")
	d.press("esc")
	if d.m.paletteOpen() || d.m.input.Value() != "/s" {
		t.Fatalf("Esc: open %v input %q", d.m.paletteOpen(), d.m.input.Value())
	}
	d.typ("t")
	if d.m.paletteOpen() {
		t.Fatal("typing reopened a closed palette")
	}
	d.press("up")
	if d.m.input.Value() != "older" {
		t.Fatalf("Up with the palette closed: %q, want the history", d.m.input.Value())
	}
	d.press("ctrl+c", "esc")
	d.typ("/")
	if !d.m.paletteOpen() {
		t.Fatal("/ into an emptied input did not reopen the palette")
	}
}

// TestPaletteFits: every row of the palette fits the width, long heads
// cut with an ellipsis.
func TestPaletteFits(t *testing.T) {
	entries := append(paletteEntries(), repl.Entry{Kind: repl.KindTool, Name: "a_tool_with_a_very_long_name_indeed",
		Args: "{first_argument: string, second_argument?: integer, third?: string[]}", Description: strings.Repeat("words ", 30)})
	for _, w := range []int{80, 50} {
		d, _ := paletteDriver(t, entries)
		d.update(tea.WindowSizeMsg{Width: w, Height: 24})
		d.typ("/call a_")
		for _, r := range strings.Split(d.view(), "\n") {
			if lipgloss.Width(r) > w {
				t.Fatalf("width %d: a row of %d columns: %q", w, lipgloss.Width(r), r)
			}
		}
		if !strings.Contains(d.view(), "…") {
			t.Fatalf("width %d: the long head is not cut:\n%s", w, d.view())
		}
	}
}

// TestPaletteRealSession: the palette of a real session (the echo
// example) lists its REPL's commands and, after "/call ", the echo
// tools with the arguments their schemas declare.
func TestPaletteRealSession(t *testing.T) {
	ctx := context.Background()
	cfg := t.TempDir()
	t.Setenv("YOLOP_CONFIG_DIR", cfg)
	h, err := harness.Open(ctx, harness.Options{ConfigDir: cfg})
	if err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, nil)
	s, warnings, err := h.OpenSession(ctx, harness.SessionOptions{Ask: d.u, NoEnabled: true, NoBuiltins: true, WorkspaceRoot: t.TempDir()},
		[]string{echoPackage(t)})
	if err != nil || len(warnings) > 0 {
		t.Fatal(err, warnings)
	}
	t.Cleanup(s.Close)
	r := repl.New(repl.Options{Session: s.Session, Out: d.u, Ask: d.u})
	t.Cleanup(r.Close)
	if errs, _ := s.StartInPlace(ctx, s.InPlace()); len(errs) > 0 {
		t.Fatalf("start: %v", errs)
	}
	d.u.SetPalette(r.Palette)
	d.u.SetDispatch(r.Run)
	d.typ("/gre")
	if names, _ := d.paletteNames(); strings.Join(names, " ") != "/echo:greet" {
		t.Fatalf("/gre lists %v", names)
	}
	d.press("ctrl+c", "esc")
	d.typ("/call ec")
	if !strings.Contains(d.view(), "› echo {text: string}  Return the given text unchanged.") {
		t.Fatalf("/call ec:\n%s", d.view())
	}
	d.press("enter")
	d.typ(`{"text":"from the palette"}`)
	d.press("enter")
	d.until(func(msg tea.Msg) bool { _, ok := msg.(doneMsg); return ok })
	if tr := d.transcript(); !strings.Contains(tr, "> /call echo {\"text\":\"from the palette\"}\n") || !strings.Contains(tr, "\nfrom the palette") {
		t.Fatalf("transcript:\n%s", d.transcript())
	}
}

// TestGoldenPalette: the palette open under the input after "/c", the
// second match chosen, in an 80×24 frame with the status bar.
func TestGoldenPalette(t *testing.T) {
	d := newDriver(t, board(0))
	d.u.SetPalette(paletteEntries)
	d.session()
	d.typ("/c")
	d.press("down")
	golden(t, "palette", d.frame())
}

// TestGoldenPaletteTools: after "/call " the palette lists the tools
// with their arguments.
func TestGoldenPaletteTools(t *testing.T) {
	d := newDriver(t, board(0))
	d.u.SetPalette(paletteEntries)
	d.session()
	d.typ("/call ")
	golden(t, "palette_tools", d.frame())
}

// TestPalettePaste: a paste edits the line as typing does: the palette
// follows it (closing once the line is past the command word).
func TestPalettePaste(t *testing.T) {
	d, _ := paletteDriver(t, paletteEntries())
	d.typ("/st")
	d.update(tea.PasteMsg{Content: "atus now"})
	if d.m.paletteOpen() || d.m.input.Value() != "/status now" {
		t.Fatalf("after the paste: open %v input %q", d.m.paletteOpen(), d.m.input.Value())
	}
}

// TestPaletteUnderAsk: a question asked while the palette is open takes
// the keys, and the palette does not show under it.
func TestPaletteUnderAsk(t *testing.T) {
	d, _ := paletteDriver(t, paletteEntries())
	d.typ("/")
	a := d.ask(context.Background(), "x", yep.UIAskParams{Prompt: "Name?"})
	if strings.Contains(d.view(), hintPalette) {
		t.Fatalf("the palette shows under a question:\n%s", d.view())
	}
	d.press("down")
	d.typ("n")
	d.press("enter")
	if r := <-a.res; r.Answer != "n" {
		t.Fatalf("answer %+v", r)
	}
	if !d.m.paletteOpen() || d.m.input.Value() != "/" {
		t.Fatalf("after the answer: open %v input %q; want the palette back", d.m.paletteOpen(), d.m.input.Value())
	}
}

// TestPaletteFromOptions: Options.Palette is the palette's source until
// SetPalette replaces it (nil: no palette).
func TestPaletteFromOptions(t *testing.T) {
	d := newDriver(t, nil)
	d.u.o.Palette = paletteEntries
	d.typ("/")
	if !d.m.paletteOpen() {
		t.Fatal("Options.Palette opened no palette")
	}
	d.press("backspace")
	d.u.SetPalette(nil)
	d.typ("/")
	if d.m.paletteOpen() {
		t.Fatal("SetPalette(nil) did not replace Options.Palette")
	}
}
