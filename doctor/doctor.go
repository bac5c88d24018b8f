package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core"
	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/packaging"
	"yolop.dev/packaging/hostgrant"
	"yolop.dev/transport/stdio"
)

// Options configure [Run] and [RunGrant]. The zero value is ready to
// use: every field says what its zero value means.
type Options struct {
	// Transport starts the server. Nil means the runtime's own,
	// transport/stdio (with Logger), so the server runs exactly as in a
	// session: the same command resolution (the package's bin/ first),
	// scrubbed environment and process group.
	Transport core.Transport
	// Logger receives the host runtime's logs and, through the default
	// transport, the server's stderr. Nil discards them (the report says
	// what matters, including the last stderr lines of a server that
	// failed to start).
	Logger hclog.Logger
	// Config is the extension's non-secret capability config, sent in
	// initialize.config as a session sends it; it must be a JSON object and
	// replaces the grant's config. Doctor does not validate it against the
	// manifest's config_schema. Nil keeps the grant's config: none for
	// [Run].
	Config json.RawMessage
	// Env is extra environment for the server, added over the manifest's
	// capabilityServer.env (and the grant's): where secrets and config
	// fields that declare "env" reach a server. Values are passed as
	// written, never expanded. Nil adds nothing.
	Env map[string]string
	// Workspace is the workspace root sent in initialize. Empty means the
	// current working directory.
	Workspace string
	// SessionID is the session id sent in initialize. Empty means
	// "doctor".
	SessionID string
	// HandshakeTimeout bounds initialize once the server runs, as the runtime's
	// handshake timeout does, and the wait for a respawn after the
	// injected crash. Zero means 10s.
	HandshakeTimeout time.Duration
	// CallTimeout bounds each tool round trip and each wait for the
	// server's answer. Zero means 10s.
	CallTimeout time.Duration
	// PromptTimeout bounds one prompt/contribution, as the runtime's
	// prompt timeout does. Zero means 1s, the runtime's default.
	PromptTimeout time.Duration
	// StopGrace is how long the server gets to exit after shutdown, exit
	// and the end of its stdin before it is terminated. Zero means 2s.
	StopGrace time.Duration
	// InjectedHookTimeout is the deadline of the injected hook timeout: the
	// server's answer is held back (not merely slow) until the host has
	// given up on it, so the outcome does not depend on how fast the
	// machine is, and a longer deadline only makes the probe take longer.
	// A subscription whose own timeout_ms is shorter keeps it. Zero means
	// 100ms.
	InjectedHookTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Transport == nil {
		o.Transport = stdio.New(stdio.Options{Logger: o.Logger})
	}
	if o.Workspace == "" {
		o.Workspace, _ = os.Getwd()
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = 10 * time.Second
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 10 * time.Second
	}
	if o.PromptTimeout <= 0 {
		o.PromptTimeout = time.Second
	}
	if o.StopGrace <= 0 {
		o.StopGrace = 2 * time.Second
	}
	if o.InjectedHookTimeout <= 0 {
		o.InjectedHookTimeout = 100 * time.Millisecond
	}
	if o.SessionID == "" {
		o.SessionID = "doctor"
	}
	return o
}

// extOptions are the runtime's extension options with doctor's bounds: a
// short respawn backoff so the crash probe recovers quickly, and no
// degraded state however often doctor kills the server. The session that
// builds the extension fills in the transport and the sinks.
func (o Options) extOptions() host.ExtensionOptions {
	return host.ExtensionOptions{
		Transport:        nil, // set by the session
		Logger:           o.Logger,
		HandshakeTimeout: o.HandshakeTimeout,
		PromptTimeout:    o.PromptTimeout,
		StopGrace:        o.StopGrace,
		MinBackoff:       10 * time.Millisecond,
		MaxBackoff:       50 * time.Millisecond,
		CrashLimit:       1 << 20,
		SessionID:        o.SessionID,
		WorkspaceRoot:    o.Workspace,
	}
}

