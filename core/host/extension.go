package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/yep"
)

// State is the lifecycle state of an extension.
type State string

const (
	// StateIdle: not started yet (lazy) or stopped; the next call starts it.
	StateIdle State = "idle"
	// StateStarting: a process is being spawned and handshaken.
	StateStarting State = "starting"
	// StateReady: the server is running and handshaken.
	StateReady State = "ready"
	// StateCrashed: the server died; the next call respawns it after a
	// backoff.
	StateCrashed State = "crashed"
	// StateDegraded: the server failed to start or crashed too often; it is
	// not respawned until reloaded.
	StateDegraded State = "degraded"
	// StateOff: the extension cannot run (e.g. a protocol major mismatch).
	StateOff State = "off"
)

// ExtensionOptions configure an [Extension]. The zero value of each field
// is documented; Transport is required.
type ExtensionOptions struct {
	// Transport starts server processes. Required.
	Transport core.Transport
	// Logger is the host logger; the extension logs under a sub-logger
	// named after it. Nil means no logging.
	Logger hclog.Logger
	// HandshakeTimeout bounds spawn plus initialize. Zero means 10s.
	HandshakeTimeout time.Duration
	// PromptTimeout bounds one prompt/contribution. Zero means 1s.
	PromptTimeout time.Duration
	// HookTimeout is used for subscriptions without timeout_ms. Zero means
	// 5s.
	HookTimeout time.Duration
	// StopGrace is how long a stopping server gets after shutdown and exit
	// before it is killed. Zero means 2s.
	StopGrace time.Duration
	// MinBackoff and MaxBackoff bound the delay before a crashed server is
	// respawned. Zero means 100ms and 10s.
	MinBackoff, MaxBackoff time.Duration
	// CrashLimit crashes within CrashWindow mark the extension degraded.
	// Zero means 5 crashes in 3 minutes.
	CrashLimit  int
	CrashWindow time.Duration
	// TraceQueue is the trace-event queue length; when full, events are
	// dropped and counted. Zero means 1024.
	TraceQueue int
	// MaxProtocolViolations is how many protocol violations (lines on the
	// server's stdout that are not JSON, invalid or oversized messages) a
	// server may send within ProtocolViolationWindow. At the limit the
	// server is stopped and the extension marked degraded until reloaded.
	// Zero means 100 ([jsonrpc.DefaultMaxViolations]); negative means no
	// limit.
	MaxProtocolViolations int
	// ProtocolViolationWindow is the sliding window of
	// MaxProtocolViolations. Zero means 10s
	// ([jsonrpc.DefaultViolationWindow]).
	ProtocolViolationWindow time.Duration
	// SessionID, WorkspaceRoot and Locale go into initialize.
	SessionID, WorkspaceRoot, Locale string
	// Asks answers ui/ask; nil answers every question cancelled.
	Asks *askGate
	// Status receives status/changed; nil drops it.
	Status StatusSink
	// Scrub, if set, rewrites text coming from the server before it leaves
	// the host side (tool output, updates, status, logs, command output,
	// hook reasons and mutated results, prompt text, ui/ask questions,
	// error messages) and the trace events sent to the server, e.g. to
	// redact secrets.
	Scrub func(string) string
}

// An Extension is the adapter that implements [Capability] for one
// extension, over a capability server it starts on demand.
//
// Spawning is lazy unless the grant contributes a prompt, hooks or traces
// (see [Extension.Eager]); a crash fails every pending request at once and
// the next call respawns the server with exponential backoff; repeated
// crashes mark it degraded.
type Extension struct {
	grant Grant
	opts  ExtensionOptions
	log   hclog.Logger
	stats counters

	mu        sync.Mutex
	proc      *process
	starting  chan struct{}
	state     State
	reason    string
	contrib   *contributions // from the last successful handshake
	crashes   []time.Time
	notBefore time.Time
	workspace string
	closed    bool

	promptMu     sync.Mutex
	promptTurn   int
	promptCached string
	lastGood     string
	hasLastGood  bool

	traceMu     sync.RWMutex // guards traceQ against a send after close
	traceQ      chan yep.TraceEventParams
	traceClosed bool
	traceDone   chan struct{}
}

type process struct {
	inst     core.Instance
	conn     *jsonrpc.Conn
	contrib  *contributions
	stopping bool // an intentional stop; not a crash
	exited   chan struct{}
}

