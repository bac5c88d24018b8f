// Package agent is the agent loop: it puts a model in front of a
// [host.Session]. An [Agent] keeps one conversation; [Agent.Turn] takes
// the user's message and runs reason → act until the model answers
// without calling a tool or a bound (steps, tokens) is reached.
//
// Reason is one streamed model request, assembled by [Agent.Request]:
//
//   - the system prompt is [host.Session.SystemPrompt] over the base
//     prompt: the base and the static contributions are a prefix that is
//     byte-identical from turn to turn, and the dynamic contributions
//     trail it in <environment_context>, read once per turn;
//   - the tools are every tool the session does not defer, with its full
//     schema, in the session's order (tool_search among them), then the
//     deferred tools the model found with tool_search, in the order it
//     found them. The block only grows at its end, so a provider's prompt
//     cache keeps hitting;
//   - the messages are the conversation, trimmed to the model's context
//     window by the rule of [Agent.Request].
//
// Act runs the reply's tool calls concurrently, each through
// [host.Session.CallTool] (argument check, hooks, clamp, scrubbing,
// attribution), and answers each with its result: a hook's block comes
// back to the model as the call's error result carrying the hook's reason.
//
// A turn reports itself on the session's typed event stream:
// turn.started/completed (the session's turn), reason.started/completed
// around each model request with an llm.generation under it, text.delta as
// the reply streams, act.started/completed around each step's tool calls
// with the session's tool.* events under the act span. A front-end
// subscribes to the stream ([host.Session.Subscribe]); an extension that
// declares trace gets the same events as trace/event.
//
// Cancelling a turn's context cancels the model stream and every tool call
// in flight (the host sends YEP cancel, or MCP's notifications/cancelled)
// and leaves the conversation consistent: each cancelled call is answered
// with a result saying so, so the next turn can go on.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"yolop.dev/agent/provider"
	"yolop.dev/core/host"
	"yolop.dev/core/yep"
)

// Defaults of [Options].
const (
	// DefaultMaxSteps bounds the model requests of one turn.
	DefaultMaxSteps = 50
	// DefaultContextWindow is the context window, in tokens, assumed for a
	// model when [Options.ContextWindow] is zero.
	DefaultContextWindow = 128_000
)

// Options configure an [Agent].
type Options struct {
	// Session is the session the agent acts in. Required.
	Session *host.Session
	// Provider answers the model requests. Required.
	Provider provider.Provider
	// Model is the model to ask, as the provider names it. Required.
	Model string
	// BasePrompt is the host's base system prompt, the start of the
	// stable prefix.
	BasePrompt string
	// MaxSteps bounds the model requests of a turn; zero means
	// [DefaultMaxSteps].
	MaxSteps int
	// MaxTokens caps each reply's tokens; zero leaves it to the provider.
	MaxTokens int
	// MaxTurnTokens bounds the output tokens of a turn, summed over its
	// requests; the turn stops after the request that reaches it. Zero
	// means no bound.
	MaxTurnTokens int64
	// ContextWindow is the model's context window in tokens; zero means
	// [DefaultContextWindow].
	ContextWindow int
	// Count counts the tokens of a text. Nil estimates four bytes a
	// token. It is called only once a request's size in bytes exceeds
	// the room in the window (see [Agent.Request]), so a costly tokenizer
	// is loaded only when a conversation grows that large.
	Count func(string) int
}

// A StopReason says why a turn ended without an error.
type StopReason string

// The stop reasons.
const (
	// StopDone: the model answered without calling a tool.
	StopDone StopReason = "stop"
	// StopMaxSteps: the turn reached [Options.MaxSteps].
	StopMaxSteps StopReason = "max_steps"
	// StopMaxTokens: the turn reached [Options.MaxTurnTokens].
	StopMaxTokens StopReason = "max_tokens"
	// StopLength: the reply reached [Options.MaxTokens] and was cut.
	StopLength StopReason = "length"
	// StopContentFilter: the provider withheld or refused the reply.
	StopContentFilter StopReason = "content_filter"
)

