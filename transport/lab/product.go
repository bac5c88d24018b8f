package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"yolop.dev/core/host"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
	"yolop.dev/harness"
	"yolop.dev/harness/secrets"
)

// The product sides: the host as a front-end runs it, beside the bare
// connection it runs over and beside two peers a tool host could be built
// on instead.
const (
	// Session is harness.Session.CallTool on the echo extension over
	// stdio, with everything a call passes through in the product: the
	// argument check against the tool's input_schema, the extension's
	// pre_tool_use hook (a hook/fire round trip before every call), trace
	// forwarding to a trace-declaring extension, and the secret scrubber
	// with a secret registered.
	Session = "session"
	// Bare is the same echo server as a plain child process (os/exec
	// pipes, no transport) with a core/jsonrpc client: the bare
	// connection. Session − bare is the host's overhead per call.
	Bare = "bare"
	// SessionMinimal is harness.Session.CallTool on the same echo server
	// with none of the session side's extras: a manifest without the hook,
	// no trace consumer, no secret registered. It splits the host's
	// overhead into the call path itself (minimal − bare) and what the
	// hook, the trace and the scrubbing add (session − minimal).
	SessionMinimal = "session-minimal"
)

// Names of the lab extensions and the secret the session side registers.
const (
	sessionEcho  = "lab-echo"
	sessionTrace = "lab-trace"
	// labSecret is the secret the session side registers with its
	// scrubber, as a stored secret of lab-echo's token field.
	labSecret = "lab-secret-6b1f2d9c"
	// traceOutEnv names the file the trace consumer writes what it got to
	// when its input ends.
	traceOutEnv = "YOLOP_LAB_TRACE_OUT"
)

// ServeSessionTrace is the session side's trace consumer: an SDK server
// that declares trace and, when its input ends, writes the number of
// events it got and the first of them to the file $YOLOP_LAB_TRACE_OUT.
const ServeSessionTrace = "session-trace"

// echoManifest is the echo example's plugin.json under another name and
// with a secret token field; its server is the lab binary (the command is
// replaced in the grant).
const echoManifest = `{
  "name": %q,
  "version": "0.1.0",
  "description": "The transport lab's echo extension.",
  "yolop": {
    "protocol_version": "1.0",
    "capabilityServer": { "command": "lab-server", "args": [] },
    "tools": [
      {
        "name": "echo",
        "description": "Return the given text unchanged.",
        "input_schema": {
          "type": "object",
          "properties": { "text": { "type": "string", "description": "Text to return." } },
          "required": ["text"],
          "additionalProperties": false
        },
        "never_defer": true,
        "risk": "low"
      },
      {
        "name": "count",
        "description": "Count from 1 to n, streaming each number as progress.",
        "input_schema": { "type": "object", "properties": { "n": { "type": "integer" }, "delay_ms": { "type": "integer" } } },
        "never_defer": true,
        "streaming": true,
        "risk": "low"
      },
      {
        "name": "reverse",
        "description": "Reverse the given text.",
        "input_schema": { "type": "object", "properties": { "text": { "type": "string" } }, "required": ["text"] },
        "risk": "low"
      }
    ],
    "hooks": [
      { "event": "pre_tool_use", "matcher": "*", "timeout_ms": 500, "on_error": "warn" }
    ],
    "prompt": "The echo extension is installed.",
    "commands": [
      { "name": "greet", "description": "Greet someone: /echo:greet <name>" }
    ]
  }
}`

// plainManifest is the echo extension's tools alone.
const plainManifest = `{
  "name": %q,
  "version": "0.1.0",
  "description": "The transport lab's echo extension, tools only.",
  "yolop": {
    "protocol_version": "1.0",
    "capabilityServer": { "command": "lab-server", "args": [] },
    "tools": [
      {
        "name": "echo",
        "description": "Return the given text unchanged.",
        "input_schema": {
          "type": "object",
          "properties": { "text": { "type": "string", "description": "Text to return." } },
          "required": ["text"],
          "additionalProperties": false
        },
        "never_defer": true,
        "risk": "low"
      }
    ]
  }
}`

const traceManifest = `{
  "name": %q,
  "version": "0.1.0",
  "description": "The transport lab's trace consumer.",
  "yolop": {
    "protocol_version": "1.0",
    "capabilityServer": { "command": "lab-server", "args": [] },
    "trace": true
  }
}`

