// Package repl runs the session commands of an interactive yolop front-end
// (/tools, /call, /status, /enable and the rest) against a running
// [host.Session]. It parses one command line at a time and reports what
// happened as events to the front-end's [Output]: each event has a kind,
// fields for a machine-readable rendering and a text for a person. The
// front-end keeps the terminal: reading lines, the line editor, signals
// (it cancels the context of a running command on Ctrl-C), colour and
// printing.
//
// With an [agent.Agent] in [Options], a line that is not a command is a
// user message: it runs as a turn of the model over the session, and the
// turn's text, tool calls and their streamed output are reported as they
// happen. The result of an extension's slash command is noted for the
// model, which sees it with the next message.
//
// cmd/yolop's `yolop session` is one front-end; a TUI or a user's own
// binary is another, with the same commands and the same events.
package repl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"yolop.dev/agent"
	"yolop.dev/agent/tokens"
	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/harness/manager"
)

// An Output receives what the commands report and what the session
// reports beside them. Its methods are called from the goroutine running
// a command and from the REPL's subscription to the session's events, so
// an Output serialises its writes.
type Output interface {
	// Event reports one item: kind names it ("tool", "result", "error",
	// …), fields are its machine-readable form and text its form for a
	// person. An empty text means the item has no line of its own in a
	// text rendering (a streamed update, which comes as Raw too).
	Event(kind string, fields map[string]any, text string)
	// Raw is streamed text for a text rendering, as it arrives: a tool's
	// output, ending in a newline, or a piece of the model's reply, which
	// need not. A machine-readable rendering ignores it: the same text
	// came as a "tool.update" or "text.delta" Event.
	Raw(text string)
}

// An MCPServer is one MCP server's line in /status.
type MCPServer struct {
	Name       string
	Source     string // where it was declared: .mcp.json or an extension
	Transport  string // stdio or http
	State      string
	Reason     string
	Tools      int
	StderrTail []string
}

// Options configure a [REPL]. Session and Out are required.
type Options struct {
	Session *host.Session
	Out     Output
	// BasePrompt is the host's own system prompt, which /prompt shows
	// with the extensions' contributions.
	BasePrompt string
	// Local are the grants of packages loaded in place (yolop session
	// --ext): /enable and /disable switch them in this session only.
	Local map[string]host.Grant
	// Manager enables and disables installed extensions in the settings,
	// for /enable and /disable of an extension that is not Local. Nil
	// means only Local ones can be switched.
	Manager func() (*manager.Manager, error)
	// Ask answers the consent questions of /enable (a grant wider than the
	// one approved).
	Ask host.AskSink
	// Paint colours a status word for a terminal; nil leaves it plain.
	Paint func(word string) string
	// MCPStatus lists the session's MCP servers for /status; nil means
	// none.
	MCPStatus func() []MCPServer
	// KeysHelp is appended to /help: the front-end's own keys.
	KeysHelp string
	// Agent, when set, answers a line that is not a command: the line is
	// a user message, run as a turn ([agent.Agent.Turn]) with the context
	// of [REPL.Run]. Nil means no model is configured.
	Agent *agent.Agent
	// NoModel is the advice a line that is not a command gets when Agent
	// is nil: how to configure a model in this front-end.
	NoModel string
}

// A REPL runs command lines against one session.
type REPL struct {
	o           Options
	unsubscribe func()

	mu      sync.Mutex
	turning bool // an agent turn runs: its tool calls get lines of their own
	midLine bool // the model's streamed text has not ended its line
}

// New returns a REPL over o.Session, subscribed to its events (see
// [REPL.SessionEvent]); create it before the session starts to report the
// start's events too. Close ends the subscription.
func New(o Options) *REPL {
	if o.Paint == nil {
		o.Paint = func(w string) string { return w }
	}
	r := &REPL{o: o}
	r.unsubscribe = o.Session.Subscribe(r.SessionEvent)
	return r
}

// Close ends the REPL's subscription to the session's events, after
// reporting those already emitted.
func (r *REPL) Close() { r.unsubscribe() }

