package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core"
	"yolop.dev/core/yep"
)

// MaxNeverDefer is the never_defer budget of one extension: at most this
// many of its tools have their schema always loaded; the rest are deferred
// behind the built-in tool_search. It is [yep.MaxNeverDefer].
const MaxNeverDefer = yep.MaxNeverDefer

// SessionOptions configure a [Session].
type SessionOptions struct {
	// Builtins are compiled-in capabilities, first in harness order.
	Builtins []Capability
	// Grants are the enabled extensions, in harness order.
	Grants []Grant
	// Contributed serve tools from outside the host (MCP servers), after
	// the extensions' in harness order; see [ContributedTools].
	Contributed []ContributedTools
	// Transport starts extension servers. Required when Grants is not
	// empty.
	Transport core.Transport
	// Logger is the host logger. Nil means no logging.
	Logger hclog.Logger
	// Ask answers ui/ask questions; nil answers them cancelled. (An
	// extension's status/changed is an event: see [Session.Subscribe].)
	Ask AskSink
	// SessionID and WorkspaceRoot go to every extension.
	SessionID, WorkspaceRoot string
	// ToolTimeout is the user's limit on one tool call of this session.
	// Zero means none set.
	//
	// A call is bounded by the explicit limits that apply to it: the
	// tool's own TimeoutMS (the manifest's timeout_ms) if declared, and
	// ToolTimeout if set, whichever is smaller; so the manifest is an upper
	// bound the user can lower, never raise past. When neither is set the
	// limit is [DefaultToolTimeout]. The limit bounds the tool running on
	// a started server: not a lazy extension's start (bounded by its
	// handshake timeout) nor the tool's hooks (bounded by theirs). When it
	// expires the server is sent cancel and the call fails with a
	// *[ToolTimeoutError].
	ToolTimeout time.Duration
	// CompileArgs, if set, compiles a tool's approved input_schema (nil
	// when it has none) into the check of its call arguments. The check
	// runs before anything sees the arguments — hooks or the server — and
	// again after a pre_tool_use hook rewrote them. Its error, or
	// CompileArgs's own (a schema that does not compile), fails the call
	// with [ErrInvalidArgs] and the server is never called. Each schema is
	// compiled once, on its tool's first call, and kept while the tool's
	// definition is unchanged: an extension's tools once per approved
	// grant. Nil checks only that the arguments are JSON (core depends on
	// no JSON Schema validator; the harness supplies one).
	CompileArgs func(schema json.RawMessage) (check func(args json.RawMessage) error, err error)
	// Policy is the user's rule for one tool (RuleAllow, RuleAsk,
	// RuleDeny, or "" for none), asked on every call with the serving
	// extension's name and version ("" for a built-in or contributed
	// tool). It can only tighten what the manifest declares: the call's
	// rule is the tightest of the manifest's (approval "always" asks,
	// anything else allows) and Policy's; an unknown answer counts as ask.
	// Nil leaves the manifest's rule. See [Session.CallTool].
	Policy func(t ToolInfo, ext, version string) string
	// Approve decides a call that needs approval; nil puts
	// [ApprovalRequest.Question] to the user through Ask as a ui/ask with
	// options ["allow", "deny"] (the answer "allow" approves; anything
	// else, cancelled included, denies), one question at a time: a call
	// that needs approval while another question is open is denied.
	// Approve may return an error (counted as a denial with that reason).
	Approve func(ctx context.Context, r ApprovalRequest) (approved bool, reason string, err error)
	// Extension is the template for every extension's options; Transport,
	// Logger, sinks, session id and workspace are filled in.
	Extension ExtensionOptions
}

// A Session assembles capabilities and drives them turn by turn. Its
// methods are safe for concurrent use.
type Session struct {
	opts SessionOptions
	log  hclog.Logger
	asks *askGate

	mu       sync.Mutex
	caps     []Capability // in harness order: built-ins, then extensions
	exts     map[string]*Extension
	pending  []activation
	tools    map[string]*toolEntry
	toolList []*toolEntry
	checks   map[string]*argsCheck // by capability and tool; see argsChecks
	warnings []string
	turn     int
	span     turnSpan // the turn in progress; zero between turns
	closed   bool
	warned   map[string]bool // warnings already emitted
	hooks    hookLedger      // hook firings, for the hook report; see hookevents.go

	subMu      sync.Mutex
	subs       []*subscriber // replaced, never mutated in place
	subsClosed bool
	dropped    atomic.Int64
}

type activation struct {
	ext    *Extension
	enable bool
}

type toolEntry struct {
	name     string // the session-wide name the agent calls
	cap      Capability
	def      ToolDef
	deferred bool
	args     *argsCheck
	hay      string // name and description in lower case, for tool_search
}

// ToolInfo describes one tool of the session.
type ToolInfo struct {
	// Name is what the agent calls: the tool's own name, or
	// "<ext>__<tool>" when that collides.
	Name       string
	Capability string
	Def        ToolDef
	// Deferred tools are reachable through tool_search only.
	Deferred bool
}

