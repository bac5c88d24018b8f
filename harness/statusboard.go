package harness

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/width"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
)

// A StatusBoard keeps what a front-end's status bar shows, from a
// session's typed event stream and its stats: the model and how much of
// its context window the last request used, each extension's health and
// latest status text (status/changed), the MCP servers' state and the
// number of tool calls running. A front-end (the TUI, or any other) makes
// one per session, renders [StatusBoard.Snapshot] (or its
// [StatusSnapshot.Line]) when told of a change, and closes it.
//
// Sources: extension health and status text are [host.Session.Stats],
// refreshed on every event but tool.started, llm.generation and the
// streaming ones (tool.update, text.delta) — extension.started,
// extension.degraded, extension.restarted, status.changed, and
// tool.completed (a server that crashed during a call, which has no event
// of its own, is seen then); context use is the input tokens
// of the latest llm.generation; running counts tool.started minus
// tool.completed. MCP servers' state has no event: it is read from the
// source [StatusBoard.SetMCP] sets at each Snapshot.
type StatusBoard struct {
	s        *host.Session
	onChange func()
	cancel   func()

	mu      sync.Mutex
	model   string
	window  int
	used    int
	running int
	exts    []ExtensionStatus
	kept    []ExtensionStatus
	mcp     func() []MCPState
}

// MCPState is one MCP server's state as a status bar shows it: its name
// and a state word (e.g. connected, failed).
type MCPState struct{ Name, State string }

// An ExtensionStatus is one extension on the status bar.
type ExtensionStatus struct {
	Name string
	// Health is the extension's [host.State] (ready, idle, starting,
	// crashed, degraded, off), "blocked" or "off" for an enabled
	// extension the session did not start ([Session.KeptOff]), except that a ready extension whose last
	// handshake the clamp narrowed (it served something beyond its
	// approved manifest, see [host.Stats].Refusals) is "refused": it
	// runs, with less than it asked for.
	Health string
	// Text is the extension's latest status/changed text; empty when it
	// set none or cleared it.
	Text string
	// Reason says why the extension is degraded, crashed, off or refused
	// (the host's reason, or the first refusal); empty otherwise.
	Reason string
}

// HealthRefused is the Health of a ready extension whose handshake the
// clamp narrowed.
const HealthRefused = "refused"

// StatusSnapshot is what a status bar shows at one moment.
type StatusSnapshot struct {
	// Model is the model reference shown; "" when none.
	Model string
	// ContextUsed is the input tokens of the latest llm.generation (what
	// the last request carried); ContextWindow is the model's window in
	// tokens, 0 when unknown.
	ContextUsed, ContextWindow int
	// Extensions are the session's extensions, in session order.
	Extensions []ExtensionStatus
	// MCP are the MCP servers' states, from the source SetMCP set.
	MCP []MCPState
	// Running counts the tool calls started and not completed.
	Running int
}

// NewStatusBoard subscribes to s's events ([host.Session.Subscribe]).
// model is the model reference shown ("" when none), window its context
// window in tokens (0 unknown). onChange, if set, is called (from the
// subscription goroutine, never holding a lock) after each change; it
// must not call [StatusBoard.Close]. Make the board before
// [host.Session.Start] to see the start's events; either way it begins
// with the session's current stats.
func NewStatusBoard(s *host.Session, model string, window int, onChange func()) *StatusBoard {
	b := &StatusBoard{s: s, onChange: onChange, model: model, window: window}
	b.exts = extensionStatuses(s.Stats())
	b.cancel = s.Subscribe(b.event)
	return b
}

// SetMCP sets the source of the MCP servers' state, read at each
// Snapshot; nil means none.
func (b *StatusBoard) SetMCP(f func() []MCPState) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mcp = f
}

// SetKeptOff sets the enabled extensions the session did not start
// ([Session.KeptOff]), shown after the session's own, unless one of the
// same name runs in the session by then.
func (b *StatusBoard) SetKeptOff(kept []ExtensionStatus) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.kept = slices.Clone(kept)
}

// SetModel changes the model shown and its context window (after the
// user switched models); the context used so far is kept until the next
// llm.generation. It does not call onChange: the caller knows.
func (b *StatusBoard) SetModel(model string, window int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.model, b.window = model, window
}

// Snapshot returns what the status bar shows now.
func (b *StatusBoard) Snapshot() StatusSnapshot {
	b.mu.Lock()
	snap := StatusSnapshot{
		Model: b.model, ContextUsed: b.used, ContextWindow: b.window,
		Extensions: slices.Clone(b.exts), Running: b.running,
	}
	for _, k := range b.kept {
		if !slices.ContainsFunc(b.exts, func(e ExtensionStatus) bool { return e.Name == k.Name }) {
			snap.Extensions = append(snap.Extensions, k)
		}
	}
	mcp := b.mcp
	b.mu.Unlock()
	if mcp != nil {
		for _, m := range mcp() {
			snap.MCP = append(snap.MCP, MCPState{Name: oneLine(m.Name), State: oneLine(m.State)})
		}
	}
	return snap
}