// SessionEvent reports one of the session's typed events to the Output:
// the event's kind is its type and its fields are those of the event as
// a trace/event (type, ids, timestamp, data), so a machine-readable
// rendering prints the typed event itself. A tool's streamed output also
// goes to Raw, and status, config changes and warnings have a line of
// text; the other events have none.
func (r *REPL) SessionEvent(ev host.Event) {
	text := ""
	switch d := ev.Data.(type) {
	case yep.TextDeltaData:
		r.event(ev.Type, eventFields(ev), "")
		r.reply(d.Text)
		return
	case yep.ToolStartedData:
		if r.inTurn() {
			text = startedText(d)
		}
	case yep.ToolApprovalData:
		text = approvalText(d)
	case yep.ToolCompletedData:
		if r.inTurn() {
			text = completedText(d)
		}
	case yep.ToolUpdateData:
		r.event(ev.Type, eventFields(ev), "")
		if t := updateText(d.Output, d.Progress); t != "" {
			r.o.Out.Raw(t)
		}
		return
	case yep.StatusChangedData:
		text = fmt.Sprintf("[%s] %s", d.Extension, d.Text)
	case yep.ConfigChangedData:
		text = fmt.Sprintf("config of %s changed (restarted: %v)", d.Extension, d.Restarted)
		if d.Error != "" {
			text = "warning: config change not applied: " + d.Error
		}
	case yep.WarningData:
		text = "warning: " + d.Message
	case yep.HookReportData:
		text = hookReportText(d)
	}
	r.event(ev.Type, eventFields(ev), text)
}

// eventFields are an event's members as a trace/event has them.
func eventFields(ev host.Event) map[string]any {
	var m map[string]any
	b, _ := json.Marshal(ev)
	_ = json.Unmarshal(b, &m)
	return m
}

// Commands are the REPL's own commands, for completion and /help.
var Commands = []string{"/tools", "/prompt", "/call", "/commands", "/skills", "/reload", "/enable", "/disable", "/workspace", "/status", "/help", "/quit"}

// Run runs one command line and reports whether it asked to end the
// session (/quit, /exit). Cancelling ctx cancels the running tool call or
// command, which then reports "cancelled". Empty lines and lines starting
// with # do nothing. Each command line is a turn boundary: what an earlier
// /enable or /disable queued takes effect before the command runs (see
// [host.Session.ApplyPending]).
func (r *REPL) Run(ctx context.Context, line string) (quit bool) {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return false
	}
	cmd, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimSpace(rest)
	s := r.o.Session
	// A command line is a turn boundary: what /enable and /disable queued
	// takes effect before the next command, so /tools, /status and /call
	// agree on which extensions are in the session.
	s.ApplyPending(ctx)
	switch cmd {
	case "/quit", "/exit":
		return true
	case "/help":
		msg := "\nany other line is a message to the model"
		if r.o.Agent == nil {
			msg = "\nno model is configured"
			if r.o.NoModel != "" {
				msg += ": " + r.o.NoModel
			}
		}
		r.event("help", nil, "commands: /tools /prompt /call <tool> [json] /<ext>:<cmd> [args] /commands /skills [name] /reload <ext> /enable <ext> /disable <ext> /workspace <dir> /status /quit"+msg+r.o.KeysHelp)
	case "/tools":
		r.tools()
	case "/prompt":
		p := s.SystemPrompt(ctx, r.o.BasePrompt)
		r.event("prompt", map[string]any{"text": p}, p)
	case "/call":
		r.call(ctx, rest)
	case "/commands":
		for _, c := range s.Commands() {
			r.event("command", map[string]any{"name": c.Name, "description": c.Description}, fmt.Sprintf("/%s  %s", c.Name, c.Description))
		}
	case "/skills":
		r.skills(rest)
	case "/reload":
		if err := s.Reload(ctx, rest); err != nil {
			r.Fail(err)
			return false
		}
		r.event("reloaded", map[string]any{"extension": rest}, fmt.Sprintf("reloaded %s", rest))
	case "/enable":
		r.enable(ctx, rest)
	case "/disable":
		r.disable(ctx, rest)
	case "/workspace":
		r.workspace(rest)
	case "/status":
		r.status()
	default:
		if strings.HasPrefix(cmd, "/") && strings.Contains(cmd, ":") {
			r.command(ctx, strings.TrimPrefix(cmd, "/"), rest)
			return false
		}
		if !strings.HasPrefix(cmd, "/") {
			r.turn(ctx, line)
			return false
		}
		r.Fail(fmt.Errorf("unknown command %q; /help lists them", cmd))
	}
	return false
}