// DefaultToolTimeout bounds a tool call when neither the tool nor the
// session sets a limit. It is [yep.DefaultToolTimeout].
const DefaultToolTimeout = yep.DefaultToolTimeout

// effectiveToolTimeout is the limit of one call: the smaller of the
// tool's declared timeout and the session's, when set; else the default.
func effectiveToolTimeout(toolMS int, session time.Duration) time.Duration {
	limit := session
	if toolMS > 0 {
		if d := time.Duration(toolMS) * time.Millisecond; limit <= 0 || d < limit {
			limit = d
		}
	}
	if limit <= 0 {
		return DefaultToolTimeout
	}
	return limit
}

// NewSession builds a session. Nothing is started until [Session.Start].
func NewSession(opts SessionOptions) *Session {
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	s := &Session{opts: opts, log: log, asks: &askGate{sink: opts.Ask}, exts: map[string]*Extension{}}
	s.asks.notify = s.notifyAsk
	s.caps = slices.Clone(opts.Builtins)
	for _, g := range opts.Grants {
		e := s.newExtension(g)
		s.exts[g.Name] = e
		s.caps = append(s.caps, e)
	}
	s.rebuild()
	return s
}

func (s *Session) newExtension(g Grant) *Extension {
	eo := s.opts.Extension
	eo.Transport = s.opts.Transport
	eo.Logger = s.log
	eo.Asks = s.asks
	eo.Status = statusEvents{s}
	eo.emit = s.Emit
	eo.SessionID = s.opts.SessionID
	eo.WorkspaceRoot = s.opts.WorkspaceRoot
	return NewExtension(g, eo)
}

// Start spawns every eager extension in parallel, each bounded by its
// handshake timeout, so one wedged extension is marked degraded and never
// holds up the first turn. Failures are logged and visible in Stats; Start
// returns them joined but the session stays usable.
func (s *Session) Start(ctx context.Context) error {
	s.mu.Lock()
	var eager []*Extension
	for _, c := range s.caps {
		if e, ok := c.(*Extension); ok && e.Eager() {
			eager = append(eager, e)
		}
	}
	s.mu.Unlock()
	errs := make([]error, len(eager))
	var wg sync.WaitGroup
	for i, e := range eager {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := e.Start(ctx); err != nil {
				// Returned to the caller to show; logged for debugging only,
				// so a front-end does not print it twice.
				s.log.Debug("extension did not start", "extension", e.ExtName(), "error", err)
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	s.sync(ctx)
	s.mu.Lock()
	s.rebuild()
	s.mu.Unlock()
	s.Emit(Event{Type: yep.TraceSessionStarted})
	s.fireSessionStart(ctx)
	s.noteWarnings()
	return errors.Join(errs...)
}

// rebuild recomputes the tool registry. Called with s.mu held.
func (s *Session) rebuild() {
	s.tools = map[string]*toolEntry{}
	s.toolList = nil
	s.warnings = nil
	builtin := map[string]bool{}
	for _, c := range s.caps {
		if _, ok := c.(*Extension); ok {
			continue
		}
		for _, t := range c.Tools() {
			builtin[t.Name] = true
			s.addTool(&toolEntry{name: t.Name, cap: c, def: t})
		}
	}
	// A contributed tool's name (mcp__<server>__<tool>) is its own: an
	// extension tool of the same name is the one renamed, so it cannot take
	// the calls meant for an MCP server.
	contributed := make([][]ToolDef, len(s.opts.Contributed))
	reserved := map[string]bool{}
	for i, c := range s.opts.Contributed {
		contributed[i] = c.Tools()
		for _, t := range contributed[i] {
			reserved[t.Name] = true
		}
	}
	anyDeferred := false
	for _, c := range s.caps {
		e, ok := c.(*Extension)
		if !ok {
			continue
		}
		loaded := 0
		for _, t := range e.Tools() {
			name := t.Name
			if builtin[name] || s.tools[name] != nil || reserved[name] || name == toolSearchName {
				q := e.ExtName() + "__" + t.Name
				s.warnings = append(s.warnings, fmt.Sprintf("tool %q of extension %q collides with an existing tool; registered as %q", t.Name, e.ExtName(), q))
				// The warning reaches the user through Warnings, once; the
				// registry is rebuilt at every start and turn boundary.
				s.log.Debug("tool name collision", "extension", e.ExtName(), "tool", t.Name, "registered_as", q)
				name = q
			}
			deferred := true
			if t.NeverDefer && loaded < MaxNeverDefer {
				deferred = false
				loaded++
			} else if t.NeverDefer {
				s.warnings = append(s.warnings, fmt.Sprintf("extension %q has more than %d never_defer tools; %q is deferred behind tool_search", e.ExtName(), MaxNeverDefer, t.Name))
			}
			anyDeferred = anyDeferred || deferred
			s.addTool(&toolEntry{name: name, cap: e, def: t, deferred: deferred})
		}
	}
	for i, c := range s.opts.Contributed {
		for _, t := range contributed[i] {
			name := t.Name
			if builtin[name] || s.tools[name] != nil || name == toolSearchName {
				q := c.Name() + "__" + t.Name
				s.warnings = append(s.warnings, fmt.Sprintf("tool %q of %s collides with an existing tool; registered as %q", t.Name, c.Name(), q))
				name = q
			}
			anyDeferred = anyDeferred || !t.NeverDefer
			s.addTool(&toolEntry{name: name, cap: c, def: t, deferred: !t.NeverDefer})
		}
	}
	if anyDeferred && s.tools[toolSearchName] == nil {
		s.addTool(&toolEntry{name: toolSearchName, cap: toolSearch{s}, def: toolSearchDef})
	}
	s.argsChecks()
}

func (s *Session) addTool(t *toolEntry) {
	if t.deferred {
		t.hay = strings.ToLower(t.name + " " + t.def.Description)
	}
	s.tools[t.name] = t
	s.toolList = append(s.toolList, t)
}

// Tools lists the session's tools in harness order: loaded and deferred.
func (s *Session) Tools() []ToolInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ToolInfo, 0, len(s.toolList))
	for _, t := range s.toolList {
		out = append(out, ToolInfo{Name: t.name, Capability: t.cap.Name(), Def: t.def, Deferred: t.deferred})
	}
	return out
}

