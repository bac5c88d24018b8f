package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
)

// Hook-probe conditions, in the order they are reported.
const (
	condNormal     = "normal"
	condTimeout    = "timeout"
	condCrash      = "crash"
	condAfterCrash = "after-crash"
)

// Host outcomes of a probed tool call.
const (
	outProceeded = "proceeded"
	outBlocked   = "blocked"
	outWithheld  = "withheld"
	outMutated   = "mutated"
	outError     = "error"
)

const probeOutput = "yolop doctor: synthetic tool result"

// A probeTool is a built-in capability with one tool named after a hook
// matcher: calling it through a [host.Session] fires the subscription by
// the host's own matching and policy, and tells whether the call went
// through.
type probeTool struct {
	host.Base
	name string

	mu     sync.Mutex
	called bool
	args   json.RawMessage
}

func (p *probeTool) Name() string { return "builtin:doctor" }

func (p *probeTool) Tools() []host.ToolDef {
	return []host.ToolDef{{Name: p.name, Description: "yolop doctor's synthetic tool", InputSchema: json.RawMessage(`{"type":"object"}`), NeverDefer: true}}
}

func (p *probeTool) CallTool(_ context.Context, call host.ToolCall, _ func(yep.ToolUpdateParams)) (yep.ToolResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.called, p.args = true, call.Args
	return yep.ToolResult{Output: probeOutput}, nil
}

func (p *probeTool) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.called, p.args = false, nil
}

// A probeSession is a host session holding the probe tool and the
// extension with a single subscription approved, so each firing reaches
// exactly that subscription.
type probeSession struct {
	d    *run
	sub  host.HookGrant
	tool *probeTool
	args json.RawMessage
	sess *host.Session
	logs *syncBuffer
}

func (d *run) newProbeSession(ctx context.Context, sub host.HookGrant, tool string, args json.RawMessage) (*probeSession, error) {
	g := d.g
	g.Hooks = []host.HookGrant{sub}
	g.Tools = slices.Clone(g.Tools)
	ps := &probeSession{d: d, sub: sub, tool: &probeTool{name: tool}, args: args, logs: &syncBuffer{}}
	logger := hclog.New(&hclog.LoggerOptions{Output: ps.logs, Level: hclog.Warn})
	eo := d.opts.extOptions()
	ps.sess = host.NewSession(host.SessionOptions{
		Builtins:      []host.Capability{ps.tool},
		Grants:        []host.Grant{g},
		Transport:     d.w,
		Logger:        logger,
		SessionID:     d.opts.SessionID,
		WorkspaceRoot: d.opts.Workspace,
		ToolTimeout:   d.opts.CallTimeout + time.Duration(effectiveTimeoutMS(sub))*time.Millisecond,
		Extension:     eo,
	})
	if err := ps.sess.Start(ctx); err != nil {
		ps.sess.Close()
		return nil, err
	}
	return ps, nil
}

func (ps *probeSession) ext() *host.Extension {
	e, _ := ps.sess.Extension(ps.d.g.Name)
	return e
}

// instance returns the tapped instance of the running server.
func (ps *probeSession) instance() *tapInstance { return ps.d.w.live() }

// fire calls the probe tool through the session and says what the host
// did with the call.
func (ps *probeSession) fire(ctx context.Context) (outcome, detail string) {
	ps.tool.reset()
	res, err := ps.sess.CallTool(ctx, ps.tool.name, ps.d.callID(), ps.args, nil)
	var hb *host.HookBlockedError
	switch {
	case errors.As(err, &hb):
		return outBlocked, hb.Reason
	case err != nil:
		return outError, err.Error()
	}
	ps.tool.mu.Lock()
	called, got := ps.tool.called, ps.tool.args
	ps.tool.mu.Unlock()
	switch {
	case !called:
		return outError, "the tool was not called and no hook blocked it"
	case !jsonEqual(got, ps.args):
		return outMutated, "arguments replaced with " + clip(string(got))
	case res.IsError && strings.HasPrefix(res.Output, "result withheld"):
		return outWithheld, res.Output
	case res.Output != probeOutput || res.IsError:
		return outMutated, "result replaced with " + clip(res.Output)
	}
	return outProceeded, ""
}