// event reports one item, on a line of its own after the model's
// streamed text.
func (r *REPL) event(kind string, fields map[string]any, text string) {
	if text != "" {
		r.endLine()
	}
	r.o.Out.Event(kind, fields, text)
}

// turn runs message as a turn of the agent. Its text and tool activity
// are reported as the session's events arrive; the turn's outcome is a
// "turn" event after them, or "cancelled" or "error".
func (r *REPL) turn(ctx context.Context, message string) {
	if r.o.Agent == nil {
		msg := "no model is configured, so a line that is not a command has no one to answer it"
		if r.o.NoModel != "" {
			msg += ": " + r.o.NoModel
		}
		r.Fail(errors.New(msg + "; /help lists the commands"))
		return
	}
	r.setTurning(true)
	res, err := r.o.Agent.Turn(ctx, message)
	r.flush()
	r.setTurning(false)
	fields := map[string]any{"stop": res.Stop, "text": res.Text, "steps": res.Steps, "tool_calls": res.ToolCalls,
		"input_tokens": res.Usage.InputTokens, "output_tokens": res.Usage.OutputTokens, "cached_input_tokens": res.Usage.CachedInputTokens}
	switch {
	case ctx.Err() != nil:
		r.event("cancelled", fields, "cancelled: the turn stopped; the conversation goes on with the next message")
	case err != nil:
		r.Fail(err)
	default:
		r.event("turn", fields, turnText(res))
	}
}

// turnText is a finished turn's summary line.
func turnText(res agent.TurnResult) string {
	why := ""
	switch res.Stop {
	case agent.StopMaxSteps:
		why = "stopped at the step limit; "
	case agent.StopMaxTokens:
		why = "stopped at the turn's token limit; "
	case agent.StopLength:
		why = "the reply was cut at its token limit; "
	case agent.StopContentFilter:
		why = "the provider withheld the reply; "
	}
	return fmt.Sprintf("(%s%s, %s, %d tokens in, %d out)", why, plural(res.Steps, "model request"), plural(res.ToolCalls, "tool call"),
		res.Usage.InputTokens, res.Usage.OutputTokens)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// clip shortens a tool call's arguments for its line (a write_file's
// content, say); the --json rendering has them whole.
func clip(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d bytes)", len(s))
}

// startedText is the activity line of a tool call of a turn: the tool
// and its narration, when the manifest gives one, else its arguments.
func startedText(d yep.ToolStartedData) string {
	text := "→ " + d.Tool
	if d.Narration != "" && d.Narration != d.Tool {
		return text + ": " + d.Narration
	}
	if len(d.Args) > 0 && string(d.Args) != "{}" && string(d.Args) != "null" {
		text += " " + clip(string(d.Args))
	}
	return text
}

// approvalText is the line of a tool call's approval decision: who
// approved, denied or blocked it, and why.
func approvalText(d yep.ToolApprovalData) string {
	of, by := d.Capability, d.By
	if d.Decision == yep.ApprovalBlocked {
		// Capability is the blocking hook's, not the tool's.
		of = ""
		if d.Capability != "" {
			by = d.Capability
		}
	}
	switch {
	case d.Extension != "" && d.Version != "":
		of = d.Extension + "@" + d.Version
	case d.Extension != "":
		of = d.Extension
	}
	text := fmt.Sprintf("%s: %s", d.Decision, d.Tool)
	if of != "" {
		text += " (" + of + ")"
	}
	text += " by " + by
	if d.Decision != yep.ApprovalApproved && d.Reason != "" {
		text += ": " + d.Reason
	}
	return text
}