// sessionKit is what the session side needs across its starts: the
// packages in place, their grants with the lab binary as server, and the
// config directory.
type sessionKit struct {
	dir       string // removed by cleanup
	configDir string
	traceOut  string
	echo      host.Grant
	trace     host.Grant
	plain     host.Grant // SessionMinimal's
	// ten are ten eager echo extensions for the ten-eager start.
	ten []host.Grant
}

func (o Options) newSessionKit() (*sessionKit, func(), error) {
	dir, err := os.MkdirTemp("", "yolop-lab-session-")
	if err != nil {
		return nil, func() {}, fmt.Errorf("session side: %w", err)
	}
	cleanup := func() { os.RemoveAll(dir) }
	k := &sessionKit{dir: dir, configDir: filepath.Join(dir, "config"), traceOut: filepath.Join(dir, "trace.json")}
	load := func(name, manifest, mode string, env map[string]string) (host.Grant, error) {
		pkg := filepath.Join(dir, name)
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			return host.Grant{}, err
		}
		if err := os.WriteFile(filepath.Join(pkg, "plugin.json"), fmt.Appendf(nil, manifest, name), 0o644); err != nil {
			return host.Grant{}, err
		}
		_, g, _, err := harness.InPlace(pkg)
		if err != nil {
			return host.Grant{}, fmt.Errorf("loading the lab package %s: %w", name, err)
		}
		// A manifest may not name a command outside its package: the
		// server is this binary, as for the lab's other sides.
		g.Server.Command, g.Server.Args = o.Exe, o.ServeArgs(mode)
		if g.Server.Env == nil {
			g.Server.Env = map[string]string{}
		}
		g.Server.Env["GORACE"] = "atexit_sleep_ms=0"
		for k, v := range env {
			g.Server.Env[k] = v
		}
		return g, nil
	}
	if k.echo, err = load(sessionEcho, echoManifest, ServeStdio, nil); err != nil {
		return nil, cleanup, fmt.Errorf("session side: %w", err)
	}
	if k.trace, err = load(sessionTrace, traceManifest, ServeSessionTrace, map[string]string{traceOutEnv: k.traceOut}); err != nil {
		return nil, cleanup, fmt.Errorf("session side: %w", err)
	}
	if k.plain, err = load("lab-echo-plain", plainManifest, ServeStdio, nil); err != nil {
		return nil, cleanup, fmt.Errorf("session side: %w", err)
	}
	n := o.startN
	if n <= 0 {
		n = 10
	}
	for i := range n {
		g, err := load(fmt.Sprintf("lab-echo-%d", i), echoManifest, ServeStdio, nil)
		if err != nil {
			return nil, cleanup, fmt.Errorf("session side: %w", err)
		}
		k.ten = append(k.ten, g)
	}
	return k, cleanup, nil
}

// open opens a harness on the kit's config directory, with the lab's
// secret in its scrubber when secret is set.
func (k *sessionKit) open(ctx context.Context, secret bool) (*harness.Harness, error) {
	h, err := harness.Open(ctx, harness.Options{ConfigDir: k.configDir})
	if err != nil {
		return nil, fmt.Errorf("opening the harness: %w", err)
	}
	if secret {
		h.Scrubber().Add(sessionEcho, "token", secrets.New(labSecret))
	}
	return h, nil
}

// sessionClient calls the echo tool through harness.Session.CallTool.
type sessionClient struct {
	s *harness.Session
}