// answer finds the server's answer to the first hook/fire sent from
// sequence number from on: its decision, or the error it answered, and
// whether the host sent one at all.
func (d *run) answer(from int) (sent bool, decision string, errText string, took time.Duration) {
	msgs := d.w.since(from)
	for i, m := range msgs {
		if m.dir != toServer || m.method != yep.MethodHookFire {
			continue
		}
		for _, r := range msgs[i+1:] {
			if r.conn != m.conn || r.dir != toHost || !r.isResponse() || string(r.id) != string(m.id) {
				continue
			}
			took = r.at.Sub(m.at)
			if r.err != nil {
				return true, "", r.err.Error(), took
			}
			var res struct {
				Decision json.RawMessage `json:"decision"`
			}
			_ = json.Unmarshal(r.result, &res)
			var s string
			switch {
			case res.Decision == nil:
				s = yep.DecisionAllow // a missing decision means allow
			case json.Unmarshal(res.Decision, &s) != nil:
				s = string(res.Decision)
			}
			return true, s, "", took
		}
		return true, "", "", 0
	}
	return false, "", "", 0
}

// blocks reports the outcome a failing subscription must produce.
func failClosedOutcome(event string) string {
	if event == yep.HookPostToolUse {
		return outWithheld
	}
	return outBlocked
}

func (d *run) checkHooks(ctx context.Context) {
	for _, sub := range d.servedHooks() {
		if sub.Event == yep.HookPreToolUse || sub.Event == yep.HookPostToolUse {
			d.probeHook(ctx, sub)
		} else {
			d.probeLifecycle(ctx, sub) // lifecycle.go
		}
	}
}

// servedHooks lists the approved subscriptions the server declared, in
// manifest order.
func (d *run) servedHooks() []host.HookGrant {
	served := d.ext.Hooks()
	var out []host.HookGrant
	for _, h := range d.g.Hooks {
		if slices.ContainsFunc(served, func(s host.HookGrant) bool { return s.Event == h.Event && s.Matcher == h.Matcher }) {
			out = append(out, h)
		}
	}
	return out
}

func (d *run) probeHook(ctx context.Context, sub host.HookGrant) {
	onErr := sub.OnError
	if onErr == "" {
		onErr = "warn"
	}
	timeoutMS := effectiveTimeoutMS(sub)
	name := hookName(sub)
	tool, args, ok := d.probeTarget(sub.Matcher)
	if !ok {
		d.r.add(GroupHook, name, Warn, "could not make a tool name that matcher %q selects; skipped", sub.Matcher)
		return
	}
	hp := HookProbe{Event: sub.Event, Matcher: sub.Matcher, OnError: onErr, TimeoutMS: timeoutMS, Tool: tool}
	closed := failClosedOutcome(sub.Event)
	want := outProceeded
	if onErr == "block" {
		want = closed
	}
	add := func(s HookStep) { hp.Steps = append(hp.Steps, s) }
	defer func() {
		d.r.Hooks = append(d.r.Hooks, hp)
		// One graded line per condition.
		for _, s := range hp.Steps {
			d.r.add(GroupHook, name+" ["+s.Condition+"]", s.Status, "%s", s.Detail)
		}
	}()

	// The injected timeout runs first, in a session of its own, so that
	// only one server instance runs at a time.
	timeout := d.probeTimeout(ctx, sub, tool, args, want)
	ps, err := d.newProbeSession(ctx, sub, tool, args)
	if err != nil {
		add(HookStep{Condition: condNormal, Outcome: outError, Status: Fail, Detail: fmt.Sprintf("the server did not start for the hook probe: %v", err)})
		add(timeout)
		return
	}
	// 1. A synthetic event, answered normally.
	from := d.w.mark()
	out, detail := ps.fire(ctx)
	sent, dec, errText, took := d.answer(from)
	normal := HookStep{Condition: condNormal, Decision: dec, Outcome: out}
	switch {
	case !sent:
		normal.Status = Fail
		normal.Detail = fmt.Sprintf("the host never fired the subscription for a %s of %q: the hook never fires (%s)", sub.Event, tool, detail)
	case dec == "" && errText != "":
		normal.Status = Fail
		normal.Detail = fmt.Sprintf("the hook answered an error on a synthetic event (%s); with on_error %s the host %s every matching call", errText, onErr, map[bool]string{true: "blocks", false: "ignores the hook on"}[onErr == "block"])
	case dec == "":
		normal.Status = Fail
		normal.Detail = fmt.Sprintf("the hook did not answer within its timeout_ms (%dms); with on_error %s the host %s every matching call", timeoutMS, onErr, map[bool]string{true: "blocks", false: "ignores the hook on"}[onErr == "block"])
	case dec != yep.DecisionAllow && dec != yep.DecisionBlock && dec != yep.DecisionMutate:
		normal.Status = Fail
		normal.Detail = fmt.Sprintf("decision %q is not allow, block or mutate: the host treats it as allow (it %s), so this hook fails open", dec, did(out))
	case took > time.Duration(timeoutMS)*time.Millisecond*8/10:
		normal.Status = Warn
		normal.Detail = fmt.Sprintf("answered %s in %s, close to its timeout_ms (%dms)", dec, dur(took), timeoutMS)
	default:
		normal.Status = Pass
		normal.Detail = fmt.Sprintf("a %s of %q fired it: the server answered %s in %s and the host %s", sub.Event, tool, dec, dur(took), did(out))
		if detail != "" {
			normal.Detail += " (" + detail + ")"
		}
	}
	add(normal)

	// 2. A hook timeout: the server's answer was held back past a short
	// deadline.
	add(timeout)

	// 3. A crash while the hook is in flight, then 4. the next firing.
	crash, after := d.probeCrash(ctx, ps, want, normal)
	ps.sess.Close()
	add(crash)
	add(after)
}