// Close ends the subscription: it returns once the last onChange has
// returned, and the board changes no more. It is idempotent.
func (b *StatusBoard) Close() { b.cancel() }

// event applies one session event.
func (b *StatusBoard) event(ev host.Event) {
	switch ev.Type {
	case yep.EventToolUpdate, yep.EventTextDelta:
		return
	}
	var exts []ExtensionStatus
	refresh := ev.Type != yep.TraceLLMGeneration && ev.Type != yep.TraceToolStarted
	if refresh {
		exts = extensionStatuses(b.s.Stats())
	}
	b.mu.Lock()
	changed := false
	switch ev.Type {
	case yep.TraceLLMGeneration:
		if d, ok := ev.Data.(yep.LLMGenerationData); ok && d.InputTokens > 0 && int(d.InputTokens) != b.used {
			b.used, changed = int(d.InputTokens), true
		}
	case yep.TraceToolStarted:
		b.running++
		changed = true
	case yep.TraceToolCompleted:
		if b.running > 0 {
			b.running--
			changed = true
		}
	case yep.TraceSessionCompleted:
		if b.running != 0 {
			b.running, changed = 0, true
		}
	}
	if refresh && !slices.Equal(exts, b.exts) {
		b.exts, changed = exts, true
	}
	b.mu.Unlock()
	if changed && b.onChange != nil {
		b.onChange()
	}
}

// extensionStatuses maps the session's stats to the bar's entries.
func extensionStatuses(stats []host.Stats) []ExtensionStatus {
	out := make([]ExtensionStatus, 0, len(stats))
	for _, st := range stats {
		e := ExtensionStatus{Name: oneLine(st.Name), Health: string(st.State), Text: oneLine(st.Status)}
		switch st.State {
		case host.StateReady:
			if len(st.Refusals) > 0 {
				e.Health = HealthRefused
				r := st.Refusals[0]
				e.Reason = fmt.Sprintf("%s %s %s", r.Kind, r.Name, r.Reason)
				if n := len(st.Refusals) - 1; n > 0 {
					e.Reason += fmt.Sprintf(" (and %d more)", n)
				}
			}
		case host.StateIdle, host.StateStarting:
		default:
			e.Reason = st.Reason
		}
		e.Reason = oneLine(e.Reason)
		out = append(out, e)
	}
	return out
}

// oneLine makes text a server supplied safe for one line of a terminal:
// every run of white space and control characters becomes one space, and
// format characters (bidirectional overrides among them) are dropped.
func oneLine(s string) string {
	var sb strings.Builder
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r) || unicode.IsControl(r):
			space = true
			continue
		case unicode.Is(unicode.Cf, r):
			continue
		}
		if space && sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		space = false
		sb.WriteRune(r)
	}
	return sb.String()
}

// The importance of a part of the line: Line cuts the highest first.
const (
	prioModel  = iota // the model and the context use: always kept
	prioAlert         // an unhealthy extension, or one with status text
	prioNotice        // running calls, an MCP server that is not connected
	prioRest          // a healthy extension without text, a connected MCP server
)

type linePart struct {
	text string
	prio int
}

// Line renders the snapshot as one line of at most width terminal
// columns (a wide rune counts two), parts separated by " · ", e.g.
//
//	openai/gpt-4.1 12.3k/128k · echo ready · lsp degraded: rust-analyzer not found · mcp github connected · 1 running
//
// An extension shows as "<name> <health>", then ": " and its status text,
// or its reason when it has no text and is not healthy. When the parts do
// not fit it cuts the least important first, the later before the earlier
// of equal importance: healthy extensions without text and ready (or
// connected) MCP servers, then the running count and other MCP servers, then unhealthy
// extensions and status texts; the model and context use stay. A part
// that does not fit whole is shortened with "…" when it is the first
// kept or when enough room is left; the number of parts cut is shown as
// "+N" when there is room, made by cutting more but never by shortening a
// part that fits whole.
func (s StatusSnapshot) Line(width int) string {
	if width <= 0 {
		return ""
	}
	var parts []linePart
	if head := s.head(); head != "" {
		parts = append(parts, linePart{head, prioModel})
	}
	for _, e := range s.Extensions {
		text := e.Name + " " + e.Health
		prio := prioRest
		switch {
		case e.Text != "":
			text += ": " + e.Text
			prio = prioAlert
		case e.Health != string(host.StateReady) && e.Health != string(host.StateIdle) && e.Health != string(host.StateStarting):
			if e.Reason != "" {
				text += ": " + e.Reason
			}
			prio = prioAlert
		}
		parts = append(parts, linePart{text, prio})
	}
	for _, m := range s.MCP {
		prio := prioNotice
		if m.State == "connected" || m.State == "ready" {
			prio = prioRest
		}
		parts = append(parts, linePart{"mcp " + m.Name + " " + m.State, prio})
	}
	if s.Running > 0 {
		parts = append(parts, linePart{fmt.Sprintf("%d running", s.Running), prioNotice})
	}
	return fitParts(parts, width)
}

