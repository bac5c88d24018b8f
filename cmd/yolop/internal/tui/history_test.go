package tui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"yolop.dev/harness"
)

var (
	ctrlR      = tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl}
	altEnter   = tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt}
	shiftEnter = tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModShift}
	ctrlJ      = tea.KeyPressMsg{Code: 'j', Mod: tea.ModCtrl}
	tab        = tea.KeyPressMsg{Code: tea.KeyTab}
)

// historyDriver is a driver whose UI keeps its history in a file, with
// lines already there (oldest first).
func historyDriver(t *testing.T, lines ...string) (*driver, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), harness.HistoryFile)
	h := harness.LoadHistory(path, nil)
	for _, l := range lines {
		h.Add(l)
	}
	d := newDriver(t, nil)
	d.u.o.History = harness.LoadHistory(path, nil)
	return d, path
}

// TestHistoryWalk: Up walks the history from the most recent line, Down
// back to what was typed before the walk; the ends stay put; a line that
// runs joins the history in its file, and an edited line ends the walk.
func TestHistoryWalk(t *testing.T) {
	d, path := historyDriver(t, "first", "second", "third")
	d.typ("dra")
	want := func(v string) {
		t.Helper()
		if got := d.m.input.Value(); got != v {
			t.Fatalf("input = %q, want %q", got, v)
		}
	}
	d.press("up")
	want("third")
	d.press("up", "up")
	want("first")
	d.press("up") // the oldest: stays
	want("first")
	d.press("down")
	want("second")
	d.press("down", "down")
	want("dra")
	d.press("down") // past the draft: stays
	want("dra")

	// Editing a recalled line starts from it: Down does not bring the
	// draft back.
	d.press("up")
	d.typ("!")
	want("third!")
	d.press("down")
	want("third!")

	runs := make(chan string, 1)
	d.u.SetDispatch(func(ctx context.Context, line string) bool { runs <- line; return false })
	d.press("enter")
	if got := <-runs; got != "third!" {
		t.Fatalf("ran %q", got)
	}
	d.until(func(msg tea.Msg) bool { _, ok := msg.(doneMsg); return ok })
	if h := harness.LoadHistory(path, nil); h.Len() != 4 || h.At(0) != "third!" {
		t.Fatalf("the history file has %d lines, the last %q; want the line that ran", h.Len(), h.At(0))
	}
	d.press("up")
	want("third!")
}

// TestHistoryMultiline: in a text of several lines Up and Down move the
// cursor between its lines first; only from the first (last) line do
// they walk the history.
func TestHistoryMultiline(t *testing.T) {
	d, _ := historyDriver(t, "older")
	d.typ("one")
	d.update(altEnter)
	d.typ("two")
	d.press("up")
	if d.m.input.Value() != "one\ntwo" || d.m.input.Line() != 0 {
		t.Fatalf("Up on the second line: input=%q line=%d; want the cursor moved up", d.m.input.Value(), d.m.input.Line())
	}
	d.press("up")
	if d.m.input.Value() != "older" {
		t.Fatalf("Up on the first line: input=%q, want the history's line", d.m.input.Value())
	}
	d.press("down")
	if d.m.input.Value() != "one\ntwo" {
		t.Fatalf("Down back: input=%q, want the draft", d.m.input.Value())
	}
}

