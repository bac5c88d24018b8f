package host

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core"
	"yolop.dev/core/internal/ratelimit"
	"yolop.dev/core/jsonrpc"
)

// A State is the lifecycle state of an [Extension].
type State string

// The states of an extension. Calls are served in StateReady and start the
// server from StateIdle and StateCrashed; they are refused in StateDegraded
// and StateOff.
const (
	// StateIdle means no server runs: it was not started yet (a lazy
	// extension) or was stopped. The next call starts it.
	StateIdle State = "idle"
	// StateStarting means a server is being spawned and handshaken.
	StateStarting State = "starting"
	// StateReady means the server is running and handshaken.
	StateReady State = "ready"
	// StateCrashed means the server died; the next call respawns it after
	// a backoff.
	StateCrashed State = "crashed"
	// StateDegraded means the server failed to start, crashed too often or
	// broke the protocol; it is not respawned until reloaded.
	StateDegraded State = "degraded"
	// StateOff means the extension cannot run at all (its server speaks
	// another protocol major); a reload does not change that.
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
	// HandshakeTimeout bounds the initialize exchange, counted from the
	// moment the transport has started the server (so a WASM compile,
	// host work, is not counted). Zero means 10s.
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
	// CancelGrace is how long a cooperatively scheduled server (a WASM
	// guest, see [core.Cooperative]) has to answer after one of its calls
	// was cancelled; one that does not is stuck (a handler in a loop keeps
	// it from reading) and is restarted, as after a crash. Zero means 5s.
	CancelGrace time.Duration
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

	// emit reports the server's lifecycle (extension.started, .degraded,
	// .restarted); the session sets it to [Session.Emit].
	emit func(Event)
}

// An Extension is the adapter that implements [Capability] for one
// extension, over a capability server it starts on demand.
//
// Spawning is lazy unless the grant contributes a prompt, hooks or traces
// (see [Extension.Eager]); a crash fails every pending request at once and
// the next call respawns the server with exponential backoff; repeated
// crashes mark it degraded.
//
// Its methods are safe for concurrent use. The code is split by concern:
// lifecycle.go starts, watches and stops the server; calls.go proxies
// tools, hooks, the prompt and commands; reverse.go serves the server's
// requests to the host; config.go and trace.go push config, workspace and
// trace events; scrub.go keeps secrets out of what leaves the host.
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
	cause     error          // why the state is degraded, off or crashed
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

	probes sync.WaitGroup // probeAfterCancel goroutines

	traces *traceQueue // nil unless the extension declares trace
}

// A process is one running server and its connection.
type process struct {
	inst     core.Instance
	conn     *jsonrpc.Conn
	contrib  *contributions
	stopping bool // an intentional stop; not a crash
	exited   chan struct{}
	// probing, set under Extension.mu, is closed when the probe after a
	// cancel (see probeAfterCancel) has its answer: calls wait for it
	// rather than queue behind a handler that may be stuck.
	probing chan struct{}

	logMu sync.Mutex
	logs  ratelimit.Bucket // rate-limits the server's log messages
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
	if opts.CancelGrace <= 0 {
		opts.CancelGrace = 5 * time.Second
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
		e.traces = newTraceQueue(opts.TraceQueue)
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

func (e *Extension) current() *contributions {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.contrib
}