// NewExtension returns the adapter for one approved extension. Nothing is
// started until [Extension.Start] or the first call.
func NewExtension(g Grant, opts ExtensionOptions) *Extension {
	if opts.HandshakeTimeout <= 0 {
		opts.HandshakeTimeout = 10 * time.Second
	}
	if opts.PromptTimeout <= 0 {
		opts.PromptTimeout = time.Second
	}
	if opts.HookTimeout <= 0 {
		opts.HookTimeout = 5 * time.Second
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = 2 * time.Second
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = 100 * time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 10 * time.Second
	}
	if opts.CrashLimit <= 0 {
		opts.CrashLimit = 5
	}
	if opts.CrashWindow <= 0 {
		opts.CrashWindow = 3 * time.Minute
	}
	if opts.TraceQueue <= 0 {
		opts.TraceQueue = 1024
	}
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if g.Server.Name == "" {
		g.Server.Name = g.Name
	}
	e := &Extension{
		grant:     g,
		opts:      opts,
		log:       log.Named(g.Name),
		state:     StateIdle,
		workspace: opts.WorkspaceRoot,
	}
	if g.Trace {
		e.traceQ = make(chan yep.TraceEventParams, opts.TraceQueue)
		e.traceDone = make(chan struct{})
		go e.forwardTraces()
	}
	return e
}

// Name implements [Capability]: "ext:<name>".
func (e *Extension) Name() string { return "ext:" + e.grant.Name }

// ExtName returns the bare extension name.
func (e *Extension) ExtName() string { return e.grant.Name }

// Grant returns the approved grant, with the current config and server
// environment.
func (e *Extension) Grant() Grant {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.grant
}

// Eager reports whether the extension must run before the first turn.
func (e *Extension) Eager() bool { return e.grant.eager() }

// State returns the lifecycle state and, for degraded or off, why.
func (e *Extension) State() (State, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.state, e.reason
}

// Refusals returns what the clamp refused at the last handshake.
func (e *Extension) Refusals() []Refusal {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.contrib == nil {
		return nil
	}
	return slices.Clone(e.contrib.refusals)
}

// Warnings returns what the last handshake flagged without refusing (a
// match-all hook).
func (e *Extension) Warnings() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.contrib == nil {
		return nil
	}
	var out []string
	for _, w := range e.contrib.warnings {
		out = append(out, fmt.Sprintf("extension %q: %s", e.grant.Name, w))
	}
	return out
}

// Stats returns the attribution counters.
func (e *Extension) Stats() Stats {
	s := Stats{Name: e.grant.Name}
	e.stats.snapshot(&s)
	e.mu.Lock()
	s.State, s.Reason = e.state, e.reason
	if e.contrib != nil {
		s.Refusals = slices.Clone(e.contrib.refusals)
	}
	e.mu.Unlock()
	return s
}

// PID returns the server's process id, or 0 when none runs.
func (e *Extension) PID() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.proc == nil {
		return 0
	}
	return e.proc.inst.PID()
}

// Start spawns the server and runs the handshake if it is not running.
func (e *Extension) Start(ctx context.Context) error {
	_, err := e.ensure(ctx)
	return e.scrubError(err)
}

// ErrExtensionClosed is returned by calls on a closed extension.
var ErrExtensionClosed = errors.New("extension closed")

// ensure returns a running, handshaken process, starting one if needed.
func (e *Extension) ensure(ctx context.Context) (*process, error) {
	for {
		e.mu.Lock()
		switch {
		case e.closed:
			e.mu.Unlock()
			return nil, fmt.Errorf("extension %q: %w", e.grant.Name, ErrExtensionClosed)
		case e.proc != nil:
			p := e.proc
			e.mu.Unlock()
			select {
			case <-p.conn.Done():
				// The server just died: wait until watch has recorded the
				// crash, then start over (respawn or report the state).
				select {
				case <-p.exited:
					continue
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			default:
			}
			return p, nil
		case e.state == StateOff || e.state == StateDegraded:
			err := fmt.Errorf("extension %q is %s: %s", e.grant.Name, e.state, e.reason)
			e.mu.Unlock()
			return nil, err
		case e.starting != nil:
			ch := e.starting
			e.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		wait := time.Until(e.notBefore)
		ch := make(chan struct{})
		e.starting = ch
		e.state = StateStarting
		e.mu.Unlock()

		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				e.mu.Lock()
				e.starting = nil
				e.state = StateCrashed
				e.mu.Unlock()
				close(ch)
				return nil, ctx.Err()
			}
		}
		p, err := e.spawn(ctx)
		e.mu.Lock()
		e.starting = nil
		if err == nil && e.closed {
			err = fmt.Errorf("extension %q: %w", e.grant.Name, ErrExtensionClosed)
			go e.stopProcess(p)
		}
		if err != nil {
			if e.state == StateStarting {
				if ctx.Err() != nil {
					e.state = StateIdle // the caller gave up; not the server's fault
				} else {
					e.state = StateDegraded
					e.reason = e.scrub(err.Error())
				}
			}
			e.mu.Unlock()
			close(ch)
			return nil, err
		}
		e.proc = p
		e.contrib = p.contrib
		e.state = StateReady
		e.reason = ""
		e.mu.Unlock()
		close(ch)
		return p, nil
	}
}