// TestHistorySearch: Ctrl-R opens a search; what is typed finds the most
// recent line containing it (case ignored), shown in the input; Ctrl-R
// again goes to the next older match, skipping repeats, and stays on the
// oldest; Enter takes the match into the input without running it; Esc
// puts back what was typed; no match says so.
func TestHistorySearch(t *testing.T) {
	d, _ := historyDriver(t, "what does main.go do?", "git status", "read MAIN.go", "git status again", "read MAIN.go", "explain main")
	runs := make(chan string, 1)
	d.u.SetDispatch(func(ctx context.Context, line string) bool { runs <- line; return false })
	d.typ("draft")
	d.update(ctrlR)
	if d.m.search == nil || !strings.Contains(d.view(), searchPrompt) || !strings.Contains(d.view(), hintSearch) {
		t.Fatalf("Ctrl-R opened no search:\n%s", d.view())
	}
	d.typ("main")
	if v := d.m.input.Value(); v != "explain main" {
		t.Fatalf("search main: input %q, want the most recent match", v)
	}
	d.update(ctrlR)
	if v := d.m.input.Value(); v != "read MAIN.go" {
		t.Fatalf("Ctrl-R again: %q, want read MAIN.go", v)
	}
	d.update(ctrlR) // the repeat of read MAIN.go is skipped
	if v := d.m.input.Value(); v != "what does main.go do?" {
		t.Fatalf("Ctrl-R a third time: %q", v)
	}
	d.update(ctrlR) // no older match: stays
	if v := d.m.input.Value(); v != "what does main.go do?" {
		t.Fatalf("Ctrl-R past the oldest: %q", v)
	}
	// The view shows the query with the cursor on it, and the match in
	// the input line.
	v := d.m.View()
	rows := strings.Split(v.Content, "\n")
	if v.Cursor == nil || !strings.HasPrefix(rows[v.Cursor.Y], searchPrompt+"main") || !strings.Contains(v.Content, "> what does main.go do?") {
		t.Fatalf("cursor %+v on the wrong row, or no match shown:\n%s", v.Cursor, v.Content)
	}
	d.press("enter")
	if d.m.search != nil || d.m.running || d.m.input.Value() != "what does main.go do?" {
		t.Fatalf("Enter: search=%v running=%v input=%q; want the match in the input, not run", d.m.search != nil, d.m.running, d.m.input.Value())
	}
	if len(runs) != 0 {
		t.Fatal("Enter in the search ran the line")
	}

	d.press("ctrl+c") // clears the line
	d.typ("mine")
	d.update(ctrlR)
	d.typ("status")
	if v := d.m.input.Value(); v != "git status again" {
		t.Fatalf("search status: %q", v)
	}
	d.press("esc")
	if d.m.search != nil || d.m.input.Value() != "mine" {
		t.Fatalf("Esc: search=%v input=%q, want the typed line back", d.m.search != nil, d.m.input.Value())
	}

	d.update(ctrlR)
	d.typ("zzz")
	if !strings.Contains(d.view(), "(no match)") || d.m.input.Value() != "mine" {
		t.Fatalf("no match: input=%q view:\n%s", d.m.input.Value(), d.view())
	}
	d.press("backspace", "backspace", "backspace")
	d.typ("git")
	if v := d.m.input.Value(); v != "git status again" {
		t.Fatalf("after editing the query: %q", v)
	}
	// Ctrl-C closes the search and then clears the line, as at the
	// prompt.
	d.press("ctrl+c")
	if d.m.search != nil || d.m.input.Value() != "" || !d.m.armed {
		t.Fatalf("Ctrl-C in the search: search=%v input=%q armed=%v", d.m.search != nil, d.m.input.Value(), d.m.armed)
	}
}

// TestNoHistory: without a history Up, Down and Ctrl-R do nothing.
func TestNoHistory(t *testing.T) {
	d := newDriver(t, nil)
	d.typ("x")
	d.press("up", "down")
	d.update(ctrlR)
	if d.m.search != nil || d.m.input.Value() != "x" {
		t.Fatalf("search=%v input=%q", d.m.search != nil, d.m.input.Value())
	}
}

// TestPasteIntoSearch: a paste during a Ctrl-R search goes to its query,
// not the input.
func TestPasteIntoSearch(t *testing.T) {
	d, _ := historyDriver(t, "git status", "make test")
	d.update(ctrlR)
	d.update(tea.PasteMsg{Content: "stat"})
	if d.m.search == nil || d.m.search.query.Value() != "stat" || d.m.input.Value() != "git status" {
		t.Fatalf("query %q input %q; want the paste in the query and its match shown", d.m.search.query.Value(), d.m.input.Value())
	}
}

// TestSearchResize: the search's query line follows a resize: a long
// query scrolls within the new width, the cursor on the screen.
func TestSearchResize(t *testing.T) {
	d, _ := historyDriver(t, "x")
	d.update(ctrlR)
	d.update(tea.WindowSizeMsg{Width: 40, Height: 10})
	d.typ(strings.Repeat("q", 60))
	v := d.m.View()
	if v.Cursor == nil || v.Cursor.X >= 40 {
		t.Fatalf("cursor %+v past the width 40:\n%s", v.Cursor, v.Content)
	}
}
