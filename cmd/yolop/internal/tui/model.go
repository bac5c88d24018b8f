package tui

import (
	"context"
	"strings"

	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// Default size before the terminal reports its own.
const (
	defaultWidth  = 80
	defaultHeight = 24
	// maxOptions is how many of a selector's options show at once.
	maxOptions = 8
)

// Hints shown above the status bar.
const (
	hintRunning  = "running — Ctrl-C cancels"
	hintCancel   = "cancelling…"
	hintQuit     = "press Ctrl-C again to quit (or Ctrl-D on an empty line)"
	hintBusy     = "a command is running: wait for it, or Ctrl-C cancels it"
	hintStarting = "the session is still starting"
)

// model is the Bubble Tea model: the live area's state. Everything it
// prints goes through its UI, in order with the session's output.
type model struct {
	u      *UI
	width  int
	height int
	st     styles

	input   textarea.Model
	partial string // the model's reply while it streams
	live    live   // the running calls' rows (transcript.go)
	status  string // the status bar, rendered for width
	statusF func(width int) string

	running bool               // a dispatched line runs
	cancel  context.CancelFunc // cancels it
	armed   bool               // Ctrl-C on an idle prompt: a second one quits
	hint    string
	quit    bool

	ask *overlay // the open question, if any

	pal    *palette // the open command palette (palette.go)
	walk   histWalk // Up/Down in the history (history.go)
	search *search  // the open Ctrl-R search
}

// overlay is an open question: a masked or plain line, or a selector.
type overlay struct {
	msg    askMsg
	input  textinput.Model // the answer, or the selector's filter
	cursor int             // the selector's chosen row among matches()
}

// styles are the model's, plain when colour is off.
type styles struct {
	bar, title, chosen, hint lipgloss.Style
}

func newStyles(colour bool) styles {
	if !colour {
		p := lipgloss.NewStyle()
		return styles{bar: p, title: p, chosen: p, hint: p}
	}
	return styles{
		bar:    lipgloss.NewStyle().Reverse(true),
		title:  lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("3")),
		chosen: lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("6")),
		hint:   lipgloss.NewStyle().Faint(true),
	}
}

func newInput(prompt string, colour bool) textinput.Model {
	ti := textinput.New()
	ti.Prompt = prompt
	ti.SetVirtualCursor(false) // the terminal's cursor: no blinking frames
	if !colour {
		ti.SetStyles(textinput.Styles{})
	}
	ti.Focus()
	return ti
}

func newModel(u *UI) *model {
	m := &model{u: u, width: defaultWidth, height: defaultHeight, st: newStyles(u.o.Colour), statusF: u.o.Status}
	m.input = newPrompt()
	m.live = newLive(u.o.Colour)
	m.walk.pos = -1
	m.layout()
	return m
}

// Init implements tea.Model.
func (m *model) Init() tea.Cmd { return nil }

// layout fits the input line and the status bar to the width.
func (m *model) layout() {
	m.input.SetWidth(max(1, m.width-1))
	if m.ask != nil {
		m.ask.input.SetWidth(max(1, m.width-len(m.ask.input.Prompt)-1))
	}
	m.refreshStatus()
}

func (m *model) refreshStatus() {
	m.status = ""
	if m.statusF != nil {
		m.status = m.statusF(m.width)
	}
}

// Update implements tea.Model.
func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.u.tr.width.Store(int64(msg.Width))
		m.layout()
	case statusMsg:
		if msg.set {
			m.statusF = msg.source
		}
		m.refreshStatus()
	case partialMsg:
		m.partial = string(msg)
	case toolStartMsg, toolDoneMsg, spinner.TickMsg:
		return m, m.liveUpdate(msg)
	case askMsg:
		if m.ask != nil {
			msg.reply <- askReply{cancelled: true, busy: true}
			return m, nil
		}
		m.openAsk(msg)
	case askDoneMsg:
		if m.ask != nil && m.ask.msg.id == msg.id {
			m.ask = nil
		}
	case stopMsg:
		return m, m.leave()
	case doneMsg:
		m.running, m.cancel, m.hint = false, nil, ""
		if msg.quit {
			return m, m.leave()
		}
	case tea.KeyPressMsg:
		if m.ask != nil {
			return m, m.askKey(msg)
		}
		return m, m.key(msg)
	case tea.PasteMsg:
		if m.ask != nil {
			var cmd tea.Cmd
			m.ask.input, cmd = m.ask.input.Update(msg)
			m.ask.cursor = 0
			return m, cmd
		}
		return m, m.paste(msg)
	}
	return m, nil
}

