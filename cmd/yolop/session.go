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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"yolop.dev/cmd/yolop/internal/tui"
	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/harness"
	cmds "yolop.dev/harness/repl"
	mcpclient "yolop.dev/mcp/client"
)

type sessionFlags struct {
	exts      []string
	json      bool
	workspace string
	noEnabled bool
	noMCP     bool
	yes       bool   // approve the workspace's .mcp.json without asking
	record    string // write the YEP dialogues to this file
	model     string // <provider>/<model> to talk to

	noBuiltins bool // leave out the built-in capabilities (the coding tools stay with a model)
	tui        bool // the terminal UI, required (an error without a terminal)
	plain      bool // the line editor on a terminal instead of the terminal UI
	fullscreen bool // the terminal UI on the alternate screen (implies tui)
	// atEnd, if set, runs when the input ends, before the session closes
	// (the demo asks its scripted model whether the script played out);
	// its error is the session's.
	atEnd func(ctx context.Context, s *harness.Session) error
}

func (a *app) sessionCmd() *cobra.Command {
	var f sessionFlags
	cmd := &cobra.Command{
		Use:   "session",
		Short: "Run a session over the enabled extensions: the terminal UI on a terminal, lines otherwise",
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

When a model is configured (yolop model, [model] in settings.toml,
YOLOP_MODEL or --model), any other line is a message to it: the model
answers with the session's tools (the extensions' and the built-in
coding tools), and its text and tool calls print as they happen.

Ctrl-C cancels the running call or turn, not the session. With --json
every output is one JSON event per line.

When stdin and stdout are a terminal the session runs in the terminal
UI, inline so the transcript stays in the scrollback (--fullscreen: on
the alternate screen). --plain keeps the line editor instead; any other
stdin, and --json, is the line mode, a line at a time.`,
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
	cmd.Flags().StringVar(&f.model, "model", "", "talk to `PROVIDER/MODEL`, such as openai/gpt-4.1 or anthropic/claude-sonnet-4-5 (default: the configured model)")
	cmd.Flags().StringVar(&f.record, "record", "", "write the session's YEP dialogues to `FILE` as txtar, for `yolop ext replay`")
	cmd.Flags().BoolVar(&f.tui, "tui", false, "the terminal UI, or an error without a terminal (the default on a terminal)")
	cmd.Flags().BoolVar(&f.plain, "plain", false, "the line editor on a terminal instead of the terminal UI")
	cmd.Flags().BoolVar(&f.fullscreen, "fullscreen", false, "the terminal UI on the alternate screen (the transcript leaves no scrollback)")
	cmd.Flags().BoolVar(&f.yes, "yes", false, "approve the servers of the workspace's .mcp.json without asking (the approval is pinned, as an answer on a terminal is)")
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
	echoIn bool       // print each input line (scripted demo)
	cmds   *cmds.REPL // the session commands, once the session has started
	ui     *tui.UI    // the terminal UI (--tui): it prints and asks instead

	running    atomic.Bool // a command is running: Ctrl-C cancels it
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
	r := &repl{a: a, json: f.json, lines: make(chan string), in: in, echoIn: echoIn, out: a.stdout,
		interrupts: make(chan os.Signal, 1)}
	h, err := a.harness()
	if err != nil {
		return err
	}
	useTUI, err := a.wantTUI(f, in, echoIn)
	if err != nil {
		return err
	}
	if useTUI {
		ui, stop, err := a.startTUI(in, f)
		if err != nil {
			return err
		}
		defer stop()
		r.ui = ui
		stopOnEnd := context.AfterFunc(ctx, ui.Stop)
		defer stopOnEnd()
	}
	if file, ok := in.(*os.File); ok && r.ui == nil && a.ttyOut != nil && !f.json && !echoIn && term.IsTerminal(int(file.Fd())) && term.IsTerminal(int(a.ttyOut.Fd())) {
		ti, err := openTerm(file, a.ttyOut, h.History(), r.interrupt, r.completions)
		if err == nil {
			r.term = ti
			r.out = a.scrub.Writer(ti)
			defer ti.Close()
		}
	}
	var contributed []host.ContributedTools
	var mcp *mcpclient.Client // nil with --no-mcp
	if !f.noMCP {
		mcp = mcpclient.ForHarness(ctx, h, ws, r.mcpConsent(f.yes))
		contributed = append(contributed, mcp)
	}
	model, withModel, noModelWhy := h.SessionModel(ctx, f.model)
	s, warnings, err := h.OpenSession(ctx, harness.SessionOptions{
		Contributed:   contributed,
		Extra:         extra,
		NoEnabled:     f.noEnabled,
		NoBuiltins:    f.noBuiltins,
		Ask:           r,
		WorkspaceRoot: ws,
		Record:        f.record,
		LiveConfig:    true,
		CodingTools:   withModel,
	}, f.exts)
	if err != nil {
		return fmt.Errorf("--ext %w", err)
	}
	if noModelWhy != "" {
		warnings = append(warnings, noModelWhy)
	}
	for _, w := range warnings {
		r.event("warning", map[string]any{"message": w}, "warning: "+w)
	}
	defer s.Close()
	dirGrants := s.InPlace()
	co := cmds.Options{Session: s.Session, Out: r, BasePrompt: harness.BasePrompt, Local: s.Local(), Manager: a.manager, Ask: r,
		Paint: a.paint, KeysHelp: r.editorHelp(), NoModel: harness.NoModelAdvice}
	if withModel {
		co.Agent, err = h.NewAgent(ctx, s, harness.AgentOptions{Model: f.model})
		if err != nil {
			return fmt.Errorf("yolop session: %w", err)
		}
	}
	if mcp != nil {
		co.MCPStatus = func() []cmds.MCPServer { return mcpStatus(mcp) }
	}
	r.cmds = cmds.New(co)
	if r.ui != nil {
		board := a.statusBoard(ctx, h, s, f.model, model, withModel, mcp, r.ui.StatusChanged)
		defer board.Close()
		r.ui.SetStatus(func(width int) string { return board.Snapshot().Line(width) })
		r.ui.SetPalette(r.cmds.Palette)
	}
	startErrs, dirFailed := s.StartInPlace(ctx, dirGrants)
	if s.OnlyInPlaceFailed(dirFailed) {
		return fmt.Errorf("yolop session: %w", errors.Join(startErrs...))
	}
	for _, e := range startErrs {
		r.event("warning", map[string]any{"message": e.Error()}, "warning: "+e.Error())
	}
	// The session's own warnings are warning events, which the REPL
	// reports; they come before the ready line.
	_ = s.Flush(ctx)
	grants := s.Stats()
	ready := fmt.Sprintf("yolop session: %d extension(s), %d tool(s). /help lists commands.", len(grants), len(s.Tools()))
	if withModel {
		ready = fmt.Sprintf("yolop session: %d extension(s), %d tool(s), model %s. Type a message, or /help for commands.", len(grants), len(s.Tools()), model)
	}
	r.event("ready", map[string]any{"extensions": len(grants), "tools": len(s.Tools()), "model": model}, ready)

	interrupts := r.interrupts
	signal.Notify(interrupts, os.Interrupt)
	defer signal.Stop(interrupts)

	if r.ui != nil {
		// The UI reads the keys: Enter runs a line on its own goroutine,
		// Ctrl-C cancels it, and the session ends when the user leaves.
		r.ui.SetDispatch(func(c context.Context, line string) bool {
			c, cancel := context.WithCancel(c)
			defer cancel()
			defer context.AfterFunc(ctx, cancel)()
			return r.cmds.Run(c, line)
		})
		if err := r.ui.Wait(); err != nil {
			return fmt.Errorf("yolop session: %w", err)
		}
		if f.atEnd != nil {
			return f.atEnd(ctx, s)
		}
		return nil
	}

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
			if f.atEnd != nil {
				return f.atEnd(ctx, s)
			}
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
	if r.ui != nil {
		r.ui.Event(kind, fields, text)
		return
	}
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
	if r.ui != nil {
		r.ui.Raw(s)
		return
	}
	r.outMu.Lock()
	defer r.outMu.Unlock()
	io.WriteString(r.out, s)
}

// Event implements cmds.Output.
func (r *repl) Event(kind string, fields map[string]any, text string) { r.event(kind, fields, text) }

// Raw implements cmds.Output: streamed text, shown in text mode only (with
// --json the same update is a "tool.update" event).
func (r *repl) Raw(text string) {
	if !r.json {
		r.raw(text)
	}
}

// dispatch runs one command line; Ctrl-C cancels it while it runs.
func (r *repl) dispatch(ctx context.Context, line string, interrupts chan os.Signal) (quit bool) {
	r.withInterrupt(ctx, interrupts, func(ctx context.Context) { quit = r.cmds.Run(ctx, line) })
	return quit
}

// interrupt is the line editor's Ctrl-C: it cancels the running command,
// if any, and reports whether there was one.
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

// completions are the line editor's: the session commands' (none before
// the session has started).
func (r *repl) completions(prefix string) []string {
	if r.cmds == nil {
		return nil
	}
	return r.cmds.Completions(prefix)
}

// editorHelp describes the line editor's keys, on a terminal.
func (r *repl) editorHelp() string {
	if r.ui != nil {
		return "\n" + tui.KeysHelp
	}
	if r.term == nil {
		return ""
	}
	return "\nkeys: Tab completes commands and tool names, Up/Down walk the history (kept across sessions), Ctrl-C cancels a running call or turn and clears the line, Ctrl-D on an empty line quits"
}

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

// Ask implements host.AskSink on the terminal: the next stdin line is the
// answer. A secret is read with echo off on a terminal and acknowledged
// with "(saved)", never shown.
func (r *repl) Ask(ctx context.Context, ext string, p yep.UIAskParams) (yep.UIAskResult, error) {
	if r.ui != nil {
		return r.ui.Ask(ctx, ext, p)
	}
	if r.term != nil {
		// Ctrl-C from the moment the question shows cancels it, even
		// before its read starts.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		r.term.setAnswering(cancel)
		defer r.term.setAnswering(nil)
	}
	r.event("ask", map[string]any{"extension": ext, "prompt": p.Prompt, "secret": p.Secret, "options": p.Options}, harness.AskPrompt(ext, p))
	var answer string
	var ok bool
	if r.term != nil {
		// A secret is typed with echo off; answers stay out of the
		// history.
		a, err := r.term.Answer(ctx, "> ", p.Secret)
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
	answer = harness.AskAnswer(p, answer)
	if p.Secret {
		r.event("ask_result", map[string]any{"extension": ext, "saved": true}, "(saved)")
	}
	return yep.UIAskResult{Answer: answer}, nil
}

// mcpConsent is how this session approves the workspace's .mcp.json: with
// --yes it says what it approves, on a terminal it asks y/N, and without
// either it asks nothing (nil), so nothing unapproved starts.
func (r *repl) mcpConsent(yes bool) mcpclient.Consent {
	if !yes && r.term == nil && r.ui == nil {
		return nil
	}
	return func(ctx context.Context, rev, prev *mcpclient.Review) (bool, error) {
		text := rev.Proposal(prev)
		fields := map[string]any{"path": rev.Path, "digest": rev.Digest, "servers": rev.Servers, "vars": rev.Vars, "changed": prev != nil}
		if yes {
			r.event("mcp_approval", fields, strings.TrimRight(text, "\n")+"\napproved with --yes")
			return true, nil
		}
		r.event("mcp_approval", fields, strings.TrimRight(text, "\n"))
		if r.ui != nil {
			res, _ := r.ui.Ask(ctx, "yolop", yep.UIAskParams{Prompt: "Start these MCP servers?", Options: []string{"no", "yes"}})
			return !res.Cancelled && res.Answer == "yes", nil
		}
		ans, err := r.term.Answer(ctx, "Start these MCP servers? [y/N] ", false)
		if err != nil {
			return false, nil
		}
		ans = strings.ToLower(strings.TrimSpace(ans))
		return ans == "y" || ans == "yes", nil
	}
}

// mcpStatus is the MCP client's servers as /status shows them.
func mcpStatus(c *mcpclient.Client) []cmds.MCPServer {
	var out []cmds.MCPServer
	for _, st := range c.Status() {
		out = append(out, cmds.MCPServer{Name: st.Name, Source: st.Source, Transport: st.Type, State: st.State,
			Reason: st.Reason, Tools: st.Tools, StderrTail: st.StderrTail})
	}
	return out
}