// probeTarget picks the tool a synthetic event names: a manifest tool the
// matcher selects and that has example arguments, else a made-up name.
func (d *run) probeTarget(matcher string) (string, json.RawMessage, bool) {
	for _, t := range d.g.Tools {
		if ok, _ := matchTool(matcher, t.Name); ok && d.examples[t.Name] != nil {
			return t.Name, d.examples[t.Name], true
		}
	}
	name, ok := probeName(matcher)
	if !ok {
		return "", nil, false
	}
	return name, syntheticArgs(name), true
}

func (d *run) probeTimeout(ctx context.Context, sub host.HookGrant, tool string, args json.RawMessage, want string) HookStep {
	return d.heldTimeout(ctx, sub, tool, args, want, func(ps *probeSession) (string, string) { return ps.fire(ctx) })
}

// heldTimeout runs the timeout probe of sub: a probe session whose
// subscription has the injected short timeout (or sub's own, when
// shorter) calls fire while the server's answers are held back, and the
// outcome and detail fire reports are graded against want.
func (d *run) heldTimeout(ctx context.Context, sub host.HookGrant, tool string, args json.RawMessage, want string, fire func(ps *probeSession) (outcome, detail string)) HookStep {
	step := HookStep{Condition: condTimeout}
	short := sub
	short.TimeoutMS = max(1, int(d.opts.InjectedHookTimeout/time.Millisecond))
	if sub.TimeoutMS > 0 && sub.TimeoutMS < short.TimeoutMS {
		short.TimeoutMS = sub.TimeoutMS
	}
	ps, err := d.newProbeSession(ctx, short, tool, args)
	if err != nil {
		step.Outcome, step.Status = outError, Fail
		step.Detail = fmt.Sprintf("the server did not start for the timeout probe: %v", err)
		return step
	}
	defer ps.sess.Close()
	inst := ps.instance()
	if inst == nil {
		step.Outcome, step.Status = outError, Fail
		step.Detail = "the server exited right after its handshake, before the timeout probe"
		return step
	}
	inst.out.hold()
	out, detail := fire(ps)
	inst.out.resume()
	step.Outcome = out
	return d.grade(step, sub, want, detail, fmt.Sprintf("the hook timed out after %dms (the server's answer was held back)", short.TimeoutMS), ps.logs.String())
}

