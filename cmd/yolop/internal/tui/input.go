package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
)

// The prompt's input is a textarea that grows with its lines: Enter
// submits the whole text, and Alt+Enter, Shift+Enter (where the terminal
// reports it) or Ctrl-J inserts a newline.
const (
	// promptFirst starts the input's first row, promptMore the others.
	promptFirst = "> "
	promptMore  = "  "
	// maxInputRows is how many rows of the input show at once; a longer
	// text scrolls with the cursor.
	maxInputRows = 10
	// maxInputLines bounds the text, in rows.
	maxInputLines = 5000
)

// newlineKeys insert a newline into the input.
var newlineKeys = []string{"alt+enter", "shift+enter", "ctrl+j"}

func newPrompt() textarea.Model {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.SetPromptFunc(len(promptFirst), func(p textarea.PromptInfo) string {
		if p.LineNumber == 0 {
			return promptFirst
		}
		return promptMore
	})
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = maxInputRows
	ta.MaxContentHeight = maxInputLines
	ta.CharLimit = 0
	ta.SetStyles(textarea.Styles{}) // plain: no cursor-line background
	ta.SetVirtualCursor(false)      // the terminal's cursor: no blinking frames
	km := textarea.DefaultKeyMap()
	km.InsertNewline = key.NewBinding(key.WithKeys(newlineKeys...))
	km.Paste = key.NewBinding(key.WithDisabled()) // the terminal pastes (bracketed paste)
	ta.KeyMap = km
	ta.Focus()
	return ta
}

// echoLine is a submitted line as the transcript shows it: "> " before
// the first line and the others indented under it.
func echoLine(line string) string {
	return promptFirst + strings.ReplaceAll(line, "\n", "\n"+promptMore)
}

// promptKey gives a key at the prompt to what is open over it first —
// the Ctrl-R search, then the palette — and handles the history's keys;
// ok is false for a key the prompt handles as before.
func (m *model) promptKey(k tea.KeyPressMsg) (cmd tea.Cmd, ok bool) {
	if m.search != nil {
		if cmd, ok := m.searchKey(k); ok {
			return cmd, true
		}
	}
	if cmd, ok := m.paletteKey(k); ok {
		return cmd, true
	}
	switch k.String() {
	case "ctrl+c":
		// Ctrl-C clears the line (or cancels what runs): nothing stays
		// open over it.
		m.pal, m.walk.pos = nil, -1
	case "ctrl+r":
		m.pal = nil
		m.openSearch()
		return nil, true
	case "up", "ctrl+p":
		return nil, m.walkHistory(true)
	case "down", "ctrl+n":
		return nil, m.walkHistory(false)
	}
	return nil, false
}

// edited follows an edit of the input (before is its text before the
// key): an edited line is no longer a step of the history walk, and the
// palette follows what the line now says.
func (m *model) edited(before string) {
	if m.input.Value() == before {
		return
	}
	m.walk.pos = -1
	m.paletteEdited(before)
}

// paste puts a paste where the keys go: into the search's query while
// one is open, else into the input, as typing would.
func (m *model) paste(msg tea.PasteMsg) tea.Cmd {
	var cmd tea.Cmd
	if s := m.search; s != nil {
		before := s.query.Value()
		s.fit(m.width)
		s.query, cmd = s.query.Update(msg)
		if s.query.Value() != before {
			s.skip = 0
			m.findMatch()
		}
		return cmd
	}
	before := m.input.Value()
	m.input, cmd = m.input.Update(msg)
	m.edited(before)
	return cmd
}

// belowInputRows are what shows under the input: the palette, or the
// search's keys; nothing while a question has the keys.
func (m *model) belowInputRows() []string {
	if m.ask != nil {
		return nil
	}
	if m.search != nil {
		return []string{m.st.hint.Render(m.fit(m.searchHint()))}
	}
	return m.paletteRows()
}
