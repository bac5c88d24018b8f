package tui

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"charm.land/glamour/v2"
	mdstyles "charm.land/glamour/v2/styles"
	"charm.land/lipgloss/v2"

	"yolop.dev/core/yep"
)

// The transcript: what the session reports, rendered. Finished lines are
// printed above the live area (UI.print); what is still going on — the
// model's reply while it streams, the tool calls that run — is shown in
// the live area by the model and printed once it ends:
//
//   - the model's reply is held whole while it streams and printed once,
//     rendered as markdown, when it ends (a tool call starts, the turn
//     ends, or any other line of the turn comes);
//   - a tool call is a block: a header line when it starts, its streamed
//     output indented under it (the header again when another line came
//     between), and a closing line with its outcome and duration; while it
//     runs the live area has a row for it with a spinner;
//   - a /call's result is collapsed to its first resultLines lines;
//   - approvals, hook blocks, errors and the user's lines have styles.
//
// Events whose fields lack the typed data (or kinds not named here) print
// their line-mode text.

// toolIndent starts each line of a tool's streamed output.
const toolIndent = "  │ "

// resultLines is how many lines of a long /call result are shown.
const resultLines = 8

// transcript is the UI's side of the transcript, guarded by UI.mu except
// where noted.
type transcript struct {
	reply   string            // the model's reply while it streams
	toolRaw string            // the next Raw is this call's output ("?" an unknown call's)
	calls   map[string]*block // running calls by key
	last    string            // the call whose header or output was printed last
	st      *lineStyles
	md      *glamour.TermRenderer
	mdWidth int

	// width is the terminal's width, set by the model on resize (no lock).
	width atomic.Int64
	// ticker schedules the spinner's next frame (tea.Tick); nil, as in
	// tests, never ticks, so the frame stays put. Set before Start.
	ticker func(time.Duration, func(time.Time) tea.Msg) tea.Cmd
}

// block is a running tool call.
type block struct {
	name    string // tool (label), as its lines name it
	refused bool   // its denial or hook block was printed, with the reason
}

// lineStyles style the printed transcript; plain when colour is off.
type lineStyles struct {
	user, header, output, ok, fail, faint, warn lipgloss.Style
}

func newLineStyles(colour bool) *lineStyles {
	p := lipgloss.NewStyle()
	if !colour {
		return &lineStyles{p, p, p, p, p, p, p}
	}
	return &lineStyles{
		user:   p.Bold(true).Foreground(lipgloss.Color("6")),
		header: p.Foreground(lipgloss.Color("4")),
		output: p.Faint(true),
		ok:     p.Foreground(lipgloss.Color("2")),
		fail:   p.Foreground(lipgloss.Color("1")),
		faint:  p.Faint(true),
		warn:   p.Bold(true).Foreground(lipgloss.Color("3")),
	}
}

func (u *UI) styled() *lineStyles {
	if u.tr.st == nil {
		u.tr.st = newLineStyles(u.o.Colour)
	}
	return u.tr.st
}

// printLine prints text above the live area as a line that belongs to no
// call's block.
func (u *UI) printLine(text string) {
	u.tr.last = ""
	u.print(text)
}