// startSession starts the session side, or with minimal SessionMinimal.
func startSession(ctx context.Context, k *sessionKit, minimal bool) (*sessionClient, error) {
	h, err := k.open(ctx, !minimal)
	if err != nil {
		return nil, err
	}
	grants := []host.Grant{k.echo, k.trace}
	if minimal {
		grants = []host.Grant{k.plain}
	}
	s, _ := h.NewSession(ctx, harness.SessionOptions{Extra: grants, NoEnabled: true, WorkspaceRoot: k.dir, SessionID: "lab"})
	if errs, failed := s.StartInPlace(ctx, grants); failed != 0 {
		s.Close()
		return nil, fmt.Errorf("starting the session's extensions: %v", errs)
	}
	c := &sessionClient{s: s}
	if err := c.call(ctx, newPayload(5), 1); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

func (c *sessionClient) call(ctx context.Context, p *payload, _ int) error {
	res, err := c.s.CallTool(ctx, "echo", "t", p.args, nil)
	if err != nil {
		return err
	}
	if res.IsError || len(res.Output) != len(p.text) {
		return fmt.Errorf("echo answered %d bytes (error %v), want %d", len(res.Output), res.IsError, len(p.text))
	}
	return nil
}

func (c *sessionClient) close() error {
	c.s.Close()
	return nil
}

// --- the bare connection --------------------------------------------------

// bareClient is a core/jsonrpc client over the pipes of a plain child
// process: no transport, no host.
type bareClient struct {
	cmd     *exec.Cmd
	release func()
	in      io.WriteCloser
	conn    *jsonrpc.Conn
}

func startBare(ctx context.Context, exe string, args []string) (*bareClient, error) {
	cmd, in, out, release, err := startPiped(exe, args, []string{"GORACE=atexit_sleep_ms=0"}, "the bare echo server")
	if err != nil {
		return nil, err
	}
	c := &bareClient{cmd: cmd, release: release, in: in, conn: jsonrpc.NewConn(out, in, jsonrpc.Options{Closer: in})}
	err = c.conn.Call(ctx, yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: yep.ProtocolVersion, Capabilities: yep.Capabilities{yep.CapCancel}}, nil)
	if err != nil {
		c.close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return c, nil
}

func (c *bareClient) call(ctx context.Context, p *payload, _ int) error {
	return echoCall(ctx, c.conn, p)
}

func (c *bareClient) close() error {
	defer c.release()
	c.conn.Close()
	c.conn.Wait()
	return waitOrKill(c.cmd)
}

// echoCall makes one echo tool/call over conn and checks the answer.
func echoCall(ctx context.Context, conn *jsonrpc.Conn, p *payload) error {
	var res yep.ToolResult
	if err := conn.Call(ctx, yep.MethodToolCall, yep.ToolCallParams{ToolCallID: "t", Name: "echo", Args: p.args}, &res); err != nil {
		return err
	}
	if len(res.Output) != len(p.text) {
		return fmt.Errorf("echo answered %d bytes, want %d", len(res.Output), len(p.text))
	}
	return nil
}

// waitOrKill waits for cmd, whose input is closed, killing it after 5s.
func waitOrKill(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		cmd.Process.Kill()
		return <-done
	}
}

// --- the trace consumer ---------------------------------------------------

// TraceSeen is what the session side's trace consumer writes when its
// input ends.
type TraceSeen struct {
	Events int            `json:"events"`
	Types  map[string]int `json:"types"`
	// First are the first events' data, verbatim as they arrived.
	First []json.RawMessage `json:"first"`
}

func serveSessionTrace(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	var mu sync.Mutex
	seen := TraceSeen{Types: map[string]int{}}
	s := sdk.NewServer(sdk.Info{Name: sessionTrace, Version: "0.1.0"}, sdk.Options{})
	s.OnTrace(func(ev yep.TraceEventParams) {
		mu.Lock()
		defer mu.Unlock()
		seen.Events++
		seen.Types[ev.Type]++
		if len(seen.First) < 32 {
			seen.First = append(seen.First, append(json.RawMessage(nil), ev.Data...))
		}
	})
	err := s.ServeConn(ctx, stdin, stdout)
	if out := os.Getenv(traceOutEnv); out != "" {
		mu.Lock()
		b, merr := json.Marshal(seen)
		mu.Unlock()
		if merr == nil {
			merr = os.WriteFile(out, b, 0o600)
		}
		if err == nil && merr != nil {
			err = fmt.Errorf("writing what the trace consumer got: %w", merr)
		}
	}
	return err
}

// --- session start: ten eager extensions against ten bare children ---------

// A StartTen is session start with ten eager extensions against ten bare
// children started in parallel (exec and one initialize each), alternating.
type StartTen struct {
	Samples   int     `json:"samples"`
	SessionMS float64 `json:"session_p50_ms"`
	BareMS    float64 `json:"bare_p50_ms"`
	Ratio     float64 `json:"ratio"` // the median of the per-sample ratios
}