// Warnings lists tool-policy warnings (collisions, never_defer budget)
// and what extension handshakes flagged (a match-all "*" hook).
func (s *Session) Warnings() []string {
	s.mu.Lock()
	out := slices.Clone(s.warnings)
	exts := s.extensions()
	s.mu.Unlock()
	for _, e := range exts {
		out = append(out, e.Warnings()...)
	}
	for _, c := range s.opts.Contributed {
		out = append(out, c.Warnings()...)
	}
	return out
}

// Extension returns the adapter of an extension in the session.
func (s *Session) Extension(name string) (*Extension, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.exts[name]
	return e, ok
}

// CallTool runs one tool by its session name: pre_tool_use hooks in harness
// order (any block wins; mutate replaces the arguments), the call itself
// with streamed updates, then post_tool_use hooks (mutate replaces the
// result). Absent arguments (nil or empty) are {}. The arguments
// are checked once (see [SessionOptions.CompileArgs]), and once more when a
// hook replaced them; hooks, trace events and the server get those bytes. The call itself is bounded by its tool timeout (see
// [SessionOptions.ToolTimeout]), hooks by their own timeouts, and all of
// it by ctx.
//
// The call is a span of the turn's trace (a trace of its own outside a
// turn): its W3C traceparent goes to the server with tool/call and to
// every hook/fire of the call, and its ids into the tool.started and
// tool.completed trace events, which bracket the hooks and the call.
//
// After the hooks, and before a lazy server is started or the server
// called, the call is approved: the tightest of the manifest's approval
// and [SessionOptions.Policy] decides whether it runs, is put to the user
// (see [SessionOptions.Approve]) or is denied. tool.approval reports every
// call asked about or denied, and every call a hook blocked.
//
// A name that is no tool of the session fails matching [ErrNoSuchTool], a
// block by a hook with a *[HookBlockedError], a denial with a
// *[ApprovalDeniedError] and the limit with a *[ToolTimeoutError]; see
// [Extension.CallTool] for the extension's own.
func (s *Session) CallTool(ctx context.Context, name, callID string, args json.RawMessage, onUpdate func(yep.ToolUpdateParams)) (res yep.ToolResult, err error) {
	s.mu.Lock()
	t := s.tools[name]
	turn, span := s.turn, s.span
	s.mu.Unlock()
	if t == nil {
		return yep.ToolResult{}, newError(ErrNoSuchTool, nil, "no tool %q in this session", name)
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if err := s.checkArgs(t, args); err != nil {
		return yep.ToolResult{}, err
	}

	traced := s.traced()
	tool := toolSpan{turn: span, spanID: NewSpanID(), under: parentSpan(ctx)}
	if tool.turn.traceID == "" {
		tool.turn.traceID = NewTraceID()
	}
	tool.parent = TraceParent(tool.turn.traceID, tool.spanID, traced)
	// Events are built only when something reads them: a subscriber or a
	// trace-declaring extension. The call's hooks go by the same answer.
	tool.observed = traced || s.hasSubscribers()
	if tool.observed {
		start := time.Now()
		ext := ""
		if e, ok := t.cap.(*Extension); ok {
			ext = e.ExtName()
		}
		// What the event shows of the arguments has the schema's secret
		// fields redacted: front-ends print it and trace consumers keep it.
		shown := redactArgs(t.def.InputSchema, args)
		narration := s.scrub(Narrate(t.def.Narration, name, shown))
		s.Emit(tool.event(yep.TraceToolStarted, turn, yep.ToolStartedData{Tool: name, Capability: t.cap.Name(), Extension: ext, ToolCallID: callID, Args: shown, Narration: narration}))
		defer func() {
			done := yep.ToolCompletedData{Tool: name, Capability: t.cap.Name(), Extension: ext, ToolCallID: callID,
				DurationMS: float64(time.Since(start).Microseconds()) / 1000, IsError: err != nil || res.IsError, Status: toolStatus(res, err)}
			if err != nil {
				done.Error = err.Error()
			}
			s.Emit(tool.event(yep.TraceToolCompleted, turn, done))
		}()
		caller := onUpdate
		onUpdate = func(u yep.ToolUpdateParams) {
			s.Emit(tool.event(yep.EventToolUpdate, turn, yep.ToolUpdateData{Tool: name, Extension: ext, ToolCallID: callID, Output: u.Output, Progress: u.Progress, Data: u.Data}))
			if caller != nil {
				caller(u)
			}
		}
	}

	if len(s.subscriptions(yep.HookPostToolUse, t.name)) > 0 {
		// A post_tool_use hook may replace the result: what the tool
		// streams before the hook ran reaches nobody (events, traces, the
		// caller), only its progress does.
		onUpdate = withholdStreamed(onUpdate)
	}
	mutated, err := s.firePre(ctx, t, callID, args, tool, turn)
	if err != nil {
		var blocked *HookBlockedError
		if errors.As(err, &blocked) && tool.observed {
			ext, version := toolExtension(t)
			s.Emit(tool.event(yep.TraceToolApproval, turn, yep.ToolApprovalData{Tool: name, Capability: blocked.Capability, Extension: ext, Version: version,
				ToolCallID: callID, Decision: yep.ApprovalBlocked, By: yep.ApprovalByHook, Reason: blocked.Reason}))
		}
		return yep.ToolResult{}, err
	}
	if string(mutated) != string(args) {
		// A pre_tool_use hook rewrote the arguments: they are checked too.
		if err := s.checkArgs(t, mutated); err != nil {
			return yep.ToolResult{}, err
		}
		args = mutated
	}
	// The user approves the arguments the server will get, and a hook's
	// block spares them the question.
	if err := s.approve(ctx, t, callID, args, tool, turn); err != nil {
		return yep.ToolResult{}, err
	}
	if e, ok := t.cap.(*Extension); ok {
		// Start a lazy server first: its start is bounded by the handshake
		// timeout, and the tool's own limit counts from a running server.
		if err := e.Start(ctx); err != nil {
			return yep.ToolResult{}, err
		}
	}
	limit := effectiveToolTimeout(t.def.TimeoutMS, s.opts.ToolTimeout)
	timeout := &ToolTimeoutError{Tool: name, Capability: t.cap.Name(), Timeout: limit}
	callCtx, cancel := context.WithTimeoutCause(ctx, limit, timeout)
	res, err = t.cap.CallTool(callCtx, ToolCall{ID: callID, Name: t.def.Name, Args: args, TraceParent: tool.parent}, onUpdate)
	if err != nil && context.Cause(callCtx) == error(timeout) {
		// The limit expired: the connection sent cancel and resolved the
		// call as cancelled, but for the user it is a timeout.
		res, err = yep.ToolResult{}, timeout
	}
	cancel()
	if err != nil {
		s.fireFailure(ctx, t.name, callID, args, err.Error())
		return res, err
	}
	res = s.firePost(ctx, t, callID, args, res, tool, turn)
	if res.IsError {
		s.fireFailure(ctx, t.name, callID, args, res.Output)
	}
	return res, nil
}

// withholdStreamed passes on an update's progress without its output and
// data, and drops an update that carries nothing else.
func withholdStreamed(next func(yep.ToolUpdateParams)) func(yep.ToolUpdateParams) {
	if next == nil {
		return nil
	}
	return func(u yep.ToolUpdateParams) {
		if u.Progress == nil {
			return
		}
		u.Output, u.Data = "", nil
		next(u)
	}
}

// toolSpan is the host's span of one tool call.
type toolSpan struct {
	turn     turnSpan // the trace, and the turn's span when in a turn
	spanID   string
	under    string // the span the call is a child of, when not the turn's
	parent   string // the traceparent servers get
	observed bool   // the call's events have a reader
}

func (t toolSpan) event(typ string, turn int, data any) Event {
	ev := Event{Type: typ, TraceID: t.turn.traceID, SpanID: t.spanID, ParentID: t.turn.spanID, Data: data}
	if t.under != "" && t.turn.spanID != "" {
		ev.ParentID = t.under
	}
	if t.turn.spanID != "" {
		ev.TurnID = fmt.Sprint(turn)
	}
	return ev
}

// toolStatus is the outcome of a tool call as tool.completed reports it.
func toolStatus(res yep.ToolResult, err error) string {
	var blocked *HookBlockedError
	switch {
	case err == nil && res.IsError:
		return yep.ToolError
	case err == nil:
		return yep.ToolOK
	case errors.As(err, &blocked):
		return yep.ToolBlocked
	case errors.Is(err, ErrApprovalDenied):
		return yep.ToolDenied
	case errors.Is(err, ErrToolTimeout):
		return yep.ToolTimeout
	case errors.Is(err, context.Canceled) || errors.Is(err, yep.ErrCancelled):
		return yep.ToolCancelled
	}
	return yep.ToolFailed
}

// hookTarget is one subscription to fire.
type hookTarget struct {
	cap Capability
	sub HookGrant
}

func (s *Session) subscriptions(event, tool string) []hookTarget {
	s.mu.Lock()
	caps := s.caps // never mutated in place: BeginTurn replaces the slice
	s.mu.Unlock()
	var out []hookTarget
	for _, c := range caps {
		for _, h := range c.Hooks() {
			if h.Event != event {
				continue
			}
			if ok, _ := path.Match(h.Matcher, tool); ok || h.Matcher == "*" {
				out = append(out, hookTarget{c, h})
			}
		}
	}
	return out
}

func (s *Session) firePre(ctx context.Context, t *toolEntry, callID string, args json.RawMessage, tool toolSpan, turn int) (json.RawMessage, error) {
	var payload json.RawMessage // encoded once per version of the arguments
	for _, h := range s.subscriptions(yep.HookPreToolUse, t.name) {
		if payload == nil {
			payload = mustJSON(yep.HookPayload{ToolCallID: callID, Args: args})
		}
		res, err := s.fireHook(ctx, h, tool, turn, yep.HookFireParams{Event: yep.HookPreToolUse, ToolName: t.name, Payload: payload, TraceParent: tool.parent})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if h.sub.OnError == yep.HookOnErrorBlock {
				s.log.Warn("blocking hook failed; failing closed", "capability", h.cap.Name(), "error", err)
				return nil, &HookBlockedError{Capability: h.cap.Name(), Tool: t.name, Reason: fmt.Sprintf("hook failed and its on_error is block: %v", err)}
			}
			s.log.Warn("hook failed; continuing (on_error: warn)", "capability", h.cap.Name(), "error", err)
			continue
		}
		switch res.Decision {
		case yep.DecisionBlock:
			reason := res.Reason
			if reason == "" {
				reason = "no reason given"
			}
			return nil, &HookBlockedError{Capability: h.cap.Name(), Tool: t.name, Reason: reason}
		case yep.DecisionMutate:
			if len(res.Args) > 0 {
				args, payload = res.Args, nil
			}
		}
	}
	return args, nil
}