// A TurnResult is what a turn came to.
type TurnResult struct {
	// Text is the model's final answer: the text of the turn's last reply.
	Text string
	Stop StopReason
	// Steps counts the model requests; ToolCalls the tool calls.
	Steps, ToolCalls int
	// Usage sums the tokens of the turn's requests.
	Usage provider.Usage
}

// ErrBusy is returned by [Agent.Turn] while another turn of the same
// agent runs.
var ErrBusy = errors.New("agent: a turn is already running")

// An Agent is one conversation with a model over a session. Its methods
// are safe for concurrent use; turns run one at a time.
type Agent struct {
	o    Options
	busy atomic.Bool

	mu      sync.Mutex
	history []entry
	found   []string            // deferred tools tool_search found, in order
	notes   []string            // context for the next user message
	system  string              // this turn's system prompt
	tools   map[string]toolCost // token counts of tool definitions, by name
	// systemTokens counts system once needed; -1 until then.
	systemTokens int
}

// An entry is a message of the conversation with its size.
type entry struct {
	msg   provider.Message
	bytes int
	// tokens is the message's token count, counted only once a request
	// might not fit the window; -1 until then.
	tokens int
	turn   int // the turn that added it, counted from 1
}

// New returns an agent with an empty conversation.
func New(o Options) (*Agent, error) {
	switch {
	case o.Session == nil:
		return nil, errors.New("agent: no session")
	case o.Provider == nil:
		return nil, errors.New("agent: no model provider")
	case o.Model == "":
		return nil, errors.New("agent: no model named")
	}
	if o.MaxSteps <= 0 {
		o.MaxSteps = DefaultMaxSteps
	}
	if o.ContextWindow <= 0 {
		o.ContextWindow = DefaultContextWindow
	}
	if o.Count == nil {
		o.Count = estimate
	}
	return &Agent{o: o, tools: map[string]toolCost{}}, nil
}

// estimate is the token count when no tokenizer is given: four bytes a
// token, rounded up.
func estimate(s string) int { return (len(s) + 3) / 4 }

// Note adds text the model sees with the next user message, ahead of it
// (the result of a slash command the user ran, say).
func (a *Agent) Note(text string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.notes = append(a.notes, text)
}

// History returns the conversation so far.
func (a *Agent) History() []provider.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]provider.Message, len(a.history))
	for i, e := range a.history {
		out[i] = e.msg
	}
	return out
}

// Found returns the deferred tools the model found with tool_search, which
// every request from then on offers.
func (a *Agent) Found() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.found...)
}