func (d *run) probeCrash(ctx context.Context, ps *probeSession, want string, normal HookStep) (HookStep, HookStep) {
	crash := HookStep{Condition: condCrash}
	inst := ps.instance()
	pid := ps.ext().PID()
	if inst == nil {
		crash.Outcome, crash.Status, crash.Detail = outError, Fail, "the server was not running for the crash probe"
		return crash, HookStep{Condition: condAfterCrash, Outcome: outError, Status: Fail, Detail: "skipped"}
	}
	from := d.w.mark()
	inst.out.hold()
	type res struct{ out, detail string }
	done := make(chan res, 1)
	go func() {
		o, dt := ps.fire(ctx)
		done <- res{o, dt}
	}()
	wctx, cancel := context.WithTimeout(ctx, d.opts.CallTimeout)
	defer cancel()
	_, inFlight := d.w.waitFor(wctx, from, func(m *wireMsg) bool {
		return m.conn == inst.n && m.dir == toServer && m.method == yep.MethodHookFire
	})
	if pid == 0 {
		_ = inst.Kill() // no process (an in-process transport): end the instance
	} else if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill() // SIGKILL: the server gets no chance to answer
	}
	select {
	case <-inst.Done():
	case <-wctx.Done():
	}
	inst.out.drop() // whatever it wrote before dying is lost
	var r res
	select {
	case r = <-done:
	case <-time.After(d.opts.CallTimeout):
		// Killing the process did not end its output: a child holds it.
		_ = inst.Kill()
		r = <-done
		r.detail += "; killing the server's process did not close its stdout (a child process kept it open), so the host could not notice the crash"
	}
	crash.Outcome = r.out
	what := "the server was killed (SIGKILL) while the hook was in flight"
	if !inFlight {
		what = "the server was killed before the hook reached it"
	}
	crash = d.grade(crash, ps.sub, want, r.detail, what, ps.logs.String())

	// The next firing, once the host has noticed the crash: it respawns
	// the server.
	after := HookStep{Condition: condAfterCrash}
	for wctx.Err() == nil {
		// The host has noticed once the extension is no longer ready on
		// the killed instance.
		if st, _ := ps.ext().State(); st != host.StateReady || (ps.d.w.live() != nil && ps.d.w.live() != inst) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	// An extension with hooks is respawned eagerly, after a backoff; fire
	// once it is back, so a slow start is not mistaken for a slow hook.
	crashed := time.Now()
	rctx, rcancel := context.WithTimeout(ctx, d.opts.HandshakeTimeout+time.Second)
	defer rcancel()
	for rctx.Err() == nil {
		if st, _ := ps.ext().State(); st == host.StateReady && ps.d.w.live() != nil && ps.d.w.live() != inst {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	respawn := time.Since(crashed)
	from = d.w.mark()
	out, detail := ps.fire(ctx)
	sent, dec, errText, _ := d.answer(from)
	after.Outcome, after.Decision = out, dec
	newPID := ps.ext().PID()
	switch {
	case !sent || dec == "":
		after.Status = Fail
		after.Detail = fmt.Sprintf("after the crash the host got no decision (%s): it did not get the server back", strings.TrimPrefix(errText+"; "+detail, "; "))
	case normal.Decision == yep.DecisionBlock && dec != yep.DecisionBlock:
		after.Status = Fail
		after.Detail = fmt.Sprintf("the server answered block before the crash but %s after its restart%s: the hook fails open after a crash", dec, pids(pid, newPID))
	default:
		after.Status = Pass
		after.Detail = fmt.Sprintf("the host respawned the server in %s%s; it answered %s and the host %s", dur(respawn), pids(pid, newPID), dec, did(out))
	}
	return crash, after
}

// grade compares the host's outcome under an injected failure with the
// subscription's on_error policy.
func (d *run) grade(step HookStep, sub host.HookGrant, want, detail, what, logs string) HookStep {
	onErr := sub.OnError
	if onErr == "" {
		onErr = "warn"
	}
	switch {
	case step.Outcome == want && want == outProceeded:
		step.Status = Pass
		step.Detail = fmt.Sprintf("%s; on_error is %s and the host let the call proceed", what, onErr)
		if strings.Contains(logs, "on_error: warn") {
			step.Detail += " with a warning"
		}
	case step.Outcome == want:
		step.Status = Pass
		step.Detail = fmt.Sprintf("%s; on_error is block and the host failed closed (%s: %s)", what, want, firstLine(detail))
	case want != outProceeded:
		step.Status = Fail
		step.Detail = fmt.Sprintf("%s; on_error is block but the host %s: the hook fails open (%s)", what, did(step.Outcome), firstLine(detail))
	default:
		step.Status = Fail
		step.Detail = fmt.Sprintf("%s; on_error is warn but the host %s (%s)", what, did(step.Outcome), firstLine(detail))
	}
	return step
}

func matchTool(matcher, tool string) (bool, error) {
	if matcher == "*" {
		return true, nil
	}
	return path.Match(matcher, tool)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func jsonEqual(a, b []byte) bool {
	var x, y bytes.Buffer
	if json.Compact(&x, a) != nil || json.Compact(&y, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}

// A syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// did says in words what the host did with a probed call.
func did(outcome string) string {
	switch outcome {
	case outProceeded:
		return "let the call proceed"
	case outBlocked:
		return "blocked the call"
	case outWithheld:
		return "withheld the result"
	case outMutated:
		return "ran it with the hook's replacement"
	}
	return "failed the call"
}

// dur rounds a duration for a person: milliseconds, or microseconds below
// one.
func dur(d time.Duration) string {
	if d < time.Millisecond {
		return d.Round(time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// effectiveTimeoutMS is the subscription's timeout_ms, or the host's
// default when it has none.
func effectiveTimeoutMS(sub host.HookGrant) int {
	if sub.TimeoutMS > 0 {
		return sub.TimeoutMS
	}
	return int(hostHookTimeout / time.Millisecond)
}

// hostHookTimeout is the host's hook timeout for subscriptions without
// timeout_ms (host.ExtensionOptions.HookTimeout's default); doctor leaves
// that option at its default.
const hostHookTimeout = 5 * time.Second

// pids renders a respawn's process ids, " (pid 12 → 34)", or nothing for a
// transport without processes.
func pids(before, after int) string {
	if before == 0 && after == 0 {
		return ""
	}
	return fmt.Sprintf(" (pid %d → %d)", before, after)
}