const sep = " · "

// fitParts joins parts in order within width columns, cutting the least
// important first.
func fitParts(parts []linePart, w int) string {
	total := 0
	for i, p := range parts {
		if i > 0 {
			total += columns(sep)
		}
		total += columns(p.text)
	}
	if total <= w {
		return join(parts)
	}
	// Choose by importance, then order, what fits; when that cuts parts,
	// choose again leaving room for the "+N" that counts them, unless
	// that room would shorten a part shown whole.
	keep, text := choose(parts, w, w)
	if cut := count(keep, false); cut > 0 {
		keep2, text2 := choose(parts, w, w-columns(fmt.Sprintf("%s+%d", sep, cut)))
		shortened := false
		for i, p := range parts {
			if keep2[i] && text[i] == p.text && text2[i] != p.text {
				shortened = true
			}
		}
		if !shortened {
			keep, text = keep2, text2
		}
	}
	var out []linePart
	for i, p := range parts {
		if keep[i] {
			out = append(out, linePart{text[i], p.prio})
		}
	}
	line := join(out)
	if cut := count(keep, false); cut > 0 {
		more := fmt.Sprintf("+%d", cut)
		if len(out) > 0 {
			more = sep + more
		}
		if columns(line)+columns(more) <= w {
			line += more
		}
	}
	return line
}

// minShortened is the least room, in columns, in which a part other
// than the first kept is shown shortened rather than cut.
const minShortened = 12

// choose picks the parts to keep, by importance then order, within
// budget columns (w for the model's part), and their text, shortened
// where one does not fit whole.
func choose(parts []linePart, w, budget int) (keep []bool, text []string) {
	order := make([]int, len(parts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return parts[a].prio - parts[b].prio })
	keep, text = make([]bool, len(parts)), make([]string, len(parts))
	used, kept := 0, 0
	for _, i := range order {
		p := parts[i]
		room := budget - used
		if p.prio == prioModel {
			room = w - used // the model is never cut for the "+N"
		}
		if kept > 0 {
			room -= columns(sep)
		}
		t := p.text
		if columns(t) > room {
			// Shorten the first part kept, or one with room for a useful
			// piece of it; cut the rest.
			if room < 1 || !(kept == 0 && p.prio <= prioAlert || room >= minShortened) {
				continue
			}
			t = truncate(t, room)
		}
		keep[i], text[i] = true, t
		used += columns(t)
		if kept > 0 {
			used += columns(sep)
		}
		kept++
	}
	return keep, text
}

func count(bs []bool, v bool) int {
	n := 0
	for _, b := range bs {
		if b == v {
			n++
		}
	}
	return n
}

func join(parts []linePart) string {
	var sb strings.Builder
	for i, p := range parts {
		if i > 0 {
			sb.WriteString(sep)
		}
		sb.WriteString(p.text)
	}
	return sb.String()
}

// head is the model and context part: "model used/window".
func (s StatusSnapshot) head() string {
	var ctx string
	switch {
	case s.ContextWindow > 0:
		ctx = humanTokens(s.ContextUsed) + "/" + humanTokens(s.ContextWindow)
	case s.ContextUsed > 0:
		ctx = humanTokens(s.ContextUsed)
	}
	return strings.TrimSpace(s.Model + " " + ctx)
}

// humanTokens writes a token count short: 950, 1.2k, 12.3k, 128k, 1.1M.
func humanTokens(n int) string {
	f := func(v float64, unit string) string {
		s := fmt.Sprintf("%.1f", v)
		if v >= 100 {
			s = fmt.Sprintf("%.0f", v)
		}
		return strings.TrimSuffix(s, ".0") + unit
	}
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 999_500:
		return f(float64(n)/1e3, "k")
	}
	return f(float64(n)/1e6, "M")
}

// columns is the width of s in terminal columns: East Asian wide and
// full-width runes count two, combining marks and format characters none.
func columns(s string) int {
	n := 0
	for _, r := range s {
		n += runeColumns(r)
	}
	return n
}

func runeColumns(r rune) int {
	switch {
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// truncate shortens s to at most w columns, ending in "…" when cut.
func truncate(s string, w int) string {
	if columns(s) <= w {
		return s
	}
	if w <= 0 {
		return ""
	}
	var sb strings.Builder
	n := 0
	for _, r := range s {
		c := runeColumns(r)
		if n+c > w-1 {
			break
		}
		sb.WriteRune(r)
		n += c
	}
	return strings.TrimRight(sb.String(), " ") + "…"
}