// event renders one Event; u.mu is held.
func (u *UI) event(kind string, fields map[string]any, text string) {
	st := u.styled()
	switch kind {
	case "text.delta":
		return // the text comes as Raw
	case "tool.update":
		var d yep.ToolUpdateData
		switch {
		case !eventData(fields, &d):
			u.tr.toolRaw = "?"
		case d.Output != "" || d.Progress != nil:
			u.tr.toolRaw = callKey(d.ToolCallID, d.Tool)
		}
		// Else it has no text: no Raw follows.
		return
	case "tool.started":
		var d yep.ToolStartedData
		if !eventData(fields, &d) {
			break
		}
		u.endReply()
		key, name := callKey(d.ToolCallID, d.Tool), callName(d.Tool, d.Extension, d.Capability)
		if u.tr.calls == nil {
			u.tr.calls = map[string]*block{}
		}
		u.tr.calls[key] = &block{name: name}
		what := narration(d)
		head := "→ " + name
		if what != "" {
			head += ": " + what
		}
		u.printLine(st.header.Render(head))
		u.tr.last = key
		row := d.Tool + ": " + what
		if what == "" {
			row = d.Tool
		}
		if label := callLabel(d.Extension, d.Capability); label != "" {
			row = label + " · " + row
		}
		u.send(toolStartMsg{key: key, row: row})
		return
	case "tool.completed":
		var d yep.ToolCompletedData
		if !eventData(fields, &d) {
			break
		}
		u.endReply()
		key := callKey(d.ToolCallID, d.Tool)
		b := u.tr.calls[key]
		delete(u.tr.calls, key)
		name := callName(d.Tool, d.Extension, d.Capability)
		took := st.faint.Render(duration(d.DurationMS))
		if d.Status == yep.ToolOK {
			u.printLine(st.ok.Render("✓") + " " + name + " " + took)
		} else {
			why := d.Status
			if d.Error != "" && (b == nil || !b.refused) {
				why += ": " + d.Error
			}
			u.printLine(st.fail.Render("✗") + " " + name + " " + took + ": " + st.fail.Render(why))
		}
		u.send(toolDoneMsg{key: key})
		return
	case "tool.approval":
		var d yep.ToolApprovalData
		if text == "" {
			return
		}
		u.endReply()
		known := eventData(fields, &d)
		key := callKey(d.ToolCallID, d.Tool)
		b, ok := u.tr.calls[key]
		if known && d.Decision == yep.ApprovalApproved {
			u.printLine(st.faint.Render(text))
		} else {
			if ok {
				b.refused = true // its closing line need not say why again
			}
			u.printLine(st.warn.Render(text))
		}
		if ok && known {
			u.tr.last = key // the line is part of the call's block
		}
		return
	case "status.changed", "config.changed", "warning":
		// Beside the turn: a reply that streams goes on under it.
		if text != "" {
			u.printLine(text)
		}
		return
	case "input":
		u.endReply()
		u.printLine(st.user.Render(text))
		return
	case "result":
		if text == "" {
			return
		}
		u.endReply()
		text = collapse(text, resultLines)
		if isErr, _ := fields["is_error"].(bool); isErr {
			text = st.fail.Render(text)
		}
		u.printLine(text)
		return
	case "turn":
		u.endReply()
		u.printLine(st.faint.Render(text))
		return
	case "error", "timeout", "cancelled":
		u.endReply()
		u.printLine(st.fail.Render(text))
		return
	}
	if text == "" {
		return
	}
	u.endReply()
	u.printLine(text)
}

// raw renders streamed text; u.mu is held. A tool's output prints at
// once, indented under its call; the model's reply is held until it ends.
func (u *UI) raw(text string) {
	key := u.tr.toolRaw
	u.tr.toolRaw = ""
	if key == "" {
		u.tr.reply += text
		u.send(partialMsg(u.tr.reply))
		return
	}
	u.endReply()
	if b, ok := u.tr.calls[key]; ok && u.tr.last != key {
		// Another line came between: say again whose output this is.
		u.printLine(u.styled().header.Render("… " + b.name))
	}
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		u.printLine(u.styled().output.Render(toolIndent) + l)
	}
	if _, ok := u.tr.calls[key]; ok {
		u.tr.last = key
	}
}

// endReply prints the model's reply, rendered as markdown, once it has
// ended, and clears it from the live area.
func (u *UI) endReply() {
	if u.tr.reply == "" {
		return
	}
	reply := u.tr.reply
	u.tr.reply = ""
	u.send(partialMsg(""))
	if strings.TrimSpace(reply) == "" {
		return
	}
	u.printLine(u.markdown(reply))
}