func (s *Session) firePost(ctx context.Context, t *toolEntry, callID string, args json.RawMessage, res yep.ToolResult, tool toolSpan, turn int) yep.ToolResult {
	var payload json.RawMessage // encoded once per version of the result
	for _, h := range s.subscriptions(yep.HookPostToolUse, t.name) {
		if payload == nil {
			r := res
			payload = mustJSON(yep.HookPayload{ToolCallID: callID, Args: args, Result: &r})
		}
		dec, err := s.fireHook(ctx, h, tool, turn, yep.HookFireParams{Event: yep.HookPostToolUse, ToolName: t.name, Payload: payload, TraceParent: tool.parent})
		if err != nil {
			if h.sub.OnError == yep.HookOnErrorBlock {
				s.log.Warn("blocking post hook failed; withholding the result", "capability", h.cap.Name(), "error", err)
				return yep.ToolResult{IsError: true, Output: fmt.Sprintf("result withheld: post_tool_use hook of %s failed and its on_error is block: %v", h.cap.Name(), err)}
			}
			s.log.Warn("post hook failed; continuing (on_error: warn)", "capability", h.cap.Name(), "error", err)
			continue
		}
		switch dec.Decision {
		case yep.DecisionMutate:
			if dec.Result != nil {
				res, payload = *dec.Result, nil
			}
		case yep.DecisionBlock:
			reason := dec.Reason
			if reason == "" {
				reason = "no reason given"
			}
			return yep.ToolResult{IsError: true, Output: fmt.Sprintf("result withheld by %s: %s", h.cap.Name(), reason)}
		}
	}
	return res
}

