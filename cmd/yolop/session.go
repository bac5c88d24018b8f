package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/harness"
	mcpclient "yolop.dev/mcp/client"
)

// basePrompt is the host's own system prompt: the stable prefix that
// extension contributions never change.
const basePrompt = "You are yolop, a coding agent. Use the tools you are given."

type sessionFlags struct {
	exts      []string
	json      bool
	workspace string
	noEnabled bool
	noMCP     bool
}

func (a *app) sessionCmd() *cobra.Command {
	var f sessionFlags
	cmd := &cobra.Command{
		Use:   "session",
		Short: "Run a session: a line REPL over the enabled extensions",
		Long: `Run a session over every enabled extension (plus --ext package
directories loaded in place) and drive it line by line from stdin:

  /tools                     list tools (deferred ones are marked)
  /prompt                    show the system prompt of the current turn
  /call <tool> [json-args]   call a tool; streamed output prints as it arrives
  /<ext>:<cmd> [args]        run an extension's slash command
  /commands                  list slash commands
  /skills [name]             list the enabled extensions' skills, or show one
  /reload <ext>              restart an extension's server in place
  /enable <ext>, /disable <ext>
                             activate or deactivate at the next turn
  /workspace <dir>           repoint the workspace
  /status                    per-extension and per-MCP-server health, latency and counters
  /quit                      end the session

Ctrl-C cancels the running call, not the session. With --json every
output is one JSON event per line.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runSessionWith(cmd.Context(), f, nil, a.stdin, false)
		},
	}
	cmd.Flags().StringArrayVar(&f.exts, "ext", nil, "load the package in `DIR` in place (repeatable; the author's dev loop)")
	cmd.Flags().BoolVar(&f.json, "json", false, "print one JSON event per line")
	cmd.Flags().StringVar(&f.workspace, "workspace", "", "workspace root (default: the current directory)")
	cmd.Flags().BoolVar(&f.noEnabled, "no-enabled", false, "do not load the extensions enabled in settings.toml")
	cmd.Flags().BoolVar(&f.noMCP, "no-mcp", false, "connect no MCP servers (neither the workspace's .mcp.json nor extensions' contributed ones)")
	return cmd
}

// repl is the session front-end: it owns stdin and stdout.
type repl struct {
	a      *app
	json   bool
	lines  chan string
	outMu  sync.Mutex
	out    io.Writer // the terminal's line editor, or stdout
	term   *termIO   // the line editor when stdin and stdout are a terminal
	in     io.Reader
	echoIn bool // print each input line (scripted demo)
	sess   *host.Session
	local  map[string]host.Grant // --ext packages by name
	mcp    *mcpclient.Client     // nil with --no-mcp

	running    atomic.Bool // a call is running: Ctrl-C cancels it
	interrupts chan os.Signal
}

// runSessionWith runs the REPL over the enabled extensions, the --ext
// packages and extra, reading lines from in. With echoIn each line is
// printed before it runs, as a transcript.
func (a *app) runSessionWith(ctx context.Context, f sessionFlags, extra []host.Grant, in io.Reader, echoIn bool) error {
	ws := f.workspace
	if ws == "" {
		ws, _ = os.Getwd()
	}
	ws, _ = filepath.Abs(ws)
	r := &repl{a: a, json: f.json, lines: make(chan string), local: map[string]host.Grant{}, in: in, echoIn: echoIn, out: a.stdout,
		interrupts: make(chan os.Signal, 1)}
	h, err := a.harness()
	if err != nil {
		return err
	}
	if file, ok := in.(*os.File); ok && a.ttyOut != nil && !f.json && !echoIn && term.IsTerminal(int(file.Fd())) && term.IsTerminal(int(a.ttyOut.Fd())) {
		hist := loadHistory(filepath.Join(h.ConfigDir(), historyFile), a.scrub.Scrub)
		ti, err := openTerm(file, a.ttyOut, hist, r.interrupt, r.completions)
		if err == nil {
			r.term = ti
			r.out = a.scrub.Writer(ti)
			defer ti.Close()
		}
	}
	for _, g := range extra {
		r.local[g.Name] = g
	}
	dirGrants, warns, err := harness.InPlaceDirs(f.exts)
	if err != nil {
		return fmt.Errorf("--ext %w", err)
	}
	for _, w := range warns {
		r.event("warning", map[string]any{"message": w}, "warning: "+w)
	}
	for _, g := range dirGrants {
		r.local[g.Name] = g
	}
	extraGrants := append(append([]host.Grant(nil), extra...), dirGrants...)
	var contributed []host.ContributedTools
	if !f.noMCP {
		neverDefer, err := h.Settings().MCPNeverDefer(ctx)
		if err != nil {
			r.event("warning", map[string]any{"message": err.Error()}, "warning: "+err.Error()+"; every MCP tool is deferred")
		}
		r.mcp = mcpclient.ForWorkspace(ws, mcpclient.Options{Transport: h.Transport(), Logger: a.log, Scrub: h.Scrubber().Scrub, NeverDefer: neverDefer})
		contributed = append(contributed, r.mcp)
	}
	s, warnings := h.NewSession(ctx, harness.SessionOptions{
		Contributed:   contributed,
		Extra:         extraGrants,
		NoEnabled:     f.noEnabled,
		Ask:           r,
		Status:        r,
		WorkspaceRoot: ws,
		OnConfigChange: func(ext string, restarted bool, err error) {
			switch {
			case err != nil:
				r.event("warning", map[string]any{"extension": ext, "message": err.Error()}, "warning: config change not applied: "+err.Error())
			default:
				r.event("config_changed", map[string]any{"extension": ext, "restarted": restarted}, fmt.Sprintf("config of %s changed (restarted: %v)", ext, restarted))
			}
		},
	})
	for _, w := range warnings {
		r.event("warning", map[string]any{"message": w}, "warning: "+w)
	}
	r.sess = s.Session
	defer s.Close()
	var startErrs []error
	if err := s.Start(ctx); err != nil {
		startErrs = unjoin(err)
	}
	// A package loaded in place is the author's dev loop: start it now,
	// eager or not, so a missing binary shows at once.
	var dirFailed int
	for _, g := range extraGrants[len(extra):] {
		e, ok := s.Extension(g.Name)
		if !ok {
			continue
		}
		switch st, _ := e.State(); st {
		case host.StateReady:
			continue
		case host.StateDegraded, host.StateOff:
			dirFailed++ // an eager one that failed in Start: its error is in startErrs
			continue
		}
		if err := e.Start(ctx); err != nil {
			dirFailed++
			startErrs = append(startErrs, err)
		}
	}
	if n := len(f.exts); n > 0 && dirFailed == n && len(s.Stats()) == n {
		// Nothing else was asked for: a session without it is no use.
		return fmt.Errorf("yolop session: %w", errors.Join(startErrs...))
	}
	for _, e := range startErrs {
		r.event("warning", map[string]any{"message": e.Error()}, "warning: "+e.Error())
	}
	for _, w := range s.Warnings() {
		r.event("warning", map[string]any{"message": w}, "warning: "+w)
	}
	grants := s.Stats()
	r.event("ready", map[string]any{"extensions": len(grants), "tools": len(s.Tools())},
		fmt.Sprintf("yolop session: %d extension(s), %d tool(s). /help lists commands.", len(grants), len(s.Tools())))

	interrupts := r.interrupts
	signal.Notify(interrupts, os.Interrupt)
	defer signal.Stop(interrupts)

	if r.term == nil {
		readDone := make(chan struct{})
		go r.readLines(readDone)
		defer func() {
			// Unblock the reader if it is waiting to hand over a line.
			for {
				select {
				case <-readDone:
					return
				case <-r.lines:
				case <-time.After(50 * time.Millisecond):
					return // stdin is still open; the process is ending anyway
				}
			}
		}()
	}

	for {
		var line string
		var ok bool
		if r.term != nil {
			// The line editor: Ctrl-C at the prompt clears the line,
			// Ctrl-D on an empty one ends the session.
			var err error
			line, err = r.term.ReadLine()
			ok = err == nil
		} else {
			select {
			case line, ok = <-r.lines:
			case <-interrupts:
				r.event("info", map[string]any{"message": "no call is running; /quit ends the session"}, "(no call is running; /quit ends the session)")
				continue
			case <-ctx.Done():
				return nil
			}
		}
		if !ok {
			return nil
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if r.echoIn {
			r.event("input", map[string]any{"line": line}, "\n> "+line)
		}
		if quit := r.dispatch(ctx, line, interrupts); quit {
			return nil
		}
	}
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// readLines feeds stdin lines to r.lines until EOF.
func (r *repl) readLines(done chan struct{}) {
	defer close(done)
	defer close(r.lines)
	br := bufio.NewReaderSize(r.in, 64<<10)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			r.lines <- strings.TrimRight(line, "\r\n")
		}
		if err != nil {
			return
		}
	}
}

// event prints one output item: a JSON object with --json, text otherwise.
func (r *repl) event(kind string, fields map[string]any, text string) {
	r.outMu.Lock()
	defer r.outMu.Unlock()
	if r.json {
		if fields == nil {
			fields = map[string]any{}
		}
		fields["event"] = kind
		b, _ := json.Marshal(fields)
		fmt.Fprintf(r.out, "%s\n", b)
		return
	}
	if text == "" {
		return
	}
	fmt.Fprintln(r.out, text)
}

// raw writes streamed text as it arrives (text mode only).
func (r *repl) raw(s string) {
	r.outMu.Lock()
	defer r.outMu.Unlock()
	io.WriteString(r.out, s)
}

func (r *repl) dispatch(ctx context.Context, line string, interrupts chan os.Signal) (quit bool) {
	cmd, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimSpace(rest)
	switch cmd {
	case "/quit", "/exit":
		return true
	case "/help":
		r.event("help", nil, "commands: /tools /prompt /call <tool> [json] /<ext>:<cmd> [args] /commands /skills [name] /reload <ext> /enable <ext> /disable <ext> /workspace <dir> /status /quit"+r.editorHelp())
	case "/tools":
		r.tools()
	case "/prompt":
		p := r.sess.SystemPrompt(ctx, basePrompt)
		r.event("prompt", map[string]any{"text": p}, p)
	case "/call":
		r.call(ctx, rest, interrupts)
	case "/commands":
		for _, c := range r.sess.Commands() {
			r.event("command", map[string]any{"name": c.Name, "description": c.Description}, fmt.Sprintf("/%s  %s", c.Name, c.Description))
		}
	case "/skills":
		r.skills(rest)
	case "/reload":
		if err := r.sess.Reload(ctx, rest); err != nil {
			r.fail(err)
			return
		}
		r.event("reloaded", map[string]any{"extension": rest}, fmt.Sprintf("reloaded %s", rest))
	case "/enable":
		r.enable(ctx, rest)
	case "/disable":
		r.disable(ctx, rest)
	case "/workspace":
		dir, _ := filepath.Abs(rest)
		r.sess.SetWorkspace(dir)
		r.event("workspace", map[string]any{"root": dir}, "workspace: "+dir)
	case "/status":
		r.status()
	default:
		if strings.HasPrefix(cmd, "/") && strings.Contains(cmd, ":") {
			r.command(ctx, strings.TrimPrefix(cmd, "/"), rest, interrupts)
			return
		}
		r.fail(fmt.Errorf("unknown command %q; /help lists them", cmd))
	}
	return false
}

func (r *repl) fail(err error) {
	msg := err.Error()
	if hint := replHint(err); hint != "" {
		msg += "; " + hint
	}
	r.event("error", map[string]any{"message": msg}, "error: "+msg)
}

// replHint is the REPL command that helps after err: the runtime's
// messages name no front-end command, so the front-end adds its own.
func replHint(err error) string {
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

func (r *repl) tools() {
	for _, t := range r.sess.Tools() {
		mark := ""
		if t.Deferred {
			mark = " (deferred: reach it through tool_search)"
		}
		r.event("tool", map[string]any{"name": t.Name, "capability": t.Capability, "description": t.Def.Description, "deferred": t.Deferred, "streaming": t.Def.Streaming},
			fmt.Sprintf("%-24s %-14s %s%s", t.Name, t.Capability, t.Def.Description, mark))
	}
}

// skills lists the skills of the session's enabled extensions, or with a
// name shows one's SKILL.md. Contributed skills are read-only: there is
// no command that writes them.
func (r *repl) skills(name string) {
	if name != "" {
		sk, text, err := r.sess.ReadSkill(name)
		if err != nil {
			r.fail(err)
			return
		}
		r.event("skill", map[string]any{"name": sk.Name, "extension": sk.Extension, "description": sk.Description, "text": text}, text)
		return
	}
	list := r.sess.Skills()
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

// interrupt is the line editor's Ctrl-C: it cancels the running call, if
// any, and reports whether there was one.
func (r *repl) interrupt() bool {
	if !r.running.Load() {
		return false
	}
	select {
	case r.interrupts <- os.Interrupt:
	default:
	}
	return true
}

// completions are the words the line editor completes after prefix: the
// REPL's commands and the extensions' slash commands, or, after "/call ",
// the session's tool names.
func (r *repl) completions(prefix string) []string {
	if r.sess == nil {
		return nil
	}
	if strings.HasPrefix(prefix, "/call ") && strings.Count(prefix, " ") == 1 {
		var names []string
		for _, t := range r.sess.Tools() {
			names = append(names, t.Name)
		}
		return names
	}
	if strings.Contains(prefix, " ") {
		return nil
	}
	names := slices.Clone(replCommands)
	for _, c := range r.sess.Commands() {
		names = append(names, "/"+c.Name)
	}
	return names
}

// editorHelp describes the line editor's keys, on a terminal.
func (r *repl) editorHelp() string {
	if r.term == nil {
		return ""
	}
	return "\nkeys: Tab completes commands and tool names, Up/Down walk the history (kept across sessions), Ctrl-C cancels a running call or clears the line, Ctrl-D on an empty line quits"
}

// replCommands are the REPL's own commands, for completion and /help.
var replCommands = []string{"/tools", "/prompt", "/call", "/commands", "/skills", "/reload", "/enable", "/disable", "/workspace", "/status", "/help", "/quit"}

// withInterrupt runs f with a context that Ctrl-C cancels.
func (r *repl) withInterrupt(ctx context.Context, interrupts chan os.Signal, f func(ctx context.Context)) {
	r.running.Store(true)
	defer r.running.Store(false)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		select {
		case <-interrupts:
			cancel()
		case <-done:
		}
	}()
	f(ctx)
	close(done)
}

func (r *repl) call(ctx context.Context, rest string, interrupts chan os.Signal) {
	name, args, _ := strings.Cut(rest, " ")
	args = strings.TrimSpace(args)
	if name == "" {
		r.fail(errors.New("usage: /call <tool> [json-args]"))
		return
	}
	if args == "" {
		args = "{}"
	}
	if !json.Valid([]byte(args)) {
		r.fail(fmt.Errorf("arguments for %s are not valid JSON: %s", name, args))
		return
	}
	turn := r.sess.BeginTurn(ctx)
	defer r.sess.EndTurn()
	callID := fmt.Sprintf("call-%d", turn)
	streamed := false
	r.withInterrupt(ctx, interrupts, func(ctx context.Context) {
		res, err := r.sess.CallTool(ctx, name, callID, json.RawMessage(args), func(u yep.ToolUpdateParams) {
			if r.json {
				r.event("update", map[string]any{"tool": name, "call_id": callID, "output": u.Output, "progress": u.Progress}, "")
				return
			}
			if u.Output != "" {
				streamed = true
				out := u.Output
				if !strings.HasSuffix(out, "\n") {
					out += "\n"
				}
				r.raw(out)
			} else if p := u.Progress; p != nil {
				// Progress with no text (an MCP server's notifications/progress).
				line := fmt.Sprintf("progress %g", p.Current)
				if p.Total > 0 {
					line = fmt.Sprintf("progress %g/%g", p.Current, p.Total)
				}
				if p.Message != "" {
					line += " " + p.Message
				}
				r.raw(line + "\n")
			}
		})
		switch {
		case errors.Is(err, host.ErrToolTimeout):
			r.event("timeout", map[string]any{"tool": name, "call_id": callID, "message": err.Error()}, "error: "+err.Error())
		case errors.Is(err, yep.ErrCancelled) || errors.Is(err, context.Canceled):
			r.event("cancelled", map[string]any{"tool": name, "call_id": callID}, "cancelled")
		case err != nil:
			r.fail(err)
		default:
			_ = streamed
			r.event("result", map[string]any{"tool": name, "call_id": callID, "output": res.Output, "is_error": res.IsError, "data": res.Data},
				resultText(res))
		}
	})
}

func resultText(res yep.ToolResult) string {
	if res.IsError {
		return "tool error: " + res.Output
	}
	return res.Output
}

func (r *repl) command(ctx context.Context, name, args string, interrupts chan os.Signal) {
	r.withInterrupt(ctx, interrupts, func(ctx context.Context) {
		res, err := r.sess.ExecuteCommand(ctx, name, args)
		if err != nil {
			r.fail(err)
			return
		}
		r.event("command_result", map[string]any{"command": name, "success": res.Success, "message": res.Message}, res.Message)
	})
}

func (r *repl) enable(ctx context.Context, name string) {
	g, ok := r.local[name]
	if !ok {
		var err error
		m, err := r.a.manager()
		if err == nil {
			g, err = m.EnableWith(ctx, name, r)
		}
		if err != nil {
			r.fail(err)
			return
		}
	}
	r.sess.Activate(g)
	r.event("enabled", map[string]any{"extension": name}, fmt.Sprintf("enabled %s; it is live from the next turn", name))
}

func (r *repl) disable(ctx context.Context, name string) {
	if _, ok := r.local[name]; !ok {
		m, err := r.a.manager()
		if err == nil {
			_, err = m.Disable(ctx, name)
		}
		if err != nil {
			r.fail(err)
			return
		}
	}
	if !r.sess.Deactivate(name) {
		r.event("disabled", map[string]any{"extension": name, "live": false}, fmt.Sprintf("disabled %s (it was not running in this session)", name))
		return
	}
	r.event("disabled", map[string]any{"extension": name, "live": true}, fmt.Sprintf("disabled %s; it leaves at the next turn", name))
}

func (r *repl) status() {
	stats := r.sess.Stats()
	sort.Slice(stats, func(i, j int) bool { return stats[i].Name < stats[j].Name })
	for _, st := range stats {
		var refused []string
		for _, rf := range st.Refusals {
			refused = append(refused, rf.String())
		}
		fields := map[string]any{
			"extension": st.Name, "state": st.State, "reason": st.Reason, "calls": st.Calls, "errors": st.Errors,
			"p50_ms": ms(st.P50), "p99_ms": ms(st.P99), "restarts": st.Restarts, "trace_dropped": st.TraceDropped,
			"hook_decisions": st.HookDecisions, "status": st.Status, "refusals": refused,
		}
		var hooks []string
		for _, k := range sortedKeys(st.HookDecisions) {
			hooks = append(hooks, fmt.Sprintf("%s:%d", k, st.HookDecisions[k]))
		}
		text := fmt.Sprintf("%-12s %s calls=%d errors=%d p50=%.2fms p99=%.2fms restarts=%d trace_dropped=%d hooks=%s",
			st.Name, r.a.paint(fmt.Sprintf("%-9s", st.State)), st.Calls, st.Errors, ms(st.P50), ms(st.P99), st.Restarts, st.TraceDropped, strings.Join(hooks, ","))
		if st.Status != "" {
			text += fmt.Sprintf(" status=%q", st.Status)
		}
		if st.Reason != "" {
			text += "\n  " + st.Reason
		}
		for _, rf := range refused {
			text += "\n  refused: " + rf
		}
		r.event("status", fields, text)
	}
	if r.mcp == nil {
		return
	}
	for _, st := range r.mcp.Status() {
		fields := map[string]any{"mcp_server": st.Name, "source": st.Source, "transport": st.Type, "state": st.State, "reason": st.Reason, "tools": st.Tools, "stderr_tail": st.StderrTail}
		text := fmt.Sprintf("mcp:%-8s %s %s tools=%d from %s", st.Name, r.a.paint(fmt.Sprintf("%-9s", st.State)), st.Type, st.Tools, st.Source)
		if st.Reason != "" {
			text += "\n  " + st.Reason
		}
		for _, l := range st.StderrTail {
			text += "\n  stderr: " + l
		}
		r.event("status", fields, text)
	}
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

// Ask implements host.AskSink on the terminal: the next stdin line is the
// answer. A secret is read with echo off on a terminal and acknowledged
// with "(saved)", never shown.
func (r *repl) Ask(ctx context.Context, ext string, p yep.UIAskParams) (yep.UIAskResult, error) {
	prompt := fmt.Sprintf("[%s asks] %s", ext, p.Prompt)
	if len(p.Options) > 0 {
		for i, o := range p.Options {
			prompt += fmt.Sprintf("\n  %d) %s", i+1, o)
		}
		prompt += "\nchoose a number: "
	} else if p.Placeholder != "" {
		prompt += fmt.Sprintf(" (%s)", p.Placeholder)
	}
	r.event("ask", map[string]any{"extension": ext, "prompt": p.Prompt, "secret": p.Secret, "options": p.Options}, prompt)
	var answer string
	var ok bool
	if r.term != nil {
		// A secret is typed with echo off; answers stay out of the
		// history.
		a, err := r.term.Answer("> ", p.Secret)
		answer, ok = a, err == nil
	} else {
		select {
		case answer, ok = <-r.lines:
		case <-ctx.Done():
		}
	}
	if !ok {
		r.event("ask_result", map[string]any{"extension": ext, "cancelled": true}, "(cancelled)")
		return yep.UIAskResult{Cancelled: true}, nil
	}
	answer = strings.TrimSpace(answer)
	if len(p.Options) > 0 {
		var n int
		if _, err := fmt.Sscanf(answer, "%d", &n); err == nil && n >= 1 && n <= len(p.Options) {
			answer = p.Options[n-1]
		}
	}
	if p.Secret {
		r.event("ask_result", map[string]any{"extension": ext, "saved": true}, "(saved)")
	}
	return yep.UIAskResult{Answer: answer}, nil
}

// SetStatus implements host.StatusSink.
func (r *repl) SetStatus(ext, text string) {
	r.event("status_changed", map[string]any{"extension": ext, "text": text}, fmt.Sprintf("[%s] %s", ext, text))
}