// grant applies Config and Env to g.
func (o Options) grant(g host.Grant) (host.Grant, error) {
	if o.Config != nil {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(o.Config, &obj); err != nil || obj == nil {
			return host.Grant{}, fmt.Errorf("doctor: extension %s: Options.Config must be a JSON object: %s", g.Name, clip(string(o.Config)))
		}
		g.Config = slices.Clone(o.Config)
	}
	if len(o.Env) > 0 {
		env := maps.Clone(g.Server.Env)
		if env == nil {
			env = make(map[string]string, len(o.Env))
		}
		maps.Copy(env, o.Env)
		g.Server.Env = env
	}
	return g, nil
}

// A run is the state of one doctor run.
type run struct {
	opts Options
	m    *packaging.Manifest
	g    host.Grant
	w    *wire
	r    *Report
	ext  *host.Extension
	init yep.InitializeResult
	// examples holds each manifest tool's example arguments;
	// commandExamples each manifest command's.
	examples        map[string]json.RawMessage
	commandExamples map[string]string
	calls           atomic.Int64
}

// Run loads the package in pkgDir, builds the grant a session would give
// it and grades its server: see [RunGrant]. The manifest is read without
// executing anything (as [packaging.Load] always does) and the grant is
// built by [hostgrant.FromManifest], with ${VAR} in the capabilityServer's
// args and env expanded from the environment (as a session does; an unset
// one is left as written) and opts.Config and opts.Env applied.
//
// The error is non-nil only when doctor itself cannot run: the package
// has no valid manifest, or nothing to run. A broken extension is a
// report with failed checks.
func Run(ctx context.Context, pkgDir string, opts Options) (*Report, error) {
	m, err := packaging.Load(pkgDir)
	if err != nil {
		return nil, fmt.Errorf("doctor %s: %w", pkgDir, err)
	}
	g, err := hostgrant.FromManifest(m)
	if err != nil {
		return nil, fmt.Errorf("doctor %s: %w", pkgDir, err)
	}
	hostgrant.ExpandServer(m.Name, &g.Server, os.LookupEnv)
	return RunGrant(ctx, m, g, opts)
}

// RunGrant spawns the server of the extension m describes, under grant g,
// exactly as the runtime does (through opts.Transport and
// [host.Extension]), grades its handshake against the manifest, drives a
// round trip per tool with example arguments, every command, config
// change, ui/ask and status/changed the manifest declares, a cancellation
// and a clean shutdown, then fires synthetic hook events and injects a hook timeout
// and a server crash at every subscription. Every message in both
// directions is validated against the YEP schema.
//
// g is the grant a session would run m with: a front-end that resolves an
// installed extension's config and secrets passes the grant it built, so
// the run is the one its users get. opts.Config and opts.Env are applied
// over g.
//
// The error is non-nil only when doctor itself cannot run; a broken
// extension is a report with failed checks.
func RunGrant(ctx context.Context, m *packaging.Manifest, g host.Grant, opts Options) (*Report, error) {
	if m == nil {
		return nil, errors.New("doctor: RunGrant needs a manifest")
	}
	opts = opts.withDefaults()
	g, err := opts.grant(g)
	if err != nil {
		return nil, err
	}
	s, err := compiledSchemas()
	if err != nil {
		return nil, fmt.Errorf("doctor: %w", err)
	}
	d := &run{opts: opts, m: m, g: g, w: newWire(opts.Transport, s), examples: map[string]json.RawMessage{}, commandExamples: map[string]string{}}
	d.r = &Report{Extension: g.Name, Version: g.Version, Dir: m.Dir}
	if m.Yolop != nil {
		for _, t := range m.Yolop.Tools {
			if len(t.Example) > 0 {
				d.examples[t.Name] = t.Example
			}
		}
		for _, c := range m.Yolop.Commands {
			d.commandExamples[c.Name] = c.Example
		}
	}
	d.checkManifest()

	// The extension is built by a session, as in yolop, so that the
	// server's ui/ask questions get canned answers. The session itself is
	// never started.
	sess := host.NewSession(host.SessionOptions{
		Grants:        []host.Grant{g},
		Transport:     d.w,
		Logger:        opts.Logger,
		Ask:           cannedAsk{},
		SessionID:     opts.SessionID,
		WorkspaceRoot: opts.Workspace,
		Extension:     opts.extOptions(),
	})
	d.ext, _ = sess.Extension(g.Name)
	if d.handshake(ctx) {
		d.checkClamp()
		d.checkTypedSchemas()
		d.checkPrompt(ctx)
		d.checkTools(ctx)
		d.checkCommands(ctx)
		d.checkProvider(ctx)
		d.checkConfig(ctx)
		d.checkUIAsk()
		d.checkStatus()
		d.checkCancel(ctx)
		d.checkShutdown()
		d.checkHooks(ctx)
	}
	d.ext.Close()
	d.checkSandbox(ctx)
	d.checkSchema()
	return d.r, nil
}