// completedText is a line for a tool call of a turn that ended.
func completedText(d yep.ToolCompletedData) string {
	switch {
	case d.Status == yep.ToolOK:
		return "← " + d.Tool + ": ok"
	case d.Error != "":
		return fmt.Sprintf("← %s: %s: %s", d.Tool, d.Status, d.Error)
	}
	return fmt.Sprintf("← %s: %s", d.Tool, d.Status)
}

func (r *REPL) setTurning(on bool) {
	r.mu.Lock()
	r.turning = on
	r.mu.Unlock()
	if !on {
		r.endLine()
	}
}

func (r *REPL) inTurn() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.turning
}

// reply shows a piece of the model's streamed reply.
func (r *REPL) reply(text string) {
	if text == "" {
		return
	}
	r.mu.Lock()
	r.midLine = !strings.HasSuffix(text, "\n")
	r.mu.Unlock()
	r.o.Out.Raw(text)
}

// endLine ends the line the model's streamed text left open.
func (r *REPL) endLine() {
	r.mu.Lock()
	open := r.midLine
	r.midLine = false
	r.mu.Unlock()
	if open {
		r.o.Out.Raw("\n")
	}
}

// Fail reports err as an "error" event, with the command that helps
// after it (see [Hint]).
func (r *REPL) Fail(err error) { r.fail(err, map[string]any{}) }

// fail is Fail with more fields for the event, such as the tool and
// call_id of a failed call.
func (r *REPL) fail(err error, fields map[string]any) {
	msg := err.Error()
	if hint := Hint(err); hint != "" {
		msg += "; " + hint
	}
	fields["message"] = msg
	r.event("error", fields, "error: "+msg)
}

// Hint is the REPL command that helps after err: the runtime's messages
// name no front-end command, so the REPL adds its own.
func Hint(err error) string {
	switch {
	case errors.Is(err, host.ErrNoSuchTool):
		return "/tools lists them"
	case errors.Is(err, host.ErrNoSuchCommand):
		return "/commands lists them"
	case errors.Is(err, host.ErrNoSuchSkill):
		return "/skills lists them"
	case errors.Is(err, host.ErrNoSuchExtension):
		return "/status lists the extensions"
	case errors.Is(err, host.ErrExtensionDegraded):
		return "/reload <extension> starts it again once it is fixed"
	}
	return ""
}

// Completions are the words a line editor completes after prefix: the
// REPL's commands and the extensions' slash commands, or, after "/call ",
// the session's tool names. Like a command, it first applies what /enable
// and /disable queued, so it offers what the next command can run.
func (r *REPL) Completions(prefix string) []string {
	s := r.o.Session
	s.ApplyPending(context.Background())
	if strings.HasPrefix(prefix, "/call ") && strings.Count(prefix, " ") == 1 {
		var names []string
		for _, t := range s.Tools() {
			names = append(names, t.Name)
		}
		return names
	}
	if strings.Contains(prefix, " ") {
		return nil
	}
	names := slices.Clone(Commands)
	for _, c := range s.Commands() {
		names = append(names, "/"+c.Name)
	}
	return names
}

func (r *REPL) tools() {
	for _, t := range r.o.Session.Tools() {
		mark := ""
		if t.Deferred {
			mark = " (deferred: reach it through tool_search)"
		}
		r.event("tool", map[string]any{"name": t.Name, "capability": t.Capability, "description": t.Def.Description, "deferred": t.Deferred, "streaming": t.Def.Streaming},
			fmt.Sprintf("%-24s %-14s %s%s", t.Name, t.Capability, firstSentence(t.Def.Description), mark))
	}
}

