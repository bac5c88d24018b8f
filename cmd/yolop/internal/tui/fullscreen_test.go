package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// fullscreenDriver is a driver whose UI runs with Options.Fullscreen, its
// lines going through the fullscreen print as New wires it.
func fullscreenDriver(t *testing.T) *driver {
	d := newDriver(t, func(int) string { return "the status bar" })
	d.u.o.Fullscreen = true
	d.u.print = d.u.fullscreenPrint(d.u.print)
	d.update(tea.WindowSizeMsg{Width: 40, Height: 8})
	return d
}

// TestFullscreenDrawsTheTranscript: on the alternate screen the
// transcript is drawn above the live area (nothing is printed into the
// scrollback), only its last rows that fit the height, long lines wrapped
// to the width, with the cursor on the input line.
func TestFullscreenDrawsTheTranscript(t *testing.T) {
	d := fullscreenDriver(t)
	if v := d.m.View(); !v.AltScreen {
		t.Fatal("the fullscreen view is not on the alternate screen")
	}
	for i := 1; i <= 10; i++ {
		d.u.Event("info", nil, fmt.Sprintf("line %d", i))
	}
	d.u.Event("info", nil, strings.Repeat("x", 50))
	d.pump()
	if tr := d.transcript(); tr != "" {
		t.Errorf("lines were printed into the scrollback:\n%s", tr)
	}
	v := d.m.View()
	rows := strings.Split(v.Content, "\n")
	want := []string{"line 7", "line 8", "line 9", "line 10", strings.Repeat("x", 40), strings.Repeat("x", 10), "> ", "the status bar"}
	if len(rows) != len(want) {
		t.Fatalf("the frame has %d rows, want %d (the height):\n%s", len(rows), len(want), v.Content)
	}
	for i, w := range want {
		if strings.TrimRight(rows[i], " ") != strings.TrimRight(w, " ") {
			t.Errorf("row %d = %q, want %q", i, rows[i], w)
		}
	}
	if v.Cursor == nil || v.Cursor.Y != 6 {
		t.Errorf("the cursor is at %+v, want row 6 (the input line)", v.Cursor)
	}
}

// TestInlineLeavesTheScreen: without Fullscreen the view stays on the
// main screen and lines are printed above it, not drawn in it.
func TestInlineLeavesTheScreen(t *testing.T) {
	d := newDriver(t, nil)
	d.u.Event("info", nil, "printed")
	d.pump()
	v := d.m.View()
	if v.AltScreen || strings.Contains(v.Content, "printed") || d.transcript() != "printed" {
		t.Errorf("inline: alt screen %v, view %q, printed %q", v.AltScreen, v.Content, d.transcript())
	}
}

// TestFullscreenAfterTheEnd: what the session says after the program
// has ended prints plainly, as inline.
func TestFullscreenAfterTheEnd(t *testing.T) {
	d := fullscreenDriver(t)
	close(d.u.done)
	d.u.Event("warning", nil, "closing")
	if d.transcript() != "closing" {
		t.Errorf("printed %q after the end", d.transcript())
	}
}

// TestScreenLogKeepsTheLastLines: the kept transcript is bounded.
func TestScreenLogKeepsTheLastLines(t *testing.T) {
	var l screenLog
	for i := range maxScreenLines + 5 {
		l.add(fmt.Sprint(i))
	}
	if len(l.lines) != maxScreenLines || l.lines[0] != "5" {
		t.Errorf("kept %d lines from %q", len(l.lines), l.lines[0])
	}
	if got := l.tail(2, 10); strings.Join(got, ",") != fmt.Sprintf("%d,%d", maxScreenLines+3, maxScreenLines+4) {
		t.Errorf("tail = %q", got)
	}
}