func (d *run) checkManifest() {
	for _, w := range d.m.Warnings {
		d.r.add(GroupManifest, "warning", Warn, "%s", w)
	}
	if _, err := yep.Negotiate(yep.Current, d.g.ProtocolVersion); err != nil {
		d.r.add(GroupProtocol, "manifest", Fail, "%s declares protocol_version %q: %v", d.m.File, d.g.ProtocolVersion, err)
		return
	}
	d.r.add(GroupProtocol, "manifest", Pass, "protocol_version %s is compatible with yolop's %s", d.g.ProtocolVersion, yep.ProtocolVersion)
}

// handshake starts the server and grades initialize. It reports whether
// the server is running.
func (d *run) handshake(ctx context.Context) bool {
	start := time.Now()
	err := d.ext.Start(ctx)
	took := time.Since(start)
	req, _ := d.w.waitFor(doneCtx(), 0, func(m *wireMsg) bool { return m.dir == toServer && m.method == yep.MethodInitialize })
	var resp *wireMsg
	if req != nil {
		resp, _ = d.w.waitFor(doneCtx(), req.seq, func(m *wireMsg) bool {
			return m.conn == req.conn && m.dir == toHost && m.isResponse() && string(m.id) == string(req.id)
		})
	}
	if resp != nil && resp.result != nil {
		_ = json.Unmarshal(resp.result, &d.init)
	}
	if err != nil {
		var ve *yep.VersionError
		switch {
		case errors.As(err, &ve):
			d.r.add(GroupProtocol, "server", Fail, "the server answered initialize with protocol_version %s; yolop speaks %s and majors must match, so the runtime leaves %s off. Build the server against YEP %d.x",
				ve.Theirs, yep.ProtocolVersion, d.g.Name, yep.Current.Major)
		case resp != nil && resp.err != nil:
			d.r.add(GroupHandshake, "initialize", Fail, "the server answered initialize with an error: %s", resp.err.Error())
		default:
			d.r.add(GroupHandshake, "initialize", Fail, "%v", err)
		}
		if inst := d.w.latest(); inst != nil && !strings.Contains(err.Error(), "stderr") {
			if tail := inst.StderrTail(); len(tail) > 0 {
				d.r.Checks[len(d.r.Checks)-1].Detail += "; last stderr lines:\n" + strings.Join(tail, "\n")
			}
		}
		return false
	}
	v, _ := yep.Negotiate(yep.Current, d.init.ProtocolVersion)
	d.r.Protocol = v.String()
	caps := slices.Clone([]string(d.init.Capabilities))
	who := fmt.Sprintf("%q", d.init.Name)
	if d.init.Version != "" {
		who += " " + d.init.Version
	}
	d.r.add(GroupHandshake, "initialize", Pass, "server %s answered in %s; capabilities [%s]", who, dur(took), strings.Join(caps, " "))
	if mv, err := yep.ParseVersion(d.g.ProtocolVersion); err == nil {
		// A server newer than its manifest is fine: minors only add, so
		// it still speaks everything the manifest was written against.
		// One older than its manifest lacks what the manifest promises.
		if sv, err := yep.ParseVersion(d.init.ProtocolVersion); err == nil && sv.Major == mv.Major && sv.Minor < mv.Minor {
			d.r.add(GroupProtocol, "server", Warn, "the server speaks %s but the manifest declares %s; speaking %s. Keep protocol_version in plugin.json in step with the server",
				sv, mv, v)
			return true
		}
	}
	d.r.add(GroupProtocol, "server", Pass, "server %s, host %s: speaking %s", d.init.ProtocolVersion, yep.ProtocolVersion, v)
	return true
}