// errHandshakeTimeout is the cause of a handshake context whose own
// timeout expired, as opposed to the caller's context ending.
var errHandshakeTimeout = errors.New("handshake timeout")

// spawn starts a process and runs the handshake.
func (e *Extension) spawn(ctx context.Context) (*process, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, e.opts.HandshakeTimeout, errHandshakeTimeout)
	defer cancel()
	e.mu.Lock()
	spec := e.grant.Server
	spec.Env = maps.Clone(spec.Env)
	config := e.grant.Config
	verify := e.grant.Verify
	e.mu.Unlock()
	if verify != nil {
		if err := verify(); err != nil {
			e.log.Warn("not starting the server: it no longer matches its approval", "error", err)
			return nil, fmt.Errorf("extension %q not started: %w", e.grant.Name, err)
		}
	}
	inst, err := e.opts.Transport.Start(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("starting extension %q: %w", e.grant.Name, err)
	}
	p := &process{inst: inst, exited: make(chan struct{})}
	p.conn = jsonrpc.NewConn(inst.Stdout(), inst.Stdin(), jsonrpc.Options{
		Handler:  e.reverseHandler(p),
		Logger:   e.log,
		Closer:   inst.Stdin(),
		PeerGone: func(readErr error) error { return e.exitCause(inst, readErr) },

		MaxViolations:   e.opts.MaxProtocolViolations,
		ViolationWindow: e.opts.ProtocolViolationWindow,
	})

	e.mu.Lock()
	workspace := e.workspace
	e.mu.Unlock()
	hostCaps := yep.Capabilities{yep.CapTools, yep.CapStreaming, yep.CapHooks, yep.CapPrompt, yep.CapDynamicPrompt,
		yep.CapCommands, yep.CapCancel, yep.CapLog, yep.CapConfig, yep.CapWorkspace, yep.CapMCPServers}
	if e.grant.UIAsk {
		hostCaps = append(hostCaps, yep.CapUIAsk)
	}
	if e.grant.Status {
		hostCaps = append(hostCaps, yep.CapStatus)
	}
	if e.grant.Trace {
		hostCaps = append(hostCaps, yep.CapTrace)
	}
	params := yep.InitializeParams{
		ProtocolVersion: yep.ProtocolVersion,
		SessionID:       e.opts.SessionID,
		WorkspaceRoot:   workspace,
		Locale:          e.opts.Locale,
		Config:          config,
		Capabilities:    hostCaps,
	}
	var res yep.InitializeResult
	if err := p.conn.Call(ctx, yep.MethodInitialize, params, &res); err != nil {
		e.kill(p)
		switch {
		case errors.Is(err, yep.ErrCancelled) && context.Cause(ctx) == errHandshakeTimeout:
			return nil, fmt.Errorf("extension %q did not answer initialize within %s", e.grant.Name, e.opts.HandshakeTimeout)
		case errors.As(err, new(*jsonrpc.ProtocolError)):
			var pe *jsonrpc.ProtocolError
			errors.As(err, &pe)
			return nil, &scrubbedError{err: err, text: fmt.Sprintf("extension %q %s", e.grant.Name, e.protocolReason(pe))}
		case errors.As(err, new(*jsonrpc.InvalidResponseError)):
			var ire *jsonrpc.InvalidResponseError
			errors.As(err, &ire)
			return nil, e.invalidResponse(ire)
		case errors.As(err, new(*jsonrpc.ClosedError)):
			var ce *jsonrpc.ClosedError
			errors.As(err, &ce)
			return nil, fmt.Errorf("extension %q exited during initialize: %w", e.grant.Name, ce.Cause)
		}
		return nil, fmt.Errorf("extension %q: initialize: %w", e.grant.Name, err)
	}
	v, err := yep.Negotiate(yep.Current, res.ProtocolVersion)
	if err != nil {
		e.kill(p)
		e.mu.Lock()
		e.state = StateOff
		e.reason = fmt.Sprintf("server speaks %v; extension left off", err)
		e.mu.Unlock()
		e.log.Warn("protocol version mismatch; extension left off", "error", err)
		return nil, fmt.Errorf("extension %q: %w", e.grant.Name, err)
	}
	p.contrib = clamp(&e.grant, &res, v)
	for _, r := range p.contrib.refusals {
		e.log.Warn("handshake wider than the approved manifest", "refused", r.String())
	}
	for _, w := range p.contrib.warnings {
		e.log.Debug(w)
	}
	if err := p.conn.Notify(ctx, yep.MethodInitialized, yep.InitializedParams{}); err != nil {
		e.kill(p)
		return nil, fmt.Errorf("extension %q: initialized: %w", e.grant.Name, err)
	}
	go e.watch(p)
	return p, nil
}

