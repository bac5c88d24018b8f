package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"yolop.dev/agent"
	"yolop.dev/agent/provider"
	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/harness"
	cmds "yolop.dev/harness/repl"
	mcpclient "yolop.dev/mcp/client"
)

type runFlags struct {
	prompt, model, workspace string
	exts                     []string
	json, yes                bool
	noEnabled, noMCP         bool
	maxSteps                 int
}

func (a *app) runCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run one headless agent turn: -p \"message\", for scripts and CI",
		Long: `Run one agent turn over the enabled extensions (plus --ext packages) and
the built-in coding tools, in the workspace, and print the model's text as
it streams: any text before its tool calls, then its final answer, ending
with a newline. With --json every output is one JSON event per line, as
yolop session --json prints them (turn.*, reason.*, llm.generation, act.*,
tool.*, text.delta, warnings), then a last line
{"event":"result","answer":…,"stop":…,"steps":…,"tool_calls":…,"usage":{…}}.

The model is --model <provider>/<model>, else $YOLOP_MODEL, else [model]
in settings.toml (see yolop model).

Nothing waits for a terminal: a question an extension asks (ui/ask) is
answered cancelled, and the workspace's .mcp.json servers start only if
they were approved before or --yes approves them. A tool call that needs
approval (its manifest says approval "always", or [approval] in
settings.toml asks) is denied — the model reads "needs approval; rerun
with --yes to approve it" — unless --yes approves it (each approval is a
line on stderr, a tool.approval event with --json). A call [approval]
denies is denied, --yes or not.

Exit status: 0 when the turn ends, also when it stops at --max-steps or
another bound (a warning on stderr says so, and the result's stop says
which); 1 on an error, such as the provider's (its message says what to
do); 3 when the turn ended but tool calls were denied for want of
approval (stderr names each; rerun with --yes); 130 when interrupted
(Ctrl-C).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runTurn(cmd.Context(), f)
		},
	}
	cmd.Flags().StringVarP(&f.prompt, "prompt", "p", "", "the user's `message` (required)")
	cmd.Flags().StringVar(&f.model, "model", "", "ask `PROVIDER/MODEL`, such as openai/gpt-4.1 or anthropic/claude-sonnet-4-5 (default: $YOLOP_MODEL, then [model] in settings.toml)")
	cmd.Flags().BoolVar(&f.json, "json", false, "print one JSON event per line, then a result line")
	cmd.Flags().BoolVar(&f.yes, "yes", false, "approve the servers of the workspace's .mcp.json (the approval is pinned) and every tool call that needs approval, without asking; a call [approval] in settings.toml denies stays denied")
	cmd.Flags().StringArrayVar(&f.exts, "ext", nil, "load the package in `DIR` in place (repeatable)")
	cmd.Flags().StringVar(&f.workspace, "workspace", "", "workspace root (default: the current directory)")
	cmd.Flags().BoolVar(&f.noEnabled, "no-enabled", false, "do not load the extensions enabled in settings.toml")
	cmd.Flags().BoolVar(&f.noMCP, "no-mcp", false, "connect no MCP servers (neither the workspace's .mcp.json nor extensions' contributed ones)")
	cmd.Flags().IntVar(&f.maxSteps, "max-steps", 0, fmt.Sprintf("bound the turn's model requests (default %d)", agent.DefaultMaxSteps))
	return cmd
}

// interrupted is the error of a turn cancelled by Ctrl-C: exit status 130,
// as a shell reports a command SIGINT ended.
type interrupted struct{}

func (interrupted) Error() string { return "yolop run: interrupted; the turn was cancelled" }
func (interrupted) ExitCode() int { return 130 }

// runTurn opens a session as yolop session does, without a terminal, runs
// one turn and prints it.
func (a *app) runTurn(ctx context.Context, f runFlags) error {
	if strings.TrimSpace(f.prompt) == "" {
		return errors.New(`yolop run: no message; pass it with -p "<message>"`)
	}
	if f.maxSteps < 0 {
		return fmt.Errorf("yolop run: --max-steps %d: want a positive number of model requests", f.maxSteps)
	}
	h, err := a.harness()
	if err != nil {
		return err
	}
	// Resolve the model first: a configuration error costs no extension
	// start.
	model, err := h.ResolveModel(ctx, f.model)
	if err != nil {
		return fmt.Errorf("yolop run: %w", err)
	}
	ws := f.workspace
	if ws == "" {
		ws, _ = os.Getwd()
	}
	ws, _ = filepath.Abs(ws)

	// out prints events exactly as yolop session --json does.
	out := &repl{a: a, json: f.json, out: a.stdout}
	warn := func(msg string) {
		if f.json {
			out.event("warning", map[string]any{"message": msg}, "")
			return
		}
		fmt.Fprintf(a.stderr, "yolop run: warning: %s\n", msg)
	}

	var contributed []host.ContributedTools
	if !f.noMCP {
		var consent mcpclient.Consent // nil: nothing unapproved starts
		if f.yes {
			consent = func(ctx context.Context, rev, prev *mcpclient.Review) (bool, error) {
				fields := map[string]any{"path": rev.Path, "digest": rev.Digest, "servers": rev.Servers, "vars": rev.Vars, "changed": prev != nil}
				if f.json {
					out.event("mcp_approval", fields, "")
				} else {
					fmt.Fprintf(a.stderr, "%s\napproved with --yes\n", strings.TrimRight(rev.Proposal(prev), "\n"))
				}
				return true, nil
			}
		}
		contributed = append(contributed, mcpclient.ForHarness(ctx, h, ws, consent))
	}
	// A call that needs approval is denied, or with --yes approved; an
	// approval is on stderr (with --json, its tool.approval event says
	// it).
	approver := &harness.RunApprover{Yes: f.yes}
	if f.yes && !f.json {
		approver.OnApproved = func(r host.ApprovalRequest) {
			fmt.Fprintf(a.stderr, "yolop run: approved with --yes: %s\n", r.Question())
		}
	}
	s, warnings, err := h.OpenSession(ctx, harness.SessionOptions{
		Contributed:   contributed,
		NoEnabled:     f.noEnabled,
		WorkspaceRoot: ws,
		CodingTools:   true,
		Approve:       approver.Approve,
		// Ask is nil: a question is answered cancelled.
	}, f.exts)
	if err != nil {
		return fmt.Errorf("yolop run: --ext %w", err)
	}
	defer s.Close()
	for _, w := range warnings {
		warn(w)
	}

	var text *textOut
	if f.json {
		ev := cmds.New(cmds.Options{Session: s.Session, Out: out})
		defer ev.Close()
	} else {
		text = &textOut{w: a.stdout, warn: warn}
		defer s.Subscribe(text.event)()
	}

	startErrs, dirFailed := s.StartInPlace(ctx, s.InPlace())
	if s.OnlyInPlaceFailed(dirFailed) {
		return fmt.Errorf("yolop run: %w", errors.Join(startErrs...))
	}
	for _, e := range startErrs {
		warn(e.Error())
	}

	ag, err := h.NewAgent(ctx, s, harness.AgentOptions{Model: f.model, MaxSteps: f.maxSteps})
	if err != nil {
		return fmt.Errorf("yolop run: %w", err)
	}
	tctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	res, turnErr := ag.Turn(tctx, f.prompt)
	interrupt := tctx.Err() != nil && ctx.Err() == nil // before stop cancels tctx
	stop()
	_ = s.Flush(context.WithoutCancel(ctx))

	if text != nil {
		text.finish(res.Text)
	}
	if turnErr == nil && res.Stop != agent.StopDone {
		warn(stopWarning(res))
	}
	switch {
	case turnErr == nil:
		if err := approver.Err(); err != nil {
			turnErr = fmt.Errorf("yolop run: %w", err) // exit status 3
		}
	case interrupt:
		turnErr = interrupted{}
	case errors.Is(turnErr, provider.ErrAuth):
		turnErr = fmt.Errorf("yolop run: %w; %s", turnErr, model.KeyHint())
	default:
		turnErr = fmt.Errorf("yolop run: %w", turnErr)
	}
	if f.json {
		result := map[string]any{
			"model": model.Ref(), "answer": res.Text, "stop": res.Stop, "steps": res.Steps, "tool_calls": res.ToolCalls,
			"usage": map[string]int64{"input_tokens": res.Usage.InputTokens, "output_tokens": res.Usage.OutputTokens, "cached_input_tokens": res.Usage.CachedInputTokens},
		}
		var needed *harness.ApprovalNeededError
		switch {
		case errors.As(turnErr, &needed):
			// The turn ended; calls were denied for want of approval.
			result["error"] = turnErr.Error()
		case turnErr != nil:
			result["stop"] = "error"
			result["error"] = turnErr.Error()
		}
		out.event("result", result, "")
	}
	return turnErr
}

// stopWarning says why a turn stopped short of an answer.
func stopWarning(res agent.TurnResult) string {
	switch res.Stop {
	case agent.StopMaxSteps:
		return fmt.Sprintf("the turn stopped after %d model requests (--max-steps) before the model finished; the answer may be incomplete", res.Steps)
	case agent.StopMaxTokens:
		return "the turn stopped at its output-token bound before the model finished; the answer may be incomplete"
	case agent.StopLength:
		return "the model's reply was cut at its max_tokens; raise [model] max_tokens in settings.toml for longer replies"
	case agent.StopContentFilter:
		return "the provider withheld or refused the model's reply (content filter)"
	}
	return fmt.Sprintf("the turn stopped: %s", res.Stop)
}

// textOut prints a turn for a person: the model's text as it streams, a
// line break before each step's tool calls, warnings on stderr.
type textOut struct {
	w    io.Writer
	warn func(string)

	mu       sync.Mutex
	streamed bool // some text was printed
	open     bool // the last text printed did not end a line
}

// event is the session subscriber.
func (t *textOut) event(ev host.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch d := ev.Data.(type) {
	case yep.TextDeltaData:
		if d.Text == "" {
			return
		}
		io.WriteString(t.w, d.Text)
		t.streamed = true
		t.open = !strings.HasSuffix(d.Text, "\n")
	case yep.WarningData:
		t.warn(d.Message)
	default:
		if ev.Type == yep.TraceActStarted && t.open {
			io.WriteString(t.w, "\n")
			t.open = false
		}
	}
}

// finish ends the output once every event is delivered: the answer when
// nothing streamed, and a final line break.
func (t *textOut) finish(answer string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.streamed && answer != "" {
		io.WriteString(t.w, answer)
		t.open = !strings.HasSuffix(answer, "\n")
	}
	if t.open {
		io.WriteString(t.w, "\n")
	}
}