// BeginTurn starts a turn: pending activations take effect (see
// [Session.ApplyPending]), contributed tools are brought up to date, and
// turn.started is traced. It returns the turn number.
func (s *Session) BeginTurn(ctx context.Context) int {
	s.applyPending(ctx)
	s.mu.Lock()
	s.turn++
	turn := s.turn
	span := turnSpan{traceID: NewTraceID(), spanID: NewSpanID(), start: time.Now()}
	s.span = span
	s.mu.Unlock()
	s.Emit(Event{Type: yep.TraceTurnStarted, TurnID: fmt.Sprint(turn), TraceID: span.traceID, SpanID: span.spanID})
	return turn
}

// ApplyPending makes the activations and deactivations queued by
// [Session.Activate] and [Session.Deactivate] take effect now, as the next
// [Session.BeginTurn] would: an activated eager extension starts, a
// deactivated one stops, and [Session.Tools] lists the result. With
// nothing queued it does nothing. A front-end whose commands run between
// turns (a REPL) calls it before each command, so that what a command
// lists agrees with what the next turn can call.
func (s *Session) ApplyPending(ctx context.Context) {
	s.mu.Lock()
	queued := len(s.pending) > 0
	s.mu.Unlock()
	if queued {
		s.applyPending(ctx)
	}
}