// exitCause waits briefly for the process to end and returns its exit
// error, so pending calls fail naming the exit status and stderr.
func (e *Extension) exitCause(inst core.Instance, readErr error) error {
	select {
	case <-inst.Done():
	case <-time.After(2 * time.Second):
		return fmt.Errorf("extension %q closed its output (%v)", e.grant.Name, readErr)
	}
	if err := inst.Err(); err != nil {
		return err
	}
	return fmt.Errorf("extension %q exited (exit status 0)", e.grant.Name)
}

// watch waits for a process's connection to end and records a crash unless
// the stop was intentional.
func (e *Extension) watch(p *process) {
	<-p.conn.Done()
	_ = p.inst.Kill()
	p.conn.Wait()
	// exited closes after the crash is recorded (defers run last first),
	// so a caller that waits on it sees the new state.
	defer close(p.exited)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.proc == p {
		e.proc = nil
	}
	if p.stopping || e.closed {
		if e.state == StateReady {
			e.state = StateIdle
		}
		return
	}
	cause := p.conn.Err()
	var pe *jsonrpc.ProtocolError
	if errors.As(cause, &pe) {
		// Not a crash: the server is running but breaking the protocol, and
		// a respawn would do the same again.
		e.state = StateDegraded
		e.reason = e.protocolReason(pe)
		e.log.Error("extension stopped and degraded", "reason", e.reason)
		return
	}
	now := time.Now()
	e.crashes = append(e.crashes, now)
	e.crashes = slices.DeleteFunc(e.crashes, func(t time.Time) bool { return now.Sub(t) > e.opts.CrashWindow })
	e.stats.add(func(c *counters) { c.restarts++ })
	e.log.Error("extension crashed", "error", e.scrub(fmt.Sprint(cause)))
	if len(e.crashes) >= e.opts.CrashLimit {
		e.state = StateDegraded
		e.reason = e.scrub(fmt.Sprintf("crashed %d times within %s; not restarting (last: %v). Fix it, then /reload %s", len(e.crashes), e.opts.CrashWindow, cause, e.grant.Name))
		return
	}
	backoff := e.opts.MinBackoff << (len(e.crashes) - 1)
	if backoff > e.opts.MaxBackoff || backoff <= 0 {
		backoff = e.opts.MaxBackoff
	}
	e.notBefore = now.Add(backoff)
	e.state = StateCrashed
	e.reason = e.scrub(fmt.Sprint(cause))
	if e.grant.eager() {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), backoff+e.opts.HandshakeTimeout)
			defer cancel()
			_, _ = e.ensure(ctx)
		}()
	}
}

// protocolReason says why a server that broke the protocol too often was
// stopped, and what to do about it.
func (e *Extension) protocolReason(pe *jsonrpc.ProtocolError) string {
	fix := "fix the messages the server writes to stdout (see the YEP protocol reference)"
	if pe.NotJSON {
		fix = "fix the server's stdout (only protocol JSON may go there)"
	}
	return e.scrub(fmt.Sprintf("%v; %s, then /reload %s", pe, fix, e.grant.Name))
}

func (e *Extension) kill(p *process) {
	p.conn.Close()
	_ = p.inst.Kill()
	p.conn.Wait()
}