// firstSentence is a description's first sentence, as /tools shows it on
// a line of its own; the full text is in the event's fields.
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// skills lists the skills of the session's enabled extensions, or with a
// name shows one's SKILL.md. Contributed skills are read-only: there is
// no command that writes them.
func (r *REPL) skills(name string) {
	s := r.o.Session
	if name != "" {
		sk, text, err := s.ReadSkill(name)
		if err != nil {
			r.Fail(err)
			return
		}
		r.event("skill", map[string]any{"name": sk.Name, "extension": sk.Extension, "description": sk.Description, "text": text}, text)
		return
	}
	list := s.Skills()
	if len(list) == 0 {
		r.event("skills", map[string]any{"skills": []any{}}, "no skills: no enabled extension contributes one")
		return
	}
	var items []map[string]any
	var b strings.Builder
	for _, sk := range list {
		items = append(items, map[string]any{"name": sk.Name, "extension": sk.Extension, "description": sk.Description})
		fmt.Fprintf(&b, "%-24s %-14s %s\n", sk.Name, "ext:"+sk.Extension, sk.Description)
	}
	r.event("skills", map[string]any{"skills": items}, strings.TrimRight(b.String(), "\n"))
}

// call runs "/call <tool> [json-args]" as a turn of its own.
func (r *REPL) call(ctx context.Context, rest string) {
	name, args, _ := strings.Cut(rest, " ")
	args = strings.TrimSpace(args)
	if name == "" {
		r.Fail(errors.New("usage: /call <tool> [json-args]"))
		return
	}
	// The session checks the arguments (no arguments are {}) and says
	// what is wrong with them, for every front-end.
	s := r.o.Session
	turn := s.BeginTurn(ctx)
	defer s.EndTurn()
	callID := fmt.Sprintf("call-%d", turn)
	// Its streamed output comes as tool.update events (SessionEvent):
	// they are all reported before the result.
	res, err := s.CallTool(ctx, name, callID, json.RawMessage(args), nil)
	r.flush()
	switch {
	case errors.Is(err, host.ErrToolTimeout):
		r.event("timeout", map[string]any{"tool": name, "call_id": callID, "message": err.Error()}, "error: "+err.Error())
	case errors.Is(err, yep.ErrCancelled) || errors.Is(err, context.Canceled):
		r.event("cancelled", map[string]any{"tool": name, "call_id": callID}, "cancelled")
	case err != nil:
		r.fail(err, map[string]any{"tool": name, "call_id": callID})
	default:
		r.event("result", map[string]any{"tool": name, "call_id": callID, "output": res.Output, "is_error": res.IsError, "data": res.Data},
			resultText(res))
	}
}

// flush waits until the session's events so far are reported, bounded in
// case another subscriber of the session is stuck.
func (r *REPL) flush() {
	ctx, cancel := context.WithTimeout(context.Background(), flushWait)
	defer cancel()
	_ = r.o.Session.Flush(ctx)
}

// flushWait bounds flush: the REPL's own subscriber reports at once, but
// Flush waits for every subscriber of the session.
const flushWait = 5 * time.Second

// updateText is a streamed update as a line of text: its output, or a
// progress line when it has none (an MCP server's notifications/progress).
func updateText(output string, p *yep.Progress) string {
	if output != "" {
		if !strings.HasSuffix(output, "\n") {
			return output + "\n"
		}
		return output
	}
	if p == nil {
		return ""
	}
	line := fmt.Sprintf("progress %g", p.Current)
	if p.Total > 0 {
		line = fmt.Sprintf("progress %g/%g", p.Current, p.Total)
	}
	if p.Message != "" {
		line += " " + p.Message
	}
	return line + "\n"
}

func resultText(res yep.ToolResult) string {
	if res.IsError {
		return "tool error: " + res.Output
	}
	return res.Output
}