// applyPending applies the queued activations, brings contributed tools
// up to date and rebuilds the tool list if either changed it.
func (s *Session) applyPending(ctx context.Context) {
	s.mu.Lock()
	pending := s.pending
	s.pending = nil
	s.mu.Unlock()
	var stop []*Extension
	for _, a := range pending {
		s.mu.Lock()
		i := slices.IndexFunc(s.caps, func(c Capability) bool { return c == a.ext })
		switch {
		case a.enable && i < 0:
			s.caps = append(slices.Clone(s.caps), a.ext) // copy on write: readers hold the old slice
			s.exts[a.ext.ExtName()] = a.ext
		case !a.enable && i >= 0:
			s.caps = slices.Delete(slices.Clone(s.caps), i, i+1)
			delete(s.exts, a.ext.ExtName())
			stop = append(stop, a.ext)
		}
		s.mu.Unlock()
		if a.enable && a.ext.Eager() {
			if err := a.ext.Start(ctx); err != nil {
				s.log.Warn("activated extension did not start", "extension", a.ext.ExtName(), "error", err)
			}
		}
	}
	for _, e := range stop {
		e.Close()
	}
	changed := s.sync(ctx)
	if len(pending) > 0 || changed {
		s.mu.Lock()
		s.rebuild()
		s.mu.Unlock()
		s.noteWarnings()
	}
}

// EndTurn traces turn.completed and closes the turn's trace: tool calls
// until the next [Session.BeginTurn] get traces of their own.
func (s *Session) EndTurn() { s.FinishTurn(nil) }

// FinishTurn ends the current turn as [Session.EndTurn] does; a non-nil
// err is the turn's failure, which turn.completed reports.
func (s *Session) FinishTurn(err error) {
	s.mu.Lock()
	turn, span := s.turn, s.span
	s.span = turnSpan{}
	s.mu.Unlock()
	ev := Event{Type: yep.TraceTurnCompleted, TurnID: fmt.Sprint(turn), TraceID: span.traceID, SpanID: span.spanID}
	if !span.start.IsZero() || err != nil {
		d := yep.PhaseData{}
		if !span.start.IsZero() {
			d.DurationMS = float64(time.Since(span.start).Microseconds()) / 1000
		}
		if err != nil {
			d.Error = err.Error()
		}
		ev.Data = d
	}
	s.Emit(ev)
}

type parentSpanKey struct{}

// WithParentSpan returns a context under which [Session.CallTool] makes
// the call's span a child of spanID (a span of the turn in progress, such
// as the agent loop's act span) instead of the turn's root span.
func WithParentSpan(ctx context.Context, spanID string) context.Context {
	return context.WithValue(ctx, parentSpanKey{}, spanID)
}

func parentSpan(ctx context.Context) string {
	id, _ := ctx.Value(parentSpanKey{}).(string)
	return id
}

// TurnSpan returns the W3C trace id and root span id of the turn in
// progress, or empty strings between turns. An agent loop that traces its
// own events (reason.*, act.*, llm.generation) can make them children of
// the turn with these; [Session.Trace] does so for an event that names no
// trace.
func (s *Session) TurnSpan() (traceID, spanID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.span.traceID, s.span.spanID
}

// Activate enables an extension on the live session; it takes effect at
// the next turn boundary.
func (s *Session) Activate(g Grant) {
	e := s.newExtension(g)
	s.mu.Lock()
	s.pending = append(s.pending, activation{ext: e, enable: true})
	s.mu.Unlock()
}

// Deactivate disables an extension on the live session at the next turn
// boundary. It reports whether the extension is in the session.
func (s *Session) Deactivate(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.exts[name]
	if ok {
		s.pending = append(s.pending, activation{ext: e, enable: false})
	}
	return ok
}

// Reload restarts one extension's server in place, within its approved
// grant. A name that is no extension of the session fails matching
// [ErrNoSuchExtension].
func (s *Session) Reload(ctx context.Context, name string) error {
	e, ok := s.Extension(name)
	if !ok {
		return newError(ErrNoSuchExtension, nil, "no extension %q in this session", name)
	}
	return e.Reload(ctx)
}

