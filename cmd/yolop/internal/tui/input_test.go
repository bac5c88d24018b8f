package tui

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// TestMultiline: Alt+Enter, Shift+Enter and Ctrl-J each start a new line
// in the input, which grows a row per line with the cursor on the last;
// Enter runs the whole text as one line, echoed with its lines indented
// under the prompt.
func TestMultiline(t *testing.T) {
	d := newDriver(t, func(int) string { return "bar" })
	runs := make(chan string, 1)
	d.u.SetDispatch(func(ctx context.Context, line string) bool { runs <- line; return false })
	d.typ("first")
	d.update(altEnter)
	d.typ("second")
	d.update(shiftEnter)
	d.typ("third")
	d.update(ctrlJ)
	d.typ("fourth")
	if got := d.m.input.Value(); got != "first\nsecond\nthird\nfourth" {
		t.Fatalf("input = %q", got)
	}
	v := d.m.View()
	rows := strings.Split(v.Content, "\n")
	var trimmed []string
	for _, r := range rows {
		trimmed = append(trimmed, strings.TrimRight(r, " "))
	}
	if want := "> first\n  second\n  third\n  fourth\nbar"; strings.Join(trimmed, "\n") != want {
		t.Fatalf("view:\n%s\nwant:\n%s", strings.Join(trimmed, "\n"), want)
	}
	if v.Cursor == nil || v.Cursor.Y != 3 || v.Cursor.X != len("  fourth") {
		t.Fatalf("cursor at %+v, want the end of the fourth row", v.Cursor)
	}
	d.press("enter")
	if got := <-runs; got != "first\nsecond\nthird\nfourth" {
		t.Fatalf("ran %q", got)
	}
	d.until(func(msg tea.Msg) bool { _, ok := msg.(doneMsg); return ok })
	if want := "> first\n  second\n  third\n  fourth"; d.transcript() != want {
		t.Fatalf("transcript %q, want %q", d.transcript(), want)
	}
	if d.m.input.Value() != "" || len(strings.Split(d.view(), "\n")) != 2 {
		t.Fatalf("after the run the input is %q and the view:\n%s", d.m.input.Value(), d.view())
	}
}

// TestPasteMultiline: a pasted text keeps its lines.
func TestPasteMultiline(t *testing.T) {
	d := newDriver(t, nil)
	d.update(tea.PasteMsg{Content: "a\nb"})
	if got := d.m.input.Value(); got != "a\nb" {
		t.Fatalf("input = %q", got)
	}
}

// TestLongLineWraps: a line longer than the width wraps onto more rows
// of the input instead of leaving the screen; no row is wider than the
// terminal.
func TestLongLineWraps(t *testing.T) {
	d := newDriver(t, nil)
	d.update(tea.WindowSizeMsg{Width: 40, Height: 10})
	d.typ(strings.Repeat("word ", 20))
	rows := strings.Split(d.view(), "\n")
	if len(rows) < 3 {
		t.Fatalf("100 columns in 40 took %d rows:\n%s", len(rows), d.view())
	}
	for _, r := range rows {
		if w := len([]rune(r)); w > 40 {
			t.Fatalf("row of %d columns: %q", w, r)
		}
	}
}