// stopProcess runs the graceful path: shutdown, exit, close stdin, then the
// transport's staged stop.
func (e *Extension) stopProcess(p *process) {
	e.mu.Lock()
	p.stopping = true
	e.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), e.opts.StopGrace)
	_ = p.conn.Call(ctx, yep.MethodShutdown, yep.ShutdownParams{}, nil)
	_ = p.conn.Notify(ctx, yep.MethodExit, yep.ExitParams{})
	cancel()
	_ = p.inst.Stdin().Close()
	_ = p.inst.Stop(e.opts.StopGrace)
	p.conn.Close()
	<-p.exited
}

// Stop stops the running server gracefully, if any. The next call starts
// it again.
func (e *Extension) Stop() {
	e.mu.Lock()
	p := e.proc
	e.proc = nil
	if p != nil {
		p.stopping = true
	}
	e.mu.Unlock()
	if p != nil {
		e.stopProcess(p)
	}
}

// Reload restarts the server process in place, within the same grant: the
// approved surface never changes. It also clears a degraded state.
func (e *Extension) Reload(ctx context.Context) error {
	e.Stop()
	e.mu.Lock()
	if e.state != StateOff {
		e.state = StateIdle
		e.reason = ""
	}
	e.crashes = nil
	e.notBefore = time.Time{}
	e.mu.Unlock()
	e.stats.add(func(c *counters) { c.restarts++ })
	_, err := e.ensure(ctx)
	return err
}

// Close stops the server and releases the extension. It is idempotent.
func (e *Extension) Close() {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	e.closed = true
	starting := e.starting
	e.mu.Unlock()
	if starting != nil {
		<-starting
	}
	e.Stop()
	if e.traceQ != nil {
		e.traceMu.Lock()
		e.traceClosed = true
		close(e.traceQ)
		e.traceMu.Unlock()
		<-e.traceDone
	}
}

func (e *Extension) scrub(s string) string {
	if e.opts.Scrub == nil || s == "" {
		return s
	}
	return e.opts.Scrub(s)
}

// scrubJSON scrubs a JSON value's text, keeping the original when the
// result would not be valid JSON.
func (e *Extension) scrubJSON(raw json.RawMessage) json.RawMessage {
	if e.opts.Scrub == nil || len(raw) == 0 {
		return raw
	}
	out := e.opts.Scrub(string(raw))
	if out == string(raw) || !json.Valid([]byte(out)) {
		return raw
	}
	return json.RawMessage(out)
}

func (e *Extension) current() *contributions {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.contrib
}

// Tools implements [Capability]: the clamped served tools after a
// handshake, the approved manifest tools before one.
func (e *Extension) Tools() []ToolDef {
	tools := e.grant.Tools
	if c := e.current(); c != nil {
		tools = c.tools
	}
	out := make([]ToolDef, len(tools))
	for i, t := range tools {
		out[i] = ToolDef(t)
	}
	return out
}

// CallTool implements [Capability].
func (e *Extension) CallTool(ctx context.Context, call ToolCall, onUpdate func(yep.ToolUpdateParams)) (res yep.ToolResult, err error) {
	start := time.Now()
	defer func() { e.stats.call(time.Since(start), err) }()
	if !slices.ContainsFunc(e.grant.Tools, func(t ToolGrant) bool { return t.Name == call.Name }) {
		return res, fmt.Errorf("extension %q has no approved tool %q", e.grant.Name, call.Name)
	}
	p, err := e.ensure(ctx)
	if err != nil {
		return res, e.scrubError(err)
	}
	if !slices.ContainsFunc(p.contrib.tools, func(t ToolGrant) bool { return t.Name == call.Name }) {
		return res, fmt.Errorf("extension %q does not serve tool %q (its server declared fewer tools than its manifest)", e.grant.Name, call.Name)
	}
	co := jsonrpc.CallOptions{}
	if onUpdate != nil {
		co.OnNotify = func(method string, params json.RawMessage) {
			if method != yep.MethodToolUpdate {
				return
			}
			var u yep.ToolUpdateParams
			if json.Unmarshal(params, &u) != nil {
				return
			}
			u.Output = e.scrub(u.Output)
			onUpdate(u)
		}
	}
	args := call.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	err = p.conn.CallWith(ctx, yep.MethodToolCall, yep.ToolCallParams{
		ToolCallID: call.ID, Name: call.Name, Args: args, SessionID: e.opts.SessionID,
	}, &res, co)
	if err != nil {
		return res, e.callError(call.Name, err)
	}
	res.Output = e.scrub(res.Output)
	res.Data = e.scrubJSON(res.Data)
	return res, nil
}