// doneCtx is a context whose waits end at once: for looking up messages
// already seen.
func doneCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func (d *run) checkClamp() {
	failed := false
	for _, ref := range d.ext.Refusals() {
		failed = true
		d.r.add(GroupClamp, ref.Kind+" "+ref.Name, Fail,
			"the handshake is wider than the approved manifest: %s. The runtime refuses it; declare it in plugin.json (users re-approve on update) or stop serving it", ref)
	}
	served := d.ext.Tools()
	for _, t := range d.g.Tools {
		if !slices.ContainsFunc(served, func(s host.ToolDef) bool { return s.Name == t.Name }) {
			d.r.add(GroupClamp, "tool "+t.Name, Warn, "declared in the manifest but not served by the server: a call to it fails with \"does not serve tool\"")
		}
	}
	hooks := d.ext.Hooks()
	for _, h := range d.g.Hooks {
		if !slices.ContainsFunc(hooks, func(s host.HookGrant) bool { return s.Event == h.Event && s.Matcher == h.Matcher }) {
			failed = true
			d.r.add(GroupClamp, hookName(h), Fail, "approved in the manifest but the server did not subscribe to it in initialize: the hook never fires. Declare it in the hooks capability params (or drop it from plugin.json)")
		}
	}
	cmds := d.ext.Commands()
	for _, c := range d.g.Commands {
		if !slices.ContainsFunc(cmds, func(s host.CommandGrant) bool { return s.Name == c.Name }) {
			d.r.add(GroupClamp, "command "+c.Name, Warn, "declared in the manifest but not served by the server")
		}
	}
	mcps := d.ext.MCPServers()
	for _, s := range d.g.MCPServers {
		if !slices.ContainsFunc(mcps, func(m yep.MCPServerDecl) bool { return m.Name == s.Name }) {
			d.r.add(GroupClamp, "mcp_server "+s.Name, Warn, "declared in the manifest but not provided by the server")
		}
	}
	for _, w := range d.ext.Warnings() {
		d.r.add(GroupClamp, "warning", Warn, "%s", w)
	}
	if !failed {
		d.r.add(GroupClamp, "grant", Pass, "nothing wider than the approved manifest: %d of %d tools, %d of %d hooks, %d of %d commands, %d of %d MCP servers served",
			len(served), len(d.g.Tools), len(hooks), len(d.g.Hooks), len(cmds), len(d.g.Commands), len(mcps), len(d.g.MCPServers))
	}
}

func hookName(h host.HookGrant) string { return "hook " + h.Event + " " + h.Matcher }

func (d *run) checkPrompt(ctx context.Context) {
	var pd yep.PromptDecl
	hasParams, _ := d.init.CapabilityParams.Decode(yep.CapPrompt, &pd)
	declares := d.init.Capabilities.Has(yep.CapPrompt) || hasParams
	dynamic := d.init.Capabilities.Has(yep.CapDynamicPrompt) || pd.Dynamic
	p := d.g.Prompt
	if p == nil {
		if !declares && !dynamic {
			d.r.add(GroupPrompt, "prompt", Pass, "the manifest contributes no prompt and the server declares none")
		}
		return // a declared prompt is a clamp refusal, reported there
	}
	if pd.Static != "" && pd.Static != p.Text && !slices.ContainsFunc(d.ext.Refusals(), func(r host.Refusal) bool { return r.Kind == "prompt" }) {
		d.r.add(GroupPrompt, "static", Warn, "the server's static prompt (%d bytes) differs from the manifest's (%d bytes) and replaces it; the user approved the manifest's text", len(pd.Static), len(p.Text))
	}
	if p.Dynamic && !dynamic {
		d.r.add(GroupPrompt, "dynamic", Warn, "the manifest approves a dynamic prompt but the server does not declare dynamic_prompt: the static text is used every turn")
	}
	from := d.w.mark()
	text, err := d.ext.Prompt(ctx, 1)
	if dynamic && p.Dynamic {
		req, _ := d.w.waitFor(doneCtx(), from, func(m *wireMsg) bool { return m.dir == toServer && m.method == yep.MethodPromptContribution })
		var resp *wireMsg
		if req != nil {
			resp, _ = d.w.waitFor(doneCtx(), req.seq, func(m *wireMsg) bool {
				return m.conn == req.conn && m.dir == toHost && m.isResponse() && string(m.id) == string(req.id)
			})
		}
		switch {
		case req == nil:
			d.r.add(GroupPrompt, "dynamic", Fail, "the host did not ask prompt/contribution (%v)", err)
		case resp == nil:
			d.r.add(GroupPrompt, "dynamic", Fail, "the server did not answer prompt/contribution within the host's prompt timeout (%s); the host falls back to the last good text", d.opts.PromptTimeout)
		case resp.err != nil:
			d.r.add(GroupPrompt, "dynamic", Fail, "prompt/contribution failed: %s; the host falls back to the last good text", resp.err.Error())
		case text == p.Text && p.Text != "":
			d.r.add(GroupPrompt, "dynamic", Warn, "the host used the static text: the contribution was refused (over the approved size?)")
		default:
			d.r.add(GroupPrompt, "dynamic", Pass, "prompt/contribution answered %d bytes", len(text))
		}
		return
	}
	if strings.TrimSpace(text) == "" {
		d.r.add(GroupPrompt, "static", Warn, "the prompt facet contributes no text")
		return
	}
	d.r.add(GroupPrompt, "static", Pass, "%d bytes of static prompt in effect", len(text))
}

