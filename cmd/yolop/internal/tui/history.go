package tui

import (
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
)

// History at the prompt: Up and Down walk the lines run before (the
// harness's persisted history, most recent first), and Ctrl-R searches
// them.

// histWalk is where Up/Down are in the history.
type histWalk struct {
	pos   int    // the line shown: 0 is the most recent; -1 not walking
	draft string // what was typed before the walk began
}

// search is an open Ctrl-R search.
type search struct {
	query textinput.Model
	skip  int    // Ctrl-R pressed again: how many older matches to pass
	match string // the line found, "" when none matches
	draft string // the input before the search, back on Esc
}

const (
	hintSearch   = "Ctrl-R older · Enter takes it · Esc cancels"
	searchPrompt = "history search> "
)

// remember adds a line that runs to the history.
func (m *model) remember(line string) {
	m.walk = histWalk{pos: -1}
	if h := m.u.o.History; h != nil {
		h.Add(line)
	}
}

// walkHistory moves through the history: older for Up, newer for Down.
// It reports false when the key is the input's own: the cursor is not on
// the first row (Up) or the last (Down) of a multi-line text, or there is
// nowhere to go.
func (m *model) walkHistory(older bool) bool {
	h := m.u.o.History
	if h == nil {
		return false
	}
	if older && m.input.Line() > 0 || !older && m.input.Line() < m.input.LineCount()-1 {
		return false
	}
	switch {
	case older && m.walk.pos+1 < h.Len():
		if m.walk.pos < 0 {
			m.walk.draft = m.input.Value()
		}
		m.walk.pos++
		m.setInput(h.At(m.walk.pos))
	case !older && m.walk.pos >= 0:
		m.walk.pos--
		if m.walk.pos < 0 {
			m.setInput(m.walk.draft)
		} else {
			m.setInput(h.At(m.walk.pos))
		}
	default:
		return false
	}
	return true
}

// setInput replaces the input's text, the cursor at its end.
func (m *model) setInput(s string) {
	m.input.SetValue(s)
	m.input.MoveToEnd()
}

// openSearch starts a Ctrl-R search over the history.
func (m *model) openSearch() {
	if m.u.o.History == nil {
		return
	}
	m.search = &search{query: newInput(searchPrompt, m.u.o.Colour), draft: m.input.Value()}
	m.search.fit(m.width)
	m.findMatch()
}

// findMatch shows the search's match in the input: the skip-th most
// recent distinct line that contains the query (case ignored). When no
// older one matches, Ctrl-R stays on the last that did.
func (m *model) findMatch() {
	s := m.search
	q := strings.ToLower(s.query.Value())
	h := m.u.o.History
	seen := map[string]bool{}
	var found []string
	for i := 0; i < h.Len() && len(found) <= s.skip; i++ {
		l := h.At(i)
		if seen[l] || !strings.Contains(strings.ToLower(l), q) {
			continue
		}
		seen[l] = true
		found = append(found, l)
	}
	if len(found) == 0 {
		s.skip, s.match = 0, ""
		m.setInput(s.draft)
		return
	}
	s.skip = min(s.skip, len(found)-1)
	s.match = found[s.skip]
	m.setInput(s.match)
}

// fit sizes the query line to the terminal's width, before each edit so
// that it follows a resize.
func (s *search) fit(width int) { s.query.SetWidth(max(1, width-len(searchPrompt)-1)) }

// searchKey handles a key while the search is open: Ctrl-R finds the
// next older match, Enter takes the match into the input (without running
// it), Esc puts back what was typed before; other keys edit the query.
// Ctrl-C closes the search as Esc does and then does what it does at the
// prompt (ok false).
func (m *model) searchKey(k tea.KeyPressMsg) (cmd tea.Cmd, ok bool) {
	s := m.search
	switch k.String() {
	case "ctrl+r":
		s.skip++
		m.findMatch()
		return nil, true
	case "enter":
		m.search = nil
		if s.match == "" {
			m.setInput(s.draft)
		}
		return nil, true
	case "esc", "ctrl+g":
		m.search = nil
		m.setInput(s.draft)
		return nil, true
	case "ctrl+c":
		m.search = nil
		m.setInput(s.draft)
		return nil, false
	}
	before := s.query.Value()
	s.fit(m.width)
	s.query, cmd = s.query.Update(k)
	if s.query.Value() != before {
		s.skip = 0
		m.findMatch()
	}
	return cmd, true
}

// searchRows render the open search above the input: its query.
func (m *model) searchRows() []string {
	if m.search == nil {
		return nil
	}
	return []string{m.fit(m.search.query.View())}
}

// searchHint is the search's keys, after whether anything matches.
func (m *model) searchHint() string {
	if m.search.match == "" && m.search.query.Value() != "" {
		return "(no match) · " + hintSearch
	}
	return hintSearch
}