// markdown renders the model's text for the terminal's width: glamour's
// ASCII style with colour off, its dark style otherwise (never the auto
// style, which would query the terminal), without the document margin.
// What glamour cannot render is shown as it came.
func (u *UI) markdown(text string) string {
	width := int(u.tr.width.Load())
	if width <= 0 {
		width = defaultWidth
	}
	if u.tr.md == nil || u.tr.mdWidth != width {
		cfg := *mdstyles.DefaultStyles[mdstyles.DarkStyle]
		if !u.o.Colour {
			cfg = *mdstyles.DefaultStyles[mdstyles.NoTTYStyle]
		}
		var margin uint
		cfg.Document.Margin = &margin
		r, err := glamour.NewTermRenderer(glamour.WithStyles(cfg), glamour.WithWordWrap(width))
		if err != nil {
			return strings.TrimRight(text, "\n")
		}
		u.tr.md, u.tr.mdWidth = r, width
	}
	out, err := u.tr.md.Render(text)
	if err != nil {
		return strings.TrimRight(text, "\n")
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = trimPadding(l)
	}
	// Glamour wraps the document in blank lines.
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

// trailing matches the padding glamour fills a line with: spaces and the
// styles around them.
var trailing = regexp.MustCompile(`(?:\x1b\[[0-9;]*m| )+$`)

// trimPadding drops a rendered line's trailing padding, ending it with a
// reset if it had styles.
func trimPadding(l string) string {
	t := trailing.ReplaceAllString(l, "")
	if strings.Contains(t, "\x1b[") {
		t += "\x1b[m"
	}
	return t
}

// eventData decodes the typed data of a session event's fields into v.
func eventData(fields map[string]any, v any) bool {
	d, ok := fields["data"]
	if !ok {
		return false
	}
	b, err := json.Marshal(d)
	if err != nil {
		return false
	}
	return json.Unmarshal(b, v) == nil
}

// callKey identifies a call among those running.
func callKey(id, tool string) string {
	if id != "" {
		return id
	}
	return "tool:" + tool
}

// callLabel names what serves a call: its extension, "builtin" for a
// built-in tool, else the capability (an MCP server).
func callLabel(ext, capability string) string {
	switch {
	case ext != "":
		return ext
	case strings.HasPrefix(capability, "builtin:"):
		return "builtin"
	}
	return capability
}

// callName is a call as its block's lines name it: `tool (extension)`.
func callName(tool, ext, capability string) string {
	if l := callLabel(ext, capability); l != "" {
		return tool + " (" + l + ")"
	}
	return tool
}

// narration is what a call's lines say it does: the manifest's narration,
// else its arguments, cut short.
func narration(d yep.ToolStartedData) string {
	if d.Narration != "" && d.Narration != d.Tool {
		return d.Narration
	}
	if a := string(d.Args); a != "" && a != "{}" && a != "null" {
		return clip(a, 120)
	}
	return ""
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// duration is a call's duration for its closing line: 340ms, 1.2s, 2m05s.
func duration(ms float64) string {
	d := time.Duration(ms * float64(time.Millisecond))
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// collapse keeps text's first n lines and says how many more there were;
// a text at most one line longer is kept whole.
func collapse(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) <= n+1 {
		return text
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n… (%d more lines)", len(lines)-n)
}

// Messages of the transcript to the model.
type (
	// toolStartMsg: a call started; row is its live row after the
	// spinner.
	toolStartMsg struct{ key, row string }
	// toolDoneMsg: a call ended.
	toolDoneMsg struct{ key string }
)

// live is the model's side of the transcript: the running calls' rows
// and their spinner, which ticks only while a call runs.
type live struct {
	calls   []toolStartMsg
	spin    spinner.Model
	ticking bool // a tick is scheduled
}

func newLive(colour bool) live {
	s := spinner.New(spinner.WithSpinner(spinner.MiniDot))
	if colour {
		s.Style = lipgloss.NewStyle().Foreground(lipgloss.Color("6"))
	}
	return live{spin: s}
}

// liveUpdate handles the transcript's messages and the spinner's ticks.
func (m *model) liveUpdate(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case toolStartMsg:
		m.live.calls = append(m.live.calls, msg)
		if !m.live.ticking {
			return m.tick()
		}
	case toolDoneMsg:
		for i, c := range m.live.calls {
			if c.key == msg.key {
				m.live.calls = append(m.live.calls[:i:i], m.live.calls[i+1:]...)
				break
			}
		}
	case spinner.TickMsg:
		if msg.ID != m.live.spin.ID() {
			return nil
		}
		m.live.ticking = false
		if len(m.live.calls) == 0 {
			return nil // idle: no more frames
		}
		// The spinner's own next tick is dropped: the UI's ticker
		// schedules it, one at a time.
		m.live.spin, _ = m.live.spin.Update(msg)
		return m.tick()
	}
	return nil
}

// tick schedules the spinner's next frame.
func (m *model) tick() tea.Cmd {
	t := m.u.tr.ticker
	if t == nil {
		return nil
	}
	m.live.ticking = true
	id := m.live.spin.ID()
	return t(m.live.spin.Spinner.FPS, func(at time.Time) tea.Msg { return spinner.TickMsg{Time: at, ID: id} })
}

// liveRows are the live area's transcript rows, above the rest of it
// (used rows): the model's reply while it streams, its last rows that fit
// the height, and a spinner row for each running call.
func (m *model) liveRows(used int) []string {
	var calls []string
	for _, c := range m.live.calls {
		calls = append(calls, m.fit(m.live.spin.View()+" "+c.row))
	}
	reply := strings.TrimRight(m.partial, "\n")
	if reply == "" {
		return calls
	}
	room := max(1, m.height-used-len(calls))
	// Each line is a row at least: only the last that fit are wrapped.
	if lines := strings.Split(reply, "\n"); len(lines) > room {
		reply = strings.Join(lines[len(lines)-room:], "\n")
	}
	rows := strings.Split(lipgloss.Wrap(reply, max(1, m.width), ""), "\n")
	if len(rows) > room {
		rows = rows[len(rows)-room:]
	}
	return append(rows, calls...)
}