// startTenSession opens a harness, assembles a session with the ten eager
// echo extensions and starts it: what a front-end does before its first
// turn.
func startTenSession(ctx context.Context, k *sessionKit) (func(), error) {
	h, err := k.open(ctx, true)
	if err != nil {
		return nil, err
	}
	s, _ := h.NewSession(ctx, harness.SessionOptions{Extra: k.ten, NoEnabled: true, WorkspaceRoot: k.dir, SessionID: "lab"})
	if err := s.Start(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("starting ten eager extensions: %w", err)
	}
	for _, g := range k.ten {
		e, ok := s.Extension(g.Name)
		if st, _ := e.State(); !ok || st != host.StateReady {
			s.Close()
			return nil, fmt.Errorf("%s is %s after Start, want ready", g.Name, st)
		}
	}
	return s.Close, nil
}

// startTenBare starts n (ten) bare children in parallel, each answering
// initialize.
func startTenBare(ctx context.Context, exe string, args []string, n int) (func(), error) {
	cs := make([]*bareClient, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range cs {
		wg.Go(func() { cs[i], errs[i] = startBare(ctx, exe, args) })
	}
	wg.Wait()
	stop := func() {
		var wg sync.WaitGroup
		for _, c := range cs {
			if c != nil {
				wg.Go(func() { c.close() })
			}
		}
		wg.Wait()
	}
	for _, err := range errs {
		if err != nil {
			stop()
			return nil, fmt.Errorf("ten bare children: %w", err)
		}
	}
	return stop, nil
}

func measureStartTen(ctx context.Context, o Options, k *sessionKit, samples int) (*StartTen, error) {
	starts := []func(context.Context) (func(), error){
		func(ctx context.Context) (func(), error) { return startTenSession(ctx, k) },
		func(ctx context.Context) (func(), error) {
			return startTenBare(ctx, o.Exe, o.ServeArgs(ServeStdio), len(k.ten))
		},
	}
	for _, start := range starts { // one unmeasured start each, unless one sample is all that is asked
		if samples < 2 {
			break
		}
		stop, err := start(ctx)
		if err != nil {
			return nil, err
		}
		stop()
	}
	var sess, bare []time.Duration
	var ratios []float64
	for r := range samples {
		var d [2]time.Duration
		for j := range starts {
			i := (j + r) % 2
			t0 := time.Now()
			stop, err := starts[i](ctx)
			d[i] = time.Since(t0)
			if err != nil {
				return nil, err
			}
			stop()
		}
		sess, bare = append(sess, d[0]), append(bare, d[1])
		ratios = append(ratios, ratio(d[0], d[1]))
	}
	return &StartTen{Samples: samples, SessionMS: ms(percentile(sess, 50)), BareMS: ms(percentile(bare, 50)), Ratio: median(ratios)}, nil
}

// checkSession makes the calls that show every part of the session side
// works: an echo, a call the extension's pre_tool_use hook blocks, a
// call with arguments that break the tool's input_schema, and a call
// carrying the registered secret; then it closes the session and returns
// what the trace consumer got.
func checkSession(ctx context.Context, o Options) (facts SessionFacts, err error) {
	o = o.withDefaults()
	facts.Secret = labSecret
	k, cleanup, err := o.newSessionKit()
	defer cleanup()
	if err != nil {
		return facts, err
	}
	c, err := startSession(ctx, k, false)
	if err != nil {
		return facts, err
	}
	res, err := c.s.CallTool(ctx, "echo", "c1", json.RawMessage(`{"text":"hello"}`), nil)
	if err != nil {
		c.close()
		return facts, err
	}
	facts.Echoed = res.Output
	_, facts.Blocked = c.s.CallTool(ctx, "echo", "c2", json.RawMessage(`{"text":"forbidden"}`), nil)
	_, facts.BadArgs = c.s.CallTool(ctx, "echo", "c3", json.RawMessage(`{"text":42}`), nil)
	res, err = c.s.CallTool(ctx, "echo", "c4", json.RawMessage(`{"text":"the secret is `+labSecret+`"}`), nil)
	if err != nil {
		c.close()
		return facts, err
	}
	facts.SecretOutput = res.Output
	c.close()
	b, err := os.ReadFile(k.traceOut)
	if err != nil {
		return facts, fmt.Errorf("what the trace consumer got: %w", err)
	}
	if err := json.Unmarshal(b, &facts.Trace); err != nil {
		return facts, fmt.Errorf("what the trace consumer got: %w", err)
	}
	return facts, nil
}

// SessionFacts are what checkSession saw.
type SessionFacts struct {
	Echoed       string
	Blocked      error // the hook's block of "forbidden"
	BadArgs      error // the argument check's refusal
	SecretOutput string
	Trace        TraceSeen
	// Secret is the secret the session registered.
	Secret string
}