// key handles a key at the prompt.
func (m *model) key(k tea.KeyPressMsg) tea.Cmd {
	if cmd, ok := m.promptKey(k); ok {
		return cmd
	}
	switch k.String() {
	case "ctrl+c":
		if m.running {
			m.cancel()
			m.hint = hintCancel
			return nil
		}
		if m.armed {
			return m.leave()
		}
		m.armed = true
		m.input.Reset()
		m.hint = hintQuit
		return nil
	case "ctrl+d":
		if m.input.Value() == "" {
			return m.leave()
		}
	case "enter":
		m.armed = false
		return m.submit()
	}
	m.armed = false
	if m.hint == hintQuit || m.hint == hintStarting {
		m.hint = ""
	}
	before := m.input.Value()
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	m.edited(before)
	return cmd
}

// submit runs the input line on its own goroutine, so the UI stays live
// while it runs.
func (m *model) submit() tea.Cmd {
	line := strings.TrimSpace(m.input.Value())
	if line == "" {
		return nil
	}
	if m.running {
		m.hint = hintBusy
		return nil
	}
	d := m.u.dispatcher()
	if d == nil {
		m.hint = hintStarting
		return nil
	}
	m.input.Reset()
	m.remember(line)
	ctx, cancel := context.WithCancel(context.Background())
	m.running, m.cancel, m.hint = true, cancel, hintRunning
	u := m.u
	return func() tea.Msg {
		defer cancel()
		u.Event("input", nil, echoLine(line))
		return doneMsg{quit: d(ctx, line)}
	}
}

// leave ends the program: the running line is cancelled and an open
// question answered cancelled.
func (m *model) leave() tea.Cmd {
	if m.cancel != nil {
		m.cancel()
	}
	m.answer(askReply{cancelled: true})
	m.quit = true
	return tea.Quit
}

func (m *model) openAsk(msg askMsg) {
	o := &overlay{msg: msg}
	prompt := "answer> "
	if len(msg.p.Options) > 0 {
		prompt = "filter> "
	} else if msg.p.Secret {
		prompt = "secret> "
	}
	o.input = newInput(prompt, m.u.o.Colour)
	if msg.p.Secret && len(msg.p.Options) == 0 {
		o.input.EchoMode = textinput.EchoPassword
	}
	o.input.SetWidth(max(1, m.width-len(prompt)-1))
	m.ask = o
}

// answer closes the overlay with r.
func (m *model) answer(r askReply) {
	if m.ask == nil {
		return
	}
	m.ask.msg.reply <- r
	m.ask = nil
}

// askKey handles a key while the overlay is open: it takes every key.
func (m *model) askKey(k tea.KeyPressMsg) tea.Cmd {
	o := m.ask
	selector := len(o.msg.p.Options) > 0
	switch k.String() {
	case "esc":
		m.answer(askReply{cancelled: true})
		return nil
	case "ctrl+c":
		// The question is cancelled, and with it the call that asked.
		m.answer(askReply{cancelled: true})
		if m.running {
			m.cancel()
			m.hint = hintCancel
		}
		return nil
	case "enter":
		if !selector {
			m.answer(askReply{answer: o.input.Value()})
			return nil
		}
		if opts := o.matches(); len(opts) > 0 {
			m.answer(askReply{answer: opts[min(o.cursor, len(opts)-1)]})
		}
		return nil
	case "up", "ctrl+p":
		if selector {
			if o.cursor > 0 {
				o.cursor--
			}
			return nil
		}
	case "down", "ctrl+n":
		if selector {
			if o.cursor < len(o.matches())-1 {
				o.cursor++
			}
			return nil
		}
	}
	before := o.input.Value()
	var cmd tea.Cmd
	o.input, cmd = o.input.Update(k)
	if selector && o.input.Value() != before {
		o.cursor = 0
	}
	return cmd
}