func (d *run) callID() string { return fmt.Sprintf("doctor-%d", d.calls.Add(1)) }

func (d *run) checkTools(ctx context.Context) {
	served := d.ext.Tools()
	for _, t := range d.g.Tools {
		name := "tool " + t.Name
		if !slices.ContainsFunc(served, func(s host.ToolDef) bool { return s.Name == t.Name }) {
			continue // warned about by the clamp check
		}
		ex := d.examples[t.Name]
		if len(ex) == 0 {
			d.r.add(GroupTool, name, Warn, "no example; skipped (give the tool \"example\" arguments in plugin.json for a round trip)")
			continue
		}
		var updates atomic.Int64
		cctx, cancel := context.WithTimeout(ctx, d.opts.CallTimeout)
		start := time.Now()
		res, err := d.ext.CallTool(cctx, host.ToolCall{ID: d.callID(), Name: t.Name, Args: ex}, func(yep.ToolUpdateParams) { updates.Add(1) })
		took := time.Since(start)
		cancel()
		switch {
		case err != nil && cctx.Err() == context.DeadlineExceeded:
			d.r.add(GroupTool, name, Fail, "the example %s got no answer within %s", ex, d.opts.CallTimeout)
		case err != nil:
			d.r.add(GroupTool, name, Fail, "the round trip with the example %s failed: %v", ex, err)
		case res.IsError:
			d.r.add(GroupTool, name, Warn, "the example %s returned is_error: %s", ex, clip(res.Output))
		case t.Streaming && updates.Load() == 0:
			d.r.add(GroupTool, name, Warn, "declared streaming, but the example call sent no tool/update (answered %s in %s)", clip(res.Output), dur(took))
		default:
			d.r.add(GroupTool, name, Pass, "example %s → %s in %s (%d updates)", ex, clip(res.Output), dur(took), updates.Load())
		}
	}
}

// cancelTarget picks the tool to cancel: a streaming one if any, else the
// first with an example.
func (d *run) cancelTarget() (string, json.RawMessage, bool) {
	served := d.ext.Tools()
	var first string
	for _, t := range d.g.Tools {
		if d.examples[t.Name] == nil || !slices.ContainsFunc(served, func(s host.ToolDef) bool { return s.Name == t.Name }) {
			continue
		}
		if t.Streaming {
			return t.Name, d.examples[t.Name], true
		}
		if first == "" {
			first = t.Name
		}
	}
	return first, d.examples[first], first != ""
}