// callError names the extension in errors from the connection.
func (e *Extension) callError(what string, err error) error {
	var ce *jsonrpc.ClosedError
	var cancelled *jsonrpc.CancelledError
	var invalid *jsonrpc.InvalidResponseError
	if errors.As(err, &invalid) {
		return e.invalidResponse(invalid)
	}
	var pe *jsonrpc.ProtocolError
	if errors.As(err, &pe) {
		return &scrubbedError{err: err, text: fmt.Sprintf("%s: extension %q %s", what, e.grant.Name, e.protocolReason(pe))}
	}
	if errors.As(err, &ce) || errors.As(err, &cancelled) {
		return e.scrubError(fmt.Errorf("%s: %w", what, err))
	}
	var we *yep.Error
	if errors.As(err, &we) {
		return &yep.Error{Code: we.Code, Message: fmt.Sprintf("extension %q: %s: %s", e.grant.Name, what, e.scrub(we.Message)), Retryable: we.Retryable, Data: we.Data}
	}
	return e.scrubError(fmt.Errorf("extension %q: %s: %w", e.grant.Name, what, err))
}

// invalidResponse names the extension in a call failed by a response the
// connection rejected, keeping the *jsonrpc.InvalidResponseError matchable.
func (e *Extension) invalidResponse(ire *jsonrpc.InvalidResponseError) error {
	return &scrubbedError{err: ire, text: e.scrub(fmt.Sprintf("invalid response from extension %q: %s", e.grant.Name, ire.Reason))}
}

// scrubError makes err's text pass through Scrub (an exit error carries the
// server's stderr tail), keeping it matchable with errors.Is and errors.As.
func (e *Extension) scrubError(err error) error {
	if e.opts.Scrub == nil || err == nil {
		return err
	}
	return &scrubbedError{err: err, text: e.opts.Scrub(err.Error())}
}

type scrubbedError struct {
	err  error
	text string
}

func (s *scrubbedError) Error() string { return s.text }
func (s *scrubbedError) Unwrap() error { return s.err }

// Prompt implements [Capability]. A dynamic prompt is asked at most once
// per turn, with a timeout, falling back to the last good contribution and
// then to the static text.
func (e *Extension) Prompt(ctx context.Context, turn int) (string, error) {
	c := e.current()
	if c == nil || !c.hasPrompt {
		return "", nil
	}
	if !c.dynamic {
		return c.prompt, nil
	}
	e.promptMu.Lock()
	defer e.promptMu.Unlock()
	if turn == e.promptTurn && turn != 0 {
		return e.promptCached, nil
	}
	text, err := e.dynamicPrompt(ctx, turn)
	if err != nil {
		e.log.Warn("dynamic prompt failed; using the fallback", "error", err)
		text = c.prompt
		if e.hasLastGood {
			text = e.lastGood
		}
	} else {
		e.lastGood, e.hasLastGood = text, true
	}
	e.promptTurn, e.promptCached = turn, text
	return text, nil
}

func (e *Extension) dynamicPrompt(ctx context.Context, turn int) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, e.opts.PromptTimeout)
	defer cancel()
	p, err := e.ensure(ctx)
	if err != nil {
		return "", err
	}
	var res yep.PromptContributionResult
	if err := p.conn.Call(ctx, yep.MethodPromptContribution, yep.PromptContributionParams{SessionID: e.opts.SessionID, Turn: turn}, &res); err != nil {
		return "", err
	}
	if max := e.grant.Prompt.maxBytes(); len(res.Text) > max {
		return "", fmt.Errorf("contribution of %d bytes exceeds the approved %d", len(res.Text), max)
	}
	return e.scrub(res.Text), nil
}

// Hooks implements [Capability].
func (e *Extension) Hooks() []HookGrant {
	if c := e.current(); c != nil {
		return slices.Clone(c.hooks)
	}
	return nil
}

