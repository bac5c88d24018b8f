package tui

import (
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// maxScreenLines is how many transcript lines the fullscreen UI keeps.
const maxScreenLines = 2000

// screenLog is the transcript of the fullscreen UI: on the alternate
// screen nothing can be printed into the scrollback, so the lines that
// inline mode prints are kept here and drawn above the live area. It is
// written from any goroutine and read by View.
type screenLog struct {
	mu    sync.Mutex
	lines []string
}

// add appends text's lines, dropping the oldest beyond maxScreenLines.
func (l *screenLog) add(text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, strings.Split(text, "\n")...)
	if over := len(l.lines) - maxScreenLines; over > 0 {
		l.lines = append(l.lines[:0:0], l.lines[over:]...)
	}
}

// tail returns the last rows of the transcript, wrapped to width, that
// fit in n rows.
func (l *screenLog) tail(n, width int) []string {
	if n <= 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var rows []string
	for i := len(l.lines) - 1; i >= 0 && len(rows) < n; i-- {
		wrapped := strings.Split(lipgloss.Wrap(l.lines[i], max(1, width), ""), "\n")
		for j := len(wrapped) - 1; j >= 0 && len(rows) < n; j-- {
			rows = append(rows, wrapped[j])
		}
	}
	for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
		rows[i], rows[j] = rows[j], rows[i]
	}
	return rows
}

// screenMsg redraws the fullscreen transcript after a line was added.
type screenMsg struct{}

// fullscreenPrint returns the print of the fullscreen UI: while the
// program runs, a line joins the transcript drawn on the alternate
// screen; after it has ended, inline prints it.
func (u *UI) fullscreenPrint(inline func(text string)) func(text string) {
	u.screen = &screenLog{}
	return func(text string) {
		select {
		case <-u.done:
			inline(text)
		default:
			u.screen.add(text)
			u.send(screenMsg{})
		}
	}
}

// fullscreen puts v on the alternate screen with as much of the
// transcript above the live area as fits the height; the cursor moves
// down with the live area. Inline it leaves v as it is.
func (m *model) fullscreen(v *tea.View) {
	if !m.u.o.Fullscreen || m.u.screen == nil {
		return
	}
	v.AltScreen = true
	live := strings.Count(v.Content, "\n") + 1
	rows := m.u.screen.tail(m.height-live, m.width)
	if len(rows) == 0 {
		return
	}
	v.Content = strings.Join(rows, "\n") + "\n" + v.Content
	if v.Cursor != nil {
		v.Cursor.Y += len(rows)
	}
}