// Turn runs one turn: message goes to the model as the user's, and the
// loop runs until the model answers without a tool call or a bound is
// reached. A provider's failure ends the turn with its error (a
// [*provider.Error] whose message says what to do); a cancelled ctx ends
// it with ctx's error, the conversation kept consistent for the next
// turn.
func (a *Agent) Turn(ctx context.Context, message string) (res TurnResult, err error) {
	if !a.busy.CompareAndSwap(false, true) {
		return TurnResult{}, ErrBusy
	}
	defer a.busy.Store(false)
	s := a.o.Session
	turn := s.BeginTurn(ctx)
	defer func() { s.FinishTurn(err) }()
	defer func() {
		if err == nil {
			s.FireEvent(ctx, yep.HookNotification, host.NotifyIdle, yep.HookPayload{Source: host.NotifyIdle, Message: res.Text})
		}
	}()
	if message, err = a.submit(ctx, message); err != nil {
		return res, err
	}

	system := s.SystemPrompt(ctx, a.o.BasePrompt)
	a.mu.Lock()
	a.system, a.systemTokens = system, -1
	if len(a.notes) > 0 {
		message = strings.Join(a.notes, "\n\n") + "\n\n" + message
		a.notes = nil
	}
	a.appendLocked(turn, provider.Message{Role: provider.RoleUser, Text: message})
	a.mu.Unlock()

	compacted := false
	refusals := 0 // of the turn's end, by stop hooks
	for res.Steps < a.o.MaxSteps {
		req := a.Request()
		reply, err := a.reason(ctx, req)
		res.Steps++
		res.Usage.InputTokens += reply.Usage.InputTokens
		res.Usage.OutputTokens += reply.Usage.OutputTokens
		res.Usage.CachedInputTokens += reply.Usage.CachedInputTokens
		if err != nil {
			if ctx.Err() == nil && errors.Is(err, provider.ErrContextTooLong) && !compacted {
				// The count was short of the provider's: make room once.
				compacted = true
				s.FireEvent(ctx, yep.HookPreCompact, "auto", yep.HookPayload{Source: "auto"})
				a.compact()
				continue
			}
			if ctx.Err() != nil && reply.Text != "" && len(reply.ToolCalls) == 0 {
				a.add(turn, provider.Message{Role: provider.RoleAssistant, Text: reply.Text})
			}
			return res, err
		}
		a.add(turn, provider.Message{Role: provider.RoleAssistant, Text: reply.Text, ToolCalls: reply.ToolCalls})
		res.Text = reply.Text
		if len(reply.ToolCalls) == 0 {
			res.Stop = stopOf(reply.FinishReason)
			if res.Stop == StopDone {
				if why, refused := a.stopRefused(ctx, reply.Text, refusals); refused {
					refusals++
					a.add(turn, provider.Message{Role: provider.RoleUser, Text: why})
					continue
				}
			}
			return res, nil
		}
		res.ToolCalls += len(reply.ToolCalls)
		if err := a.act(ctx, turn, reply.ToolCalls); err != nil {
			return res, err
		}
		if a.o.MaxTurnTokens > 0 && res.Usage.OutputTokens >= a.o.MaxTurnTokens {
			res.Stop = StopMaxTokens
			return res, nil
		}
	}
	res.Stop = StopMaxSteps
	return res, nil
}

func stopOf(f provider.FinishReason) StopReason {
	switch f {
	case provider.FinishLength:
		return StopLength
	case provider.FinishContentFilter:
		return StopContentFilter
	}
	return StopDone
}

// reason streams one model request between reason.started and
// reason.completed, with its llm.generation under it.
func (a *Agent) reason(ctx context.Context, req provider.Request) (provider.Result, error) {
	s := a.o.Session
	span := host.NewSpanID()
	s.Emit(host.Event{Type: yep.TraceReasonStarted, SpanID: span})
	start := time.Now()
	reply, err := a.o.Provider.Stream(ctx, req, func(d provider.Delta) {
		if d.Text != "" {
			s.Emit(host.Event{Type: yep.EventTextDelta, SpanID: span, Data: yep.TextDeltaData{Text: d.Text}})
		}
	})
	took := float64(time.Since(start).Microseconds()) / 1000
	gen := yep.LLMGenerationData{
		Operation: "chat", Model: req.Model, ResponseModel: reply.Model, Provider: a.o.Provider.Name(), ResponseID: reply.ResponseID,
		InputTokens: reply.Usage.InputTokens, CachedInputTokens: reply.Usage.CachedInputTokens, OutputTokens: reply.Usage.OutputTokens,
		DurationMS: took,
	}
	if reply.FinishReason != "" {
		gen.FinishReasons = []string{string(reply.FinishReason)}
	}
	done := yep.PhaseData{DurationMS: took}
	if err != nil {
		gen.Error, done.Error = err.Error(), err.Error()
	}
	s.Emit(host.Event{Type: yep.TraceLLMGeneration, SpanID: host.NewSpanID(), ParentID: span, Data: gen})
	s.Emit(host.Event{Type: yep.TraceReasonCompleted, SpanID: span, Data: done})
	return reply, err
}