func (d *run) checkCancel(ctx context.Context) {
	tool, ex, ok := d.cancelTarget()
	if !ok {
		d.r.add(GroupCancel, "cancel", Warn, "no served tool has example arguments to cancel; skipped")
		return
	}
	inst := d.w.live()
	if inst == nil {
		d.r.add(GroupCancel, "cancel", Fail, "no server is running (it exited during the tool checks)")
		return
	}
	from := d.w.mark()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type outcome struct {
		res yep.ToolResult
		err error
	}
	done := make(chan outcome, 1)
	streaming := slices.ContainsFunc(d.g.Tools, func(t host.ToolGrant) bool { return t.Name == tool && t.Streaming })
	var fired atomic.Bool
	go func() {
		res, err := d.ext.CallTool(cctx, host.ToolCall{ID: d.callID(), Name: tool, Args: ex}, func(yep.ToolUpdateParams) {
			if fired.CompareAndSwap(false, true) {
				cancel()
			}
		})
		done <- outcome{res, err}
	}()
	wctx, wcancel := context.WithTimeout(ctx, d.opts.CallTimeout)
	defer wcancel()
	call, seen := d.w.waitFor(wctx, from, func(m *wireMsg) bool {
		return m.conn == inst.n && m.dir == toServer && m.method == yep.MethodToolCall
	})
	if !streaming {
		cancel() // as soon as the call is on the wire
	}
	var o outcome
	select {
	case o = <-done:
	case <-wctx.Done():
		cancel()
		o = <-done
	}
	name := "tool " + tool
	if !seen {
		d.r.add(GroupCancel, name, Fail, "the call never reached the server: %v", o.err)
		return
	}
	if o.err == nil {
		d.r.add(GroupCancel, name, Pass, "the call finished before it could be cancelled (%s); nothing to cancel", clip(o.res.Output))
	} else if !errors.Is(o.err, yep.ErrCancelled) {
		d.r.add(GroupCancel, name, Fail, "cancelling the call did not resolve it as cancelled: %v", o.err)
		return
	} else {
		d.checkCancelAnswer(wctx, name, inst, call)
	}
	// The server must still answer afterwards.
	actx, acancel := context.WithTimeout(ctx, d.opts.CallTimeout)
	defer acancel()
	if _, err := d.ext.CallTool(actx, host.ToolCall{ID: d.callID(), Name: tool, Args: ex}, nil); err != nil {
		d.r.add(GroupCancel, "after cancel", Fail, "the server stopped answering after a cancel: %v", err)
		return
	}
	d.r.add(GroupCancel, "after cancel", Pass, "the server still answers %s after the cancel", tool)
}

// checkCancelAnswer grades how the server answered the host's cancel for
// call.
func (d *run) checkCancelAnswer(ctx context.Context, name string, inst *tapInstance, call *wireMsg) {
	creq, ok := d.w.waitFor(ctx, call.seq, func(m *wireMsg) bool {
		if m.conn != inst.n || m.dir != toServer || m.method != yep.MethodCancel {
			return false
		}
		var p yep.CancelParams
		return json.Unmarshal(m.params, &p) == nil && string(p.ID) == string(call.id)
	})
	if !ok {
		d.r.add(GroupCancel, name, Fail, "the host resolved the call as cancelled but sent no cancel request")
		return
	}
	cresp, ok := d.w.response(ctx, creq.seq, inst.n, toHost, creq.id)
	if !ok {
		d.r.add(GroupCancel, name, Fail, "the server did not answer cancel within %s", d.opts.CallTimeout)
		return
	}
	advertised := d.init.Capabilities.Has(yep.CapCancel)
	if cresp.err != nil {
		if !advertised && cresp.err.Code == yep.CodeMethodNotFound {
			d.r.add(GroupCancel, name, Warn, "the server does not advertise cancel: a cancelled call runs to completion on the server")
			return
		}
		d.r.add(GroupCancel, name, Fail, "the server answered cancel with an error: %s", cresp.err.Error())
		return
	}
	var cr yep.CancelResult
	_ = json.Unmarshal(cresp.result, &cr)
	// The call's own answer, if the server sent one.
	resp, _ := d.w.response(ctx, call.seq, inst.n, toHost, call.id)
	switch {
	case !cr.Cancelled:
		d.r.add(GroupCancel, name, Pass, "the host resolved the call as cancelled at once; the server answered cancel {\"cancelled\": false} (the call had already finished)")
	case resp == nil:
		d.r.add(GroupCancel, name, Warn, "the server answered cancel {\"cancelled\": true} but never answered the aborted call with the cancelled error (-32800)")
	case resp.err != nil && resp.err.Code == yep.CodeCancelled:
		d.r.add(GroupCancel, name, Pass, "cancel honoured: the host resolved the call at once; the server answered {\"cancelled\": true} and the call with -32800")
	default:
		d.r.add(GroupCancel, name, Warn, "the server answered cancel {\"cancelled\": true} but answered the aborted call with %s instead of the cancelled error (-32800)", clip(string(resp.raw)))
	}
}