func (r *REPL) command(ctx context.Context, name, args string) {
	res, err := r.o.Session.ExecuteCommand(ctx, name, args)
	if err != nil {
		r.Fail(err)
		return
	}
	if res.Success && r.o.Agent != nil && promptCommand(r.o.Session, name) {
		// A Claude Code plugin's command expands to a prompt: it is the
		// user's message of a turn.
		r.event("command_result", map[string]any{"command": name, "success": true, "message": res.Message, "prompt": true}, "")
		r.turn(ctx, res.Message)
		return
	}
	if r.o.Agent != nil {
		// The model sees what the user saw, with the next message.
		ran := strings.TrimSpace("/" + name + " " + args)
		if res.Success {
			r.o.Agent.Note(fmt.Sprintf("The user ran %s; it answered: %s", ran, res.Message))
		} else {
			r.o.Agent.Note(fmt.Sprintf("The user ran %s; it failed: %s", ran, res.Message))
		}
	}
	r.event("command_result", map[string]any{"command": name, "success": res.Success, "message": res.Message}, res.Message)
}

func (r *REPL) enable(ctx context.Context, name string) {
	g, ok := r.o.Local[name]
	if !ok {
		m, err := r.manager()
		if err == nil {
			g, err = m.EnableWith(ctx, name, r.o.Ask)
		}
		if err != nil {
			r.Fail(err)
			return
		}
	}
	r.o.Session.Activate(g)
	r.event("enabled", map[string]any{"extension": name}, fmt.Sprintf("enabled %s; it is live from the next turn", name))
}

func (r *REPL) disable(ctx context.Context, name string) {
	if _, ok := r.o.Local[name]; !ok {
		m, err := r.manager()
		if err == nil {
			_, err = m.Disable(ctx, name)
		}
		if err != nil {
			r.Fail(err)
			return
		}
	}
	if !r.o.Session.Deactivate(name) {
		r.event("disabled", map[string]any{"extension": name, "live": false}, fmt.Sprintf("disabled %s (it was not running in this session)", name))
		return
	}
	r.event("disabled", map[string]any{"extension": name, "live": true}, fmt.Sprintf("disabled %s; it leaves at the next turn", name))
}

// workspace repoints the session's workspace at dir, which must be an
// existing directory.
func (r *REPL) workspace(dir string) {
	s := r.o.Session
	abs, err := filepath.Abs(dir)
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(abs); err == nil && !fi.IsDir() {
			err = fmt.Errorf("%s is not a directory", abs)
		}
	}
	if err != nil {
		r.Fail(fmt.Errorf("/workspace %s: %w; the workspace stays %s", dir, err, s.WorkspaceRoot()))
		return
	}
	s.SetWorkspace(abs)
	r.event("workspace", map[string]any{"root": abs}, "workspace: "+abs)
}

func (r *REPL) manager() (*manager.Manager, error) {
	if r.o.Manager == nil {
		return nil, errors.New("this front-end manages no installed extensions; only those loaded in place can be enabled or disabled")
	}
	return r.o.Manager()
}