// matches are the selector's options its filter keeps (case ignored).
func (o *overlay) matches() []string {
	f := strings.ToLower(strings.TrimSpace(o.input.Value()))
	if f == "" {
		return o.msg.p.Options
	}
	var out []string
	for _, opt := range o.msg.p.Options {
		if strings.Contains(strings.ToLower(opt), f) {
			out = append(out, opt)
		}
	}
	return out
}

// View implements tea.Model: the live area, below the printed
// transcript.
func (m *model) View() tea.View {
	if m.quit {
		// The last frame is left on the screen: leave only the
		// transcript there.
		return tea.NewView("")
	}
	var rows []string
	cursorRow, cursorX := -1, 0
	if m.ask != nil {
		cursorRow = len(rows) + 1 // the answer (or filter) line, under the question
		if c := m.ask.input.Cursor(); c != nil {
			cursorX = c.X
		}
		rows = append(rows, m.askRows()...)
	}
	if m.ask == nil && m.search != nil {
		cursorRow = len(rows)
		if c := m.search.query.Cursor(); c != nil {
			cursorX = c.X
		}
	}
	rows = append(rows, m.searchRows()...)
	if m.ask == nil && m.search == nil {
		cursorRow = len(rows)
		if c := m.input.Cursor(); c != nil {
			cursorX, cursorRow = c.X, cursorRow+c.Y
		}
	}
	rows = append(rows, m.fit(m.input.View()))
	rows = append(rows, m.belowInputRows()...)
	if m.hint != "" {
		rows = append(rows, m.st.hint.Render(m.fit(m.hint)))
	}
	if m.statusF != nil {
		rows = append(rows, m.st.bar.Render(pad(m.fit(m.status), m.width)))
	}
	if top := m.liveRows(strings.Count(strings.Join(rows, "\n"), "\n") + 1); len(top) > 0 {
		rows, cursorRow = append(top, rows...), cursorRow+len(top)
	}
	v := tea.NewView(strings.Join(rows, "\n"))
	v.Cursor = tea.NewCursor(cursorX, cursorRow)
	m.fullscreen(&v)
	return v
}

func (m *model) selector() bool { return m.ask != nil && len(m.ask.msg.p.Options) > 0 }

// askRows render the overlay: the question, the answer line (masked for
// a secret) or the filter and the options, and the keys.
func (m *model) askRows() []string {
	o := m.ask
	title := "[" + o.msg.ext + " asks] " + o.msg.p.Prompt
	if o.msg.p.Placeholder != "" && !m.selector() {
		title += " (" + o.msg.p.Placeholder + ")"
	}
	rows := []string{m.st.title.Render(m.fit(title))}
	rows = append(rows, m.fit(o.input.View()))
	if !m.selector() {
		return append(rows, m.st.hint.Render(m.fit("Enter answers · Esc cancels")))
	}
	opts := o.matches()
	if len(opts) == 0 {
		rows = append(rows, m.fit("  (no option matches)"))
	}
	cur := min(o.cursor, max(0, len(opts)-1))
	first := 0
	if cur >= maxOptions {
		first = cur - maxOptions + 1
	}
	for i := first; i < len(opts) && i < first+maxOptions; i++ {
		if i == cur {
			rows = append(rows, m.st.chosen.Render(m.fit("› "+opts[i])))
			continue
		}
		rows = append(rows, m.fit("  "+opts[i]))
	}
	return append(rows, m.st.hint.Render(m.fit("↑/↓ choose · Enter picks · type to filter · Esc cancels")))
}

// fit cuts s to the width.
func (m *model) fit(s string) string {
	if lipgloss.Width(s) <= m.width {
		return s
	}
	return lipgloss.NewStyle().MaxWidth(m.width).Render(s)
}

// pad fills s with spaces to width columns.
func pad(s string, width int) string {
	if w := lipgloss.Width(s); w < width {
		return s + strings.Repeat(" ", width-w)
	}
	return s
}