// FireHook implements [Capability]. The call is bounded by the
// subscription's timeout_ms.
func (e *Extension) FireHook(ctx context.Context, sub HookGrant, params yep.HookFireParams) (res yep.HookFireResult, err error) {
	timeout := e.opts.HookTimeout
	if sub.TimeoutMS > 0 {
		timeout = time.Duration(sub.TimeoutMS) * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer func() {
		d := res.Decision
		if err != nil {
			d = "error"
		} else if d == "" {
			d = yep.DecisionAllow
		}
		e.stats.hook(d)
	}()
	p, err := e.ensure(ctx)
	if err != nil {
		return res, e.scrubError(err)
	}
	params.Matcher = sub.Matcher
	if err := p.conn.Call(ctx, yep.MethodHookFire, params, &res); err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return res, fmt.Errorf("hook %s of extension %q timed out after %s", sub.Event, e.grant.Name, timeout)
		}
		return res, e.callError("hook/fire", err)
	}
	switch res.Decision {
	case "":
		res.Decision = yep.DecisionAllow
	case yep.DecisionAllow, yep.DecisionBlock, yep.DecisionMutate:
	default:
		// An unknown decision is not consent: it is a hook error, so the
		// subscription's on_error decides (block fails closed).
		return yep.HookFireResult{}, fmt.Errorf("hook %s of extension %q answered the unknown decision %q (want allow, block or mutate)", sub.Event, e.grant.Name, res.Decision)
	}
	res.Reason = e.scrub(res.Reason)
	res.Args = e.scrubJSON(res.Args)
	if res.Result != nil {
		r := *res.Result
		r.Output = e.scrub(r.Output)
		r.Data = e.scrubJSON(r.Data)
		res.Result = &r
	}
	return res, nil
}

// Commands implements [Capability].
func (e *Extension) Commands() []CommandGrant {
	if c := e.current(); c != nil {
		return slices.Clone(c.commands)
	}
	return slices.Clone(e.grant.Commands)
}

// ExecuteCommand implements [Capability].
func (e *Extension) ExecuteCommand(ctx context.Context, name, args string) (yep.CommandExecuteResult, error) {
	var res yep.CommandExecuteResult
	if !slices.ContainsFunc(e.Commands(), func(c CommandGrant) bool { return c.Name == name }) {
		return res, fmt.Errorf("extension %q has no command %q", e.grant.Name, name)
	}
	p, err := e.ensure(ctx)
	if err != nil {
		return res, e.scrubError(err)
	}
	if err := p.conn.Call(ctx, yep.MethodCommandExecute, yep.CommandExecuteParams{Name: name, Arguments: args}, &res); err != nil {
		return res, e.callError("command/execute", err)
	}
	res.Message = e.scrub(res.Message)
	return res, nil
}

// MCPServers implements [Capability].
func (e *Extension) MCPServers() []yep.MCPServerDecl {
	if c := e.current(); c != nil {
		return slices.Clone(c.mcp)
	}
	return nil
}

// Skills implements [Capability].
func (e *Extension) Skills() []string { return slices.Clone(e.grant.Skills) }

// ConfigSchema implements [Capability].
func (e *Extension) ConfigSchema() json.RawMessage { return e.grant.ConfigSchema }

// SetWorkspace repoints the workspace root: later handshakes carry it, and
// a running server gets workspace/changed.
func (e *Extension) SetWorkspace(root string) {
	e.mu.Lock()
	e.workspace = root
	p := e.proc
	e.mu.Unlock()
	if p != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = p.conn.Notify(ctx, yep.MethodWorkspaceChanged, yep.WorkspaceChangedParams{WorkspaceRoot: root})
	}
}

// UpdateConfig pushes a new validated config. A running server answering
// restart-required is restarted within the same grant. It reports whether
// a restart happened.
func (e *Extension) UpdateConfig(ctx context.Context, cfg json.RawMessage) (restarted bool, err error) {
	e.mu.Lock()
	e.grant.Config = cfg
	p := e.proc
	e.mu.Unlock()
	if p == nil {
		return false, nil
	}
	if !p.contrib.config {
		e.Stop()
		return true, e.Start(ctx)
	}
	var res yep.ConfigChangedResult
	if err := p.conn.Call(ctx, yep.MethodConfigChanged, yep.ConfigChangedParams{Config: cfg}, &res); err != nil {
		return false, e.callError("config/changed", err)
	}
	if res.Status == yep.ConfigRestartRequired {
		e.log.Info("config change requires a restart; restarting")
		e.Stop()
		return true, e.Start(ctx)
	}
	return false, nil
}