func (r *REPL) status() {
	stats := r.o.Session.Stats()
	sort.Slice(stats, func(i, j int) bool { return stats[i].Name < stats[j].Name })
	tools, skills := r.o.Session.Tools(), r.o.Session.Skills()
	unfired := map[string][]string{} // by extension: its hooks that never fired
	for _, h := range r.o.Session.HookReport() {
		if h.Fired == 0 && h.Extension != "" {
			unfired[h.Extension] = append(unfired[h.Extension], h.Event+":"+h.Matcher)
		}
	}
	for _, st := range stats {
		cost := r.contextCost(st.Name, tools, skills)
		var refused []string
		for _, rf := range st.Refusals {
			refused = append(refused, rf.String())
		}
		fields := map[string]any{
			"extension": st.Name, "state": st.State, "reason": st.Reason, "calls": st.Calls, "errors": st.Errors,
			"p50_ms": ms(st.P50), "p99_ms": ms(st.P99), "restarts": st.Restarts, "trace_dropped": st.TraceDropped,
			"hook_decisions": st.HookDecisions, "status": st.Status, "refusals": refused,
			"protocol_violations": st.ProtocolViolations, "tokens": cost.Total(), "context": cost,
		}
		var hooks []string
		for _, k := range sortedKeys(st.HookDecisions) {
			hooks = append(hooks, fmt.Sprintf("%s:%d", k, st.HookDecisions[k]))
		}
		text := fmt.Sprintf("%-12s %s calls=%d errors=%d p50=%.2fms p99=%.2fms restarts=%d trace_dropped=%d violations=%d hooks=%s tokens=%d",
			st.Name, r.o.Paint(fmt.Sprintf("%-9s", st.State)), st.Calls, st.Errors, ms(st.P50), ms(st.P99), st.Restarts, st.TraceDropped, st.ProtocolViolations, strings.Join(hooks, ","), cost.Total())
		if u := unfired[st.Name]; len(u) > 0 {
			fields["hooks_unfired"] = u
			text += " unfired=" + strings.Join(u, ",")
		}
		if st.Status != "" {
			text += fmt.Sprintf(" status=%q", st.Status)
		}
		if st.Reason != "" {
			text += "\n  " + st.Reason
		}
		for _, rf := range refused {
			text += "\n  refused: " + rf
		}
		if sb := r.sandboxState(st.Name); sb != "" {
			fields["sandbox"] = sb
			text += "\n  sandbox: " + sb
		}
		r.event("status", fields, text)
	}
	r.blockedStatus(context.Background()) // enabled but kept from starting by a critical advisory
	// The hook subscriptions that timed out or failed; those that have not
	// fired yet are on their extension's line.
	for _, h := range r.o.Session.HookReport() {
		if h.Timeouts == 0 && h.Failures == 0 {
			continue
		}
		fields := map[string]any{"hook": h.Event, "matcher": h.Matcher, "capability": h.Capability,
			"fired": h.Fired, "timeouts": h.Timeouts, "failures": h.Failures, "last_error": h.LastError}
		text := fmt.Sprintf("hook %s %q of %s: fired=%d timeouts=%d failures=%d", h.Event, h.Matcher, h.Capability, h.Fired, h.Timeouts, h.Failures)
		if h.LastError != "" {
			text += "\n  last error: " + h.LastError
		}
		r.event("status", fields, text)
	}
	if r.o.MCPStatus == nil {
		return
	}
	for _, st := range r.o.MCPStatus() {
		fields := map[string]any{"mcp_server": st.Name, "source": st.Source, "transport": st.Transport, "state": st.State, "reason": st.Reason, "tools": st.Tools, "stderr_tail": st.StderrTail}
		text := fmt.Sprintf("mcp:%-8s %s %s tools=%d from %s", st.Name, r.o.Paint(fmt.Sprintf("%-9s", st.State)), st.Transport, st.Tools, st.Source)
		if st.Reason != "" {
			text += "\n  " + st.Reason
		}
		for _, l := range st.StderrTail {
			text += "\n  stderr: " + l
		}
		r.event("status", fields, text)
	}
}

// contextCost counts what extension name adds to every model request
// (tokens.Of), as harness.ManifestCost does from a manifest, but from the
// session: its tools by the names the model sees, its approved static
// prompt and its skills.
func (r *REPL) contextCost(name string, tools []host.ToolInfo, skills []host.SkillInfo) tokens.Cost {
	e, ok := r.o.Session.Extension(name)
	if !ok {
		return tokens.Cost{}
	}
	var ts []tokens.Tool
	for _, t := range tools {
		if t.Capability == e.Name() {
			ts = append(ts, tokens.Tool{Name: t.Name, Description: t.Def.Description, InputSchema: t.Def.InputSchema, Deferred: t.Deferred})
		}
	}
	prompt := ""
	if g := e.Grant(); g.Prompt != nil {
		prompt = g.Prompt.Text
	}
	var sk []tokens.Skill
	for _, s := range skills {
		if s.Extension == name {
			sk = append(sk, tokens.Skill{Name: s.Name, Description: s.Description})
		}
	}
	return tokens.Of(name, ts, prompt, sk)
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