// EnvironmentContextTag wraps the dynamic prompt contributions at the end
// of the system prompt.
const EnvironmentContextTag = "environment_context"

// A DynamicPrompter is a [Capability] that says whether its prompt
// contribution may change from turn to turn. [Session.SystemPrompt] puts a
// capability that does not implement it, or answers false, in the stable
// prefix.
type DynamicPrompter interface {
	DynamicPrompt() bool
}

// DynamicPrompt implements [DynamicPrompter]: true when the approved grant
// lets the server recompute its contribution each turn.
func (e *Extension) DynamicPrompt() bool {
	c := e.current()
	return c != nil && c.dynamic
}

// SystemPrompt returns the system prompt of the current turn: base, then
// the static contributions, then the trailing environment-context segment
// holding the dynamic ones. Each contribution is wrapped in a
// <capability name="…"> element, in harness order. Everything before the
// segment is byte-identical across turns while the set of capabilities and
// their static texts stay the same, so provider prompt caches keep hitting
// while dynamic contributions change.
func (s *Session) SystemPrompt(ctx context.Context, base string) string {
	s.mu.Lock()
	caps := slices.Clone(s.caps)
	turn := s.turn
	s.mu.Unlock()
	parts := make([]string, len(caps))
	var wg sync.WaitGroup
	for i, c := range caps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text, err := c.Prompt(ctx, turn)
			if err != nil {
				s.log.Warn("prompt contribution failed", "capability", c.Name(), "error", err)
				return
			}
			parts[i] = strings.TrimSpace(text)
		}()
	}
	wg.Wait()
	var static, dynamic strings.Builder
	for i, p := range parts {
		if p == "" {
			continue
		}
		seg := &static
		if d, ok := caps[i].(DynamicPrompter); ok && d.DynamicPrompt() {
			seg = &dynamic
		}
		fmt.Fprintf(seg, "<capability name=%q>\n%s\n</capability>\n", caps[i].Name(), p)
	}
	if sc := s.SessionContext(); sc != "" {
		fmt.Fprintf(&dynamic, "<hook event=%q>\n%s\n</hook>\n", yep.HookSessionStart, sc)
	}
	var b strings.Builder
	b.WriteString(base)
	if static.Len() > 0 {
		fmt.Fprintf(&b, "\n\n%s", strings.TrimSuffix(static.String(), "\n"))
	}
	if dynamic.Len() > 0 {
		fmt.Fprintf(&b, "\n\n<%s>\n%s</%s>", EnvironmentContextTag, dynamic.String(), EnvironmentContextTag)
	}
	return b.String()
}

// A CommandInfo is one slash command of the session.
type CommandInfo struct {
	// Name is what the user types after "/": built-ins by their own name,
	// extension commands as "<ext>:<name>".
	Name        string
	Description string
	Capability  string
}

// Commands lists the session's slash commands.
func (s *Session) Commands() []CommandInfo {
	s.mu.Lock()
	caps := slices.Clone(s.caps)
	s.mu.Unlock()
	var out []CommandInfo
	for _, c := range caps {
		prefix := ""
		if e, ok := c.(*Extension); ok {
			prefix = e.ExtName() + ":"
		}
		for _, cmd := range c.Commands() {
			out = append(out, CommandInfo{Name: prefix + cmd.Name, Description: cmd.Description, Capability: c.Name()})
		}
	}
	return out
}

// ExecuteCommand runs "<ext>:<name>" (or a built-in command by name). A
// name that is no command of the session fails matching
// [ErrNoSuchCommand].
func (s *Session) ExecuteCommand(ctx context.Context, name, args string) (yep.CommandExecuteResult, error) {
	extName, cmd, qualified := strings.Cut(name, ":")
	s.mu.Lock()
	caps := slices.Clone(s.caps)
	s.mu.Unlock()
	for _, c := range caps {
		e, isExt := c.(*Extension)
		switch {
		case qualified && isExt && e.ExtName() == extName:
			return e.ExecuteCommand(ctx, cmd, args)
		case !qualified && !isExt && slices.ContainsFunc(c.Commands(), func(g CommandGrant) bool { return g.Name == name }):
			return c.ExecuteCommand(ctx, name, args)
		}
	}
	return yep.CommandExecuteResult{}, newError(ErrNoSuchCommand, nil, "no command %q in this session", name)
}

// SetWorkspace repoints the workspace for every extension.
func (s *Session) SetWorkspace(root string) {
	s.mu.Lock()
	s.opts.WorkspaceRoot = root
	exts := s.extensions()
	s.mu.Unlock()
	for _, e := range exts {
		e.SetWorkspace(root)
	}
}

// WorkspaceRoot returns the session's workspace root, as set by
// [SessionOptions.WorkspaceRoot] or the last [Session.SetWorkspace].
func (s *Session) WorkspaceRoot() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opts.WorkspaceRoot
}