// act runs one reply's tool calls concurrently between act.started and
// act.completed and adds their results to the conversation, in the
// reply's order. It returns ctx's error when the turn was cancelled.
func (a *Agent) act(ctx context.Context, turn int, calls []provider.ToolCall) error {
	s := a.o.Session
	span := host.NewSpanID()
	s.Emit(host.Event{Type: yep.TraceActStarted, SpanID: span})
	start := time.Now()
	results := make([]provider.ToolResult, len(calls))
	var wg sync.WaitGroup
	cctx := host.WithParentSpan(ctx, span)
	for i, c := range calls {
		wg.Go(func() { results[i] = a.call(cctx, c) })
	}
	wg.Wait()
	for i, c := range calls {
		if c.Name == toolSearch && !results[i].IsError {
			a.noteFound(results[i].Content)
		}
		a.add(turn, provider.Message{Role: provider.RoleTool, ToolResult: &results[i]})
	}
	done := yep.PhaseData{DurationMS: float64(time.Since(start).Microseconds()) / 1000}
	if err := ctx.Err(); err != nil {
		done.Error = "cancelled"
	}
	s.Emit(host.Event{Type: yep.TraceActCompleted, SpanID: span, Data: done})
	return ctx.Err()
}

// toolSearch is the name of the session's meta-tool over deferred tools.
const toolSearch = "tool_search"

// call runs one tool call and says what came of it as the model reads it.
func (a *Agent) call(ctx context.Context, c provider.ToolCall) provider.ToolResult {
	out := provider.ToolResult{CallID: c.ID}
	res, err := a.o.Session.CallTool(ctx, c.Name, c.ID, c.Args, nil)
	var blocked *host.HookBlockedError
	switch {
	case ctx.Err() != nil:
		out.Content, out.IsError = "cancelled: the user interrupted the turn before the tool finished", true
	case errors.As(err, &blocked):
		out.Content, out.IsError = fmt.Sprintf("blocked by a hook of %s: %s", blocked.Capability, blocked.Reason), true
	case err != nil:
		out.Content, out.IsError = "error: "+err.Error(), true
	default:
		out.Content, out.IsError = res.Output, res.IsError
		if out.Content == "" && len(res.Data) > 0 && string(res.Data) != "null" {
			out.Content = string(res.Data)
		}
	}
	return out
}

// noteFound adds the tools a tool_search result names to the ones every
// request offers from now on.
func (a *Agent) noteFound(content string) {
	var found []struct {
		Name string `json:"name"`
	}
	if json.Unmarshal([]byte(content), &found) != nil {
		return // "no deferred tool matches …"
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, f := range found {
		if f.Name != "" && !slices.Contains(a.found, f.Name) {
			a.found = append(a.found, f.Name)
		}
	}
}

// add appends a message to the conversation.
func (a *Agent) add(turn int, m provider.Message) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.appendLocked(turn, m)
}

func (a *Agent) appendLocked(turn int, m provider.Message) {
	a.history = append(a.history, entry{msg: m, bytes: messageBytes(m), tokens: -1, turn: turn})
}

// messageTokens counts what a message sends: its text, its calls' names
// and arguments, its result.
func (a *Agent) messageTokens(m provider.Message) int { return measure(m, a.o.Count) }

// messageBytes is the size of what a message sends, an upper bound of
// its tokens.
func messageBytes(m provider.Message) int { return measure(m, func(s string) int { return len(s) }) }

func measure(m provider.Message, size func(string) int) int {
	n := size(m.Text)
	for _, c := range m.ToolCalls {
		n += size(c.Name) + size(string(c.Args))
	}
	if m.ToolResult != nil {
		n += size(m.ToolResult.Content)
	}
	return n + messageOverhead
}

// messageOverhead is what a message costs beyond its text: role and
// framing, about four tokens in OpenAI's accounting.
const messageOverhead = 4