// Reconfigure replaces the config and the server environment together,
// for a change that reaches the environment (a secret, or a field with
// `env`). When the environment is unchanged it is [Extension.UpdateConfig].
// Otherwise a running server is restarted so it starts with the new
// environment (the approved surface never changes); an idle one gets it at
// its next start. It reports whether a restart happened.
func (e *Extension) Reconfigure(ctx context.Context, cfg json.RawMessage, env map[string]string) (restarted bool, err error) {
	e.mu.Lock()
	if maps.Equal(env, e.grant.Server.Env) {
		e.mu.Unlock()
		return e.UpdateConfig(ctx, cfg)
	}
	e.grant.Config = cfg
	e.grant.Server.Env = maps.Clone(env)
	p := e.proc
	e.mu.Unlock()
	if p == nil {
		return false, nil
	}
	e.log.Info("server environment changed; restarting")
	e.Stop()
	return true, e.Start(ctx)
}

// Trace queues a trace event for a trace-declaring extension. It never
// blocks: when the queue is full the event is dropped and counted.
func (e *Extension) Trace(ev yep.TraceEventParams) {
	if e.traceQ == nil {
		return
	}
	c := e.current()
	if c == nil || !c.trace {
		return
	}
	ev.Data = e.scrubJSON(ev.Data)
	e.traceMu.RLock()
	defer e.traceMu.RUnlock()
	if e.traceClosed {
		return
	}
	select {
	case e.traceQ <- ev:
	default:
		e.stats.add(func(c *counters) { c.traceDropped++ })
	}
}

func (e *Extension) forwardTraces() {
	defer close(e.traceDone)
	for ev := range e.traceQ {
		e.mu.Lock()
		p := e.proc
		e.mu.Unlock()
		if p == nil || !p.contrib.trace {
			e.stats.add(func(c *counters) { c.traceDropped++ })
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if err := p.conn.Notify(ctx, yep.MethodTraceEvent, ev); err != nil {
			e.stats.add(func(c *counters) { c.traceDropped++ })
		}
		cancel()
	}
}

// reverseHandler serves the server-to-host methods, gated by the clamped
// opt-ins of process p.
func (e *Extension) reverseHandler(p *process) jsonrpc.Handler {
	return jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		c := p.contrib
		switch req.Method {
		case yep.MethodLog:
			var l yep.LogParams
			if json.Unmarshal(req.Params, &l) == nil {
				e.logFromServer(l)
			}
			return nil, nil
		case yep.MethodStatusChanged:
			if c == nil || !c.status {
				e.log.Warn("dropped status/changed: the extension did not declare status")
				return nil, nil
			}
			var s yep.StatusChangedParams
			if json.Unmarshal(req.Params, &s) != nil {
				return nil, nil
			}
			text := e.scrub(s.Text)
			e.stats.add(func(c *counters) { c.status = text })
			if e.opts.Status != nil {
				e.opts.Status.SetStatus(e.grant.Name, text)
			}
			return nil, nil
		case yep.MethodUIAsk:
			if c == nil || !c.uiAsk {
				return nil, &yep.Error{Code: yep.CodeNotPermitted, Message: fmt.Sprintf("extension %q did not declare ui_ask in its manifest", e.grant.Name)}
			}
			var q yep.UIAskParams
			if err := json.Unmarshal(req.Params, &q); err != nil {
				return nil, yep.Errorf(yep.CodeInvalidParams, "ui/ask: %v", err)
			}
			q.Prompt, q.Placeholder = e.scrub(q.Prompt), e.scrub(q.Placeholder)
			return e.opts.Asks.ask(ctx, e.grant.Name, q)
		}
		if req.IsNotification() {
			return nil, nil
		}
		return nil, yep.Errorf(yep.CodeMethodNotFound, "method %q not found", req.Method)
	})
}

func (e *Extension) logFromServer(l yep.LogParams) {
	args := []any{}
	if len(l.Fields) > 0 {
		var fields map[string]any
		if json.Unmarshal(l.Fields, &fields) == nil {
			for _, k := range slices.Sorted(maps.Keys(fields)) {
				v := fields[k]
				if s, ok := v.(string); ok {
					v = e.scrub(s)
				}
				args = append(args, k, v)
			}
		}
	}
	msg := e.scrub(l.Message)
	switch l.Level {
	case yep.LogTrace:
		e.log.Trace(msg, args...)
	case yep.LogDebug:
		e.log.Debug(msg, args...)
	case yep.LogWarn:
		e.log.Warn(msg, args...)
	case yep.LogError:
		e.log.Error(msg, args...)
	default:
		e.log.Info(msg, args...)
	}
}
