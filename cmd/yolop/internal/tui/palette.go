package tui

import (
	"strconv"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"yolop.dev/harness/repl"
)

// The command palette: typing "/" into an empty input opens a list of
// the commands under the input, filtered by what follows the "/"; after
// "/call " it lists the tools with their arguments. Up/Down choose, Tab
// completes the chosen entry into the input, Enter runs an entry that
// needs no argument and completes one that does, Esc closes the list
// until the input is emptied. What it lists comes from the session
// ([repl.REPL.Palette]); the UI only filters and draws it.

// maxPaletteRows is how many of the palette's entries show at once.
const maxPaletteRows = 8

// hintPalette is the palette's keys, under its entries.
const hintPalette = "↑/↓ choose · Tab fills in · Enter runs · Esc closes"

// paletteSource is where the palette's entries come from: Options.Palette
// until SetPalette replaces it.
type paletteSource struct {
	mu  sync.Mutex
	f   func() []repl.Entry
	set bool // SetPalette was called: f replaces Options.Palette
}

// SetPalette sets what the command palette lists (nil: no palette),
// replacing Options.Palette: a session hands over its REPL's Palette once
// it is open. It is called when the palette opens, on the UI's goroutine,
// so it must not block.
func (u *UI) SetPalette(f func() []repl.Entry) {
	u.pal.mu.Lock()
	u.pal.f, u.pal.set = f, true
	u.pal.mu.Unlock()
}

func (u *UI) paletteEntries() []repl.Entry {
	u.pal.mu.Lock()
	f := u.pal.f
	if !u.pal.set {
		f = u.o.Palette
	}
	u.pal.mu.Unlock()
	if f == nil {
		return nil
	}
	return f()
}

// palette is the open palette's state.
type palette struct {
	entries []repl.Entry // fetched when it opened
	filter  string       // what the matches were last computed for
	tools   bool         // listing the tools of "/call "
	cursor  int          // the chosen row among matches
	matches []repl.Entry
}

// paletteEdited follows an edit of the input: a "/" typed into an empty
// input opens the palette; the palette filters by what follows the "/"
// (or "/call "), and closes when the line is past the command word (or
// the tool name), spans lines, or is emptied.
func (m *model) paletteEdited(before string) {
	v := m.input.Value()
	if before == "" && v == "/" && m.pal == nil {
		entries := m.u.paletteEntries()
		if len(entries) == 0 {
			return
		}
		m.pal = &palette{entries: entries, filter: "\x00"}
	}
	if m.pal == nil {
		return
	}
	filter, tools, ok := paletteFilter(v)
	if !ok {
		m.pal = nil
		return
	}
	if filter != m.pal.filter || tools != m.pal.tools {
		m.pal.filter, m.pal.tools, m.pal.cursor = filter, tools, 0
		m.pal.matches = matchEntries(m.pal.entries, filter, tools)
	}
}

// paletteFilter is what the palette filters by for the input v: the
// command word after "/", or the tool name after "/call ". ok is false
// when the palette has nothing to offer for v.
func paletteFilter(v string) (filter string, tools, ok bool) {
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, "\n\t") {
		return "", false, false
	}
	if rest, isCall := strings.CutPrefix(v, "/call "); isCall {
		if strings.Contains(rest, " ") {
			return "", false, false
		}
		return rest, true, true
	}
	if strings.Contains(v, " ") {
		return "", false, false
	}
	return v[1:], false, true
}

// matchEntries are the commands (or, with tools, the tools) whose name
// contains filter, case ignored: those it starts first, each group in the
// source's order.
func matchEntries(entries []repl.Entry, filter string, tools bool) []repl.Entry {
	f := strings.ToLower(filter)
	var prefix, inner []repl.Entry
	for _, e := range entries {
		if (e.Kind == repl.KindTool) != tools {
			continue
		}
		name := strings.ToLower(strings.TrimPrefix(e.Name, "/"))
		switch {
		case strings.HasPrefix(name, f):
			prefix = append(prefix, e)
		case strings.Contains(name, f):
			inner = append(inner, e)
		}
	}
	return append(prefix, inner...)
}

// paletteOpen reports whether the palette shows: it is open and has a
// match. With none, the keys are the prompt's (Enter runs the line).
func (m *model) paletteOpen() bool { return m.pal != nil && len(m.pal.matches) > 0 }

// paletteKey handles a key while the palette shows; ok is false for a
// key it leaves to the prompt.
func (m *model) paletteKey(k tea.KeyPressMsg) (cmd tea.Cmd, ok bool) {
	if !m.paletteOpen() {
		return nil, false
	}
	p := m.pal
	switch k.String() {
	case "up", "ctrl+p":
		p.cursor = max(0, p.cursor-1)
		return nil, true
	case "down", "ctrl+n":
		p.cursor = min(len(p.matches)-1, p.cursor+1)
		return nil, true
	case "esc":
		m.pal = nil
		return nil, true
	case "tab":
		m.complete(p.matches[p.cursor])
		return nil, true
	case "enter":
		e := p.matches[p.cursor]
		if e.NeedsArgs {
			m.complete(e)
			return nil, true
		}
		line := e.Name
		if p.tools {
			line = "/call " + e.Name
		}
		m.setInput(line)
		m.pal = nil
		return m.submit(), true
	}
	return nil, false
}

// complete puts the entry into the input: a command with a space after
// it when it takes arguments (after "/call " the palette lists the
// tools), a tool as "/call <tool> " for its JSON arguments.
func (m *model) complete(e repl.Entry) {
	before := m.input.Value()
	line := e.Name
	switch {
	case m.pal.tools:
		line = "/call " + e.Name + " "
	case e.Args != "":
		line += " "
	}
	m.setInput(line)
	m.paletteEdited(before)
}

// paletteRows render the palette under the input: at most
// maxPaletteRows entries around the chosen one, each its name and
// arguments in a column and its description, then the keys.
func (m *model) paletteRows() []string {
	if !m.paletteOpen() {
		return nil
	}
	p := m.pal
	col := 0
	for _, e := range p.matches {
		col = max(col, lipgloss.Width(entryHead(e)))
	}
	col = min(col, m.width/2)
	first := 0
	if p.cursor >= maxPaletteRows {
		first = p.cursor - maxPaletteRows + 1
	}
	var rows []string
	for i := first; i < len(p.matches) && i < first+maxPaletteRows; i++ {
		e := p.matches[i]
		head := entryHead(e)
		if lipgloss.Width(head) > col {
			head = string([]rune(head)[:max(0, col-1)]) + "…"
		}
		row := head + strings.Repeat(" ", col-lipgloss.Width(head)) + "  " + e.Description
		if i == p.cursor {
			rows = append(rows, m.st.chosen.Render(m.fit("› "+row)))
			continue
		}
		rows = append(rows, m.fit("  "+row))
	}
	more := ""
	if n := len(p.matches) - maxPaletteRows; n > 0 {
		more = " · " + strconv.Itoa(len(p.matches)) + " entries"
	}
	return append(rows, m.st.hint.Render(m.fit(hintPalette+more)))
}

// entryHead is an entry's name and argument form.
func entryHead(e repl.Entry) string {
	if e.Args == "" {
		return e.Name
	}
	return e.Name + " " + e.Args
}