// extensions lists the session's extensions. Called with s.mu held.
func (s *Session) extensions() []*Extension {
	var out []*Extension
	for _, c := range s.caps {
		if e, ok := c.(*Extension); ok {
			out = append(out, e)
		}
	}
	return out
}

// traced reports whether any extension of the session consumes traces, so
// the hot path builds no event nobody reads.
func (s *Session) traced() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.caps {
		if e, ok := c.(*Extension); ok && e.grant.Trace {
			return true
		}
	}
	return false
}

// Stats returns the attribution counters of every extension.
func (s *Session) Stats() []Stats {
	s.mu.Lock()
	exts := s.extensions()
	s.mu.Unlock()
	out := make([]Stats, len(exts))
	for i, e := range exts {
		out[i] = e.Stats()
	}
	return out
}

// Close stops every extension (graceful, then killed after the grace) and
// waits for them. It is idempotent.
func (s *Session) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	exts := s.extensions()
	for _, a := range s.pending {
		if a.enable {
			exts = append(exts, a.ext)
		}
	}
	s.pending = nil
	s.mu.Unlock()
	s.endHooks()
	s.Emit(Event{Type: yep.TraceSessionCompleted})
	var wg sync.WaitGroup
	for _, c := range s.opts.Contributed {
		wg.Add(1)
		go func() { defer wg.Done(); c.Close() }()
	}
	for _, e := range exts {
		wg.Add(1)
		go func() { defer wg.Done(); e.Close() }()
	}
	wg.Wait()
	s.closeSubscriptions()
}

// sync tells every contributed-tools capability the session's extensions
// and reports whether any one's tools changed.
func (s *Session) sync(ctx context.Context) bool {
	if len(s.opts.Contributed) == 0 {
		return false
	}
	s.mu.Lock()
	exts := s.extensions()
	s.mu.Unlock()
	var wg sync.WaitGroup
	var changed atomic.Bool
	for _, c := range s.opts.Contributed {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c.Sync(ctx, exts) {
				changed.Store(true)
			}
		}()
	}
	wg.Wait()
	return changed.Load()
}

// Contributed returns the session's contributed-tools capabilities (the
// MCP client), for a front-end to show their state.
func (s *Session) Contributed() []ContributedTools { return slices.Clone(s.opts.Contributed) }

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

const toolSearchName = "tool_search"

var toolSearchDef = ToolDef{
	Name:        toolSearchName,
	Description: "Search the deferred tools by name or description and return their full definitions, so they can be called.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"words to match against tool names and descriptions"}},"required":["query"]}`),
	NeverDefer:  true,
}

// toolSearch is the built-in that reaches deferred tools.
type toolSearch struct{ s *Session }

func (toolSearch) Name() string { return "builtin:tool_search" }

func (t toolSearch) CallTool(ctx context.Context, call ToolCall, _ func(yep.ToolUpdateParams)) (yep.ToolResult, error) {
	var in struct{ Query string }
	_ = json.Unmarshal(call.Args, &in)
	words := strings.Fields(strings.ToLower(in.Query))
	t.s.mu.Lock()
	var hits []*toolEntry
	for _, te := range t.s.toolList {
		if !te.deferred {
			continue
		}
		match := len(words) == 0
		for _, w := range words {
			if strings.Contains(te.hay, w) {
				match = true
				break
			}
		}
		if match {
			hits = append(hits, te)
		}
	}
	t.s.mu.Unlock()
	found := make([]map[string]any, 0, len(hits))
	for _, te := range hits {
		found = append(found, map[string]any{"name": te.name, "description": te.def.Description, "input_schema": te.def.InputSchema})
	}
	if len(found) == 0 {
		return yep.ToolResult{Output: "no deferred tool matches " + fmt.Sprintf("%q", in.Query)}, nil
	}
	b, _ := json.MarshalIndent(found, "", "  ")
	return yep.ToolResult{Output: string(b)}, nil
}

func (toolSearch) Tools() []ToolDef { return []ToolDef{toolSearchDef} }
func (toolSearch) Prompt(context.Context, int) (string, error) {
	return "", nil
}
func (toolSearch) Hooks() []HookGrant { return nil }
func (toolSearch) FireHook(context.Context, HookGrant, yep.HookFireParams) (yep.HookFireResult, error) {
	return yep.HookFireResult{Decision: yep.DecisionAllow}, nil
}
func (toolSearch) Commands() []CommandGrant { return nil }
func (toolSearch) ExecuteCommand(context.Context, string, string) (yep.CommandExecuteResult, error) {
	return yep.CommandExecuteResult{}, yep.ErrMethodNotFound
}
func (toolSearch) MCPServers() []yep.MCPServerDecl { return nil }
func (toolSearch) Skills() []string                { return nil }
func (toolSearch) ConfigSchema() json.RawMessage   { return nil }
