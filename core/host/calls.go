package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"yolop.dev/core"
	yjson "yolop.dev/core/internal/json"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/yep"
)

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

// CallTool implements [Capability]. A tool the grant does not approve
// fails matching [ErrToolNotApproved], and one the server's handshake did
// not declare [ErrToolNotServed]; an extension that refuses calls fails as
// [Extension.Start] does.
func (e *Extension) CallTool(ctx context.Context, call ToolCall, onUpdate func(yep.ToolUpdateParams)) (res yep.ToolResult, err error) {
	start := time.Now()
	defer func() { e.stats.call(time.Since(start), err) }()
	if !slices.ContainsFunc(e.grant.Tools, func(t ToolGrant) bool { return t.Name == call.Name }) {
		return res, newError(ErrToolNotApproved, nil, "extension %q has no approved tool %q", e.grant.Name, call.Name)
	}
	p, err := e.ensure(ctx)
	if err != nil {
		return res, e.scrubError(err)
	}
	if !slices.ContainsFunc(p.contrib.tools, func(t ToolGrant) bool { return t.Name == call.Name }) {
		return res, newError(ErrToolNotServed, nil, "extension %q does not serve tool %q (its server declared fewer tools than its manifest)", e.grant.Name, call.Name)
	}
	co := jsonrpc.CallOptions{}
	if onUpdate != nil {
		co.OnNotify = func(method string, params json.RawMessage) {
			if method != yep.MethodToolUpdate {
				return
			}
			var u yep.ToolUpdateParams
			if yjson.Unmarshal(params, &u) != nil {
				return
			}
			u.Output = e.scrub(u.Output)
			onUpdate(u)
		}
	}
	var id yep.ID
	co.OnID = func(i yep.ID) { id = i }
	err = p.conn.CallWith(ctx, yep.MethodToolCall, yep.ToolCallParams{
		ToolCallID: call.ID, Name: call.Name, Args: call.Args, SessionID: e.opts.SessionID, TraceParent: call.TraceParent,
	}, &res, co)
	if err != nil {
		if errors.As(err, new(*jsonrpc.CancelledError)) {
			e.probeAfterCancel(p, call.Name, id)
		}
		return res, e.callError(call.Name, err)
	}
	res.Output = e.scrub(res.Output)
	res.Data = e.scrubJSON(res.Data)
	return res, nil
}

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
// subscription's timeout_ms: when it expires the error matches
// [ErrHookTimeout]. An answer that is no known decision fails matching
// [ErrHookDecision].
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
			return res, newError(ErrHookTimeout, nil, "hook %s of extension %q timed out after %s", sub.Event, e.grant.Name, timeout)
		}
		return res, e.callError("hook/fire", err)
	}
	switch res.Decision {
	case "":
		if failsClosedOnSilence(sub) {
			return yep.HookFireResult{}, newError(ErrHookDecision, nil, "hook %s of extension %q answered no decision", sub.Event, e.grant.Name)
		}
		res.Decision = yep.DecisionAllow
	case yep.DecisionAllow, yep.DecisionBlock, yep.DecisionMutate:
	default:
		// An unknown decision is not consent: it is a hook error, so the
		// subscription's on_error decides (block fails closed).
		return yep.HookFireResult{}, newError(ErrHookDecision, nil, "hook %s of extension %q answered the unknown decision %q (want allow, block or mutate)", sub.Event, e.grant.Name, res.Decision)
	}
	res.Reason = e.scrub(res.Reason)
	res.Context = e.scrub(res.Context)
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

// ExecuteCommand implements [Capability]. A command the extension does not
// contribute fails matching [ErrNoSuchCommand].
func (e *Extension) ExecuteCommand(ctx context.Context, name, args string) (yep.CommandExecuteResult, error) {
	var res yep.CommandExecuteResult
	if !slices.ContainsFunc(e.Commands(), func(c CommandGrant) bool { return c.Name == name }) {
		return res, newError(ErrNoSuchCommand, nil, "extension %q has no command %q", e.grant.Name, name)
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
		// The connection ended for it, and the extension is degraded.
		return newError(ErrExtensionDegraded, err, "%s: extension %q %s", what, e.grant.Name, e.protocolReason(pe))
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

// probeAfterCancel checks, for a cooperatively scheduled server, that it
// still reads after one of its calls was cancelled: it asks it to cancel
// the call again (an answer, {cancelled: false} included, is proof of
// life) and restarts it when no answer comes within CancelGrace, as a
// crash — its handler is stuck in a loop and would hold every later call.
func (e *Extension) probeAfterCancel(p *process, tool string, id yep.ID) {
	if c, ok := p.inst.(core.Cooperative); !ok || !c.Cooperative() || id == nil {
		return
	}
	done := make(chan struct{})
	e.mu.Lock()
	if p.probing != nil {
		e.mu.Unlock()
		return // one probe at a time answers for every cancel
	}
	p.probing = done
	e.mu.Unlock()
	e.probes.Add(1)
	go func() {
		defer e.probes.Done()
		defer func() {
			e.mu.Lock()
			p.probing = nil
			e.mu.Unlock()
			close(done)
		}()
		ctx, cancel := context.WithTimeout(context.Background(), e.opts.CancelGrace)
		defer cancel()
		err := p.conn.Call(ctx, yep.MethodCancel, yep.CancelParams{ID: id}, nil)
		if err == nil || ctx.Err() == nil {
			return // it answered, or the connection ended anyway
		}
		e.log.Warn("server did not answer within the grace after a cancel; restarting it (a handler stuck in a loop keeps a cooperatively scheduled server from reading)",
			"tool", tool, "grace", e.opts.CancelGrace)
		_ = p.inst.Kill()
		<-p.conn.Done() // calls that waited for the probe see the crash
	}()
}