func (d *run) checkShutdown() {
	inst := d.w.live()
	if inst == nil {
		d.r.add(GroupShutdown, "shutdown", Fail, "no server is running to shut down (it exited on its own)")
		return
	}
	from := d.w.mark()
	start := time.Now()
	d.ext.Stop()
	var at time.Time
	select {
	case <-inst.Done():
		at = time.Now()
	case <-time.After(d.opts.StopGrace + 5*time.Second):
		_ = inst.Kill()
		d.r.add(GroupShutdown, "exit", Fail, "the process was still running %s after the host stopped it; doctor killed it", d.opts.StopGrace+5*time.Second)
		return
	}
	req, _ := d.w.waitFor(doneCtx(), from, func(m *wireMsg) bool {
		return m.conn == inst.n && m.dir == toServer && m.method == yep.MethodShutdown
	})
	var resp *wireMsg
	if req != nil {
		resp, _ = d.w.response(doneCtx(), req.seq, inst.n, toHost, req.id)
	}
	switch {
	case req == nil:
		d.r.add(GroupShutdown, "shutdown", Fail, "the host could not send shutdown (the server had stopped reading)")
	case resp == nil:
		d.r.add(GroupShutdown, "shutdown", Fail, "the server did not answer shutdown within %s", d.opts.StopGrace)
	case resp.err != nil:
		d.r.add(GroupShutdown, "shutdown", Fail, "the server answered shutdown with an error: %s", resp.err.Error())
	default:
		d.r.add(GroupShutdown, "shutdown", Pass, "answered shutdown")
	}
	var ee *core.ExitError
	err := inst.Err()
	took := at.Sub(start).Round(time.Millisecond)
	switch {
	case err == nil:
		how := "after exit"
		if c := inst.stdinClosedAt(); !c.IsZero() && at.After(c) {
			how = "after exit and the end of its stdin"
		}
		d.r.add(GroupShutdown, "exit", Pass, "the process exited 0 %s, %s after shutdown", how, took)
	case errors.As(err, &ee) && ee.Signal != "":
		d.r.add(GroupShutdown, "exit", Fail, "the process did not exit within the %s grace after shutdown, exit and the end of its stdin; the host killed it (signal %s). Exit on exit, and when stdin ends", d.opts.StopGrace, ee.Signal)
	case errors.As(err, &ee):
		d.r.add(GroupShutdown, "exit", Fail, "the process exited with status %d after shutdown; it must exit 0", ee.Code)
	default:
		d.r.add(GroupShutdown, "exit", Fail, "the process ended badly: %v", err)
	}
}

func (d *run) checkSchema() {
	probs := d.w.problemList()
	toSrv, toHst := d.w.counts()
	d.r.Messages = toSrv + toHst
	const maxListed = 10
	listed := 0
	fails := 0
	for _, p := range probs {
		if !p.minor {
			fails++
		}
		if listed >= maxListed {
			continue
		}
		listed++
		st := Fail
		if p.minor {
			st = Warn
		}
		who := p.dir.sender()
		d.r.add(GroupSchema, who+" "+p.what, st, "%s\n%s", p.detail, p.line)
	}
	if listed < len(probs) {
		st := Warn
		for _, p := range probs[listed:] {
			if !p.minor {
				st = Fail
			}
		}
		d.r.add(GroupSchema, "more", st, "%d more problems not listed", len(probs)-listed)
	}
	if fails == 0 {
		d.r.add(GroupSchema, "messages", Pass, "%d messages (%d host→server, %d server→host) conform to schema/yep/v1/schema.json", toSrv+toHst, toSrv, toHst)
	}
}

func clip(s string) string {
	s = strings.ReplaceAll(strings.TrimSpace(s), "\n", `\n`)
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return fmt.Sprintf("%q", s)
}
