package sdk

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"yolop.dev/core/internal/json"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/yep"
)

// handle serves every request and notification of the connection.
// Notifications arrive on the reader goroutine and must not block.
func (s *Server) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	if req.IsNotification() {
		s.notification(req)
		return nil, nil
	}
	if req.Method == yep.MethodInitialize {
		return s.initialize(req.Conn, req.Params)
	}
	if s.sess.Load() == nil {
		return nil, yep.Errorf(yep.CodeNotInitialized, "extension %q: %s before initialize; send initialize first", s.info.Name, req.Method)
	}
	if s.shutdown.Load() && req.Method != yep.MethodShutdown {
		return nil, yep.Errorf(yep.CodeInvalidRequest, "extension %q: %s after shutdown; only exit may follow", s.info.Name, req.Method)
	}
	switch req.Method {
	case yep.MethodToolCall:
		return s.callTool(ctx, req)
	case yep.MethodHookFire:
		return s.fireHook(ctx, req.Params)
	case yep.MethodPromptContribution:
		return s.promptContribution(ctx, req.Params)
	case yep.MethodCommandExecute:
		return s.executeCommand(ctx, req.Params)
	case yep.MethodConfigChanged:
		return s.configChanged(ctx, req.Params)
	case yep.MethodShutdown:
		s.shutdown.Store(true)
		return yep.ShutdownResult{}, nil
	}
	return nil, yep.Errorf(yep.CodeMethodNotFound, "extension %q does not serve method %q", s.info.Name, req.Method)
}

func (s *Server) notification(req *jsonrpc.Request) {
	switch req.Method {
	case yep.MethodExit:
		s.exitOnce.Do(func() { close(s.exit) })
	case yep.MethodInitialized:
	case yep.MethodTraceEvent:
		if s.onTrace == nil || s.sess.Load() == nil {
			return
		}
		var ev yep.TraceEventParams
		if err := decodeParams(req.Params, &ev); err != nil {
			s.log.Warn("skipping a malformed trace/event", "error", err)
			return
		}
		s.events.push(true, func() { s.onTrace(ev) })
	case yep.MethodWorkspaceChanged:
		if s.onWorkspace == nil || s.sess.Load() == nil {
			return
		}
		var p yep.WorkspaceChangedParams
		if err := decodeParams(req.Params, &p); err != nil {
			s.log.Warn("skipping a malformed workspace/changed", "error", err)
			return
		}
		s.events.push(false, func() { s.onWorkspace(p.WorkspaceRoot) })
	default:
		s.log.Debug("ignoring a notification", "method", req.Method)
	}
}

// decodeParams decodes params into v, matching keys case-sensitively;
// absent params leave v zero.
func decodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	return json.Unmarshal(params, v)
}

// encodeToolResult encodes a tool result as the response's raw result. A
// result whose data is not valid JSON becomes a tool-level error saying
// so, rather than a failed response.
func encodeToolResult(r yep.ToolResult) json.RawMessage {
	raw, err := json.Marshal(r)
	if err != nil {
		raw, _ = json.Marshal(yep.ToolResult{Output: "tool result: invalid data: " + err.Error(), IsError: true})
	}
	return raw
}

func (s *Server) invalidParams(method string, err error) *yep.Error {
	return yep.Errorf(yep.CodeInvalidParams, "extension %q: %s: invalid params: %v", s.info.Name, method, err)
}

// guard runs f, turning a panic into an internal error naming what
// panicked; the stack goes to the log.
func guard[T any](s *Server, what string, f func() (T, error)) (res T, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("handler panicked", "handler", what, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			var zero T
			res, err = zero, yep.Errorf(yep.CodeInternalError, "extension %q: %s panicked: %v", s.info.Name, what, p)
		}
	}()
	return f()
}

func (s *Server) initialize(conn *jsonrpc.Conn, params json.RawMessage) (any, error) {
	var p yep.InitializeParams
	if err := decodeParams(params, &p); err != nil {
		return nil, s.invalidParams(yep.MethodInitialize, err)
	}
	s.initMu.Lock()
	defer s.initMu.Unlock()
	if s.sess.Load() != nil {
		return nil, yep.Errorf(yep.CodeInvalidRequest, "extension %q: initialize received twice; it opens the connection once", s.info.Name)
	}
	theirs := p.ProtocolVersion
	if theirs == "" {
		// Missing fields default: a host that sends no version speaks ours.
		theirs = yep.ProtocolVersion
	}
	v, err := yep.Negotiate(yep.Current, theirs)
	if err != nil {
		e := yep.Errorf(yep.CodeInvalidRequest, "extension %q: host protocol version %s is incompatible with the server's %s (majors must match); update the extension or yolop", s.info.Name, theirs, yep.ProtocolVersion)
		var ve *yep.VersionError
		if !errors.As(err, &ve) {
			e.Message = fmt.Sprintf("extension %q: %v", s.info.Name, err)
		}
		e.Data, _ = json.Marshal(map[string]string{"protocol_version": yep.ProtocolVersion, "min_protocol_version": yep.MinProtocolVersion})
		return nil, e
	}
	if s.onConfig != nil {
		if _, err := guard(s, "OnConfig", func() (struct{}, error) { return struct{}{}, s.onConfig(p.Config) }); err != nil {
			var we *yep.Error
			if errors.As(err, &we) {
				return nil, we
			}
			return nil, yep.Errorf(yep.CodeInvalidParams, "extension %q: config rejected: %v", s.info.Name, err)
		}
	}
	var provider *yep.ProviderParams
	if s.provider != nil {
		pp, err := guard(s, "Provider", func() (yep.ProviderParams, error) { return s.provider(s.life) })
		if err != nil {
			var we *yep.Error
			if errors.As(err, &we) {
				return nil, we
			}
			return nil, yep.Errorf(yep.CodeInternalError, "extension %q: its model provider did not start: %v", s.info.Name, err)
		}
		provider = &pp
	}
	host := p.Capabilities
	// The connection is published before the session: the host-facing
	// calls check the session, then use the connection. (ServeConn stores
	// it too, but only once NewConn has returned, which may be after the
	// reader has already dispatched this request.)
	s.conn.Store(conn)
	s.sess.Store(&session{
		params:    p,
		streaming: host.Has(yep.CapStreaming),
		status:    host.Has(yep.CapStatus),
		uiAsk:     host.Has(yep.CapUIAsk),
		log:       host.Has(yep.CapLog),
	})
	res := s.result
	res.ProtocolVersion = v.String()
	if provider != nil {
		res = withProvider(res, *provider)
	}
	return res, nil
}

func (s *Server) callTool(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p yep.ToolCallParams
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, s.invalidParams(yep.MethodToolCall, err)
	}
	if string(p.Args) == "null" {
		p.Args = nil // no arguments, as when args is absent
	}
	t := s.tools[p.Name]
	if t == nil {
		return nil, yep.Errorf(yep.CodeInvalidParams, "extension %q has no tool %q (it serves: %s)", s.info.Name, p.Name,
			joinNames(s.toolOrder, func(t *tool) string { return t.name }))
	}
	ctx = WithTraceContext(ctx, p.TraceParent, p.TraceState)
	call := &ToolCall{
		ID: p.ToolCallID, Name: p.Name, Args: p.Args, SessionID: p.SessionID, RequestID: req.ID,
		s: s, ctx: ctx, streaming: t.streaming,
	}
	res, err := guard(s, fmt.Sprintf("tool %q", p.Name), func() (yep.ToolResult, error) { return t.h(ctx, call) })
	if err != nil {
		if we := protocolError(ctx, err); we != nil {
			return nil, we
		}
		// A plain error is a tool-level failure the agent reads.
		return encodeToolResult(yep.ToolResult{Output: err.Error(), IsError: true}), nil
	}
	return encodeToolResult(res), nil
}

func (s *Server) fireHook(ctx context.Context, params json.RawMessage) (any, error) {
	var p yep.HookFireParams
	if err := decodeParams(params, &p); err != nil {
		return nil, s.invalidParams(yep.MethodHookFire, err)
	}
	var payload yep.HookPayload
	if err := decodeParams(p.Payload, &payload); err != nil {
		return nil, s.invalidParams(yep.MethodHookFire, fmt.Errorf("payload: %w", err))
	}
	ctx = WithTraceContext(ctx, p.TraceParent, p.TraceState)
	ev := &HookEvent{Event: p.Event, ToolName: p.ToolName, ToolCallID: payload.ToolCallID, Args: payload.Args, Result: payload.Result, Payload: payload}
	out := yep.HookFireResult{Decision: yep.DecisionAllow}
	fired := false
	for _, h := range s.hooks {
		if h.event != p.Event {
			continue
		}
		if p.Matcher != "" && h.matcher != p.Matcher {
			continue
		}
		if p.Matcher == "" && !h.matches(p.ToolName) {
			continue
		}
		fired = true
		ev.Matcher = h.matcher
		what := fmt.Sprintf("hook %s %q", h.event, h.matcher)
		res, err := guard(s, what, func() (yep.HookFireResult, error) { return h.h(ctx, ev) })
		if err != nil {
			return nil, s.wireError(ctx, fmt.Sprintf("%s failed on tool %q", what, p.ToolName), err)
		}
		if res.Context != "" && res.Decision != yep.DecisionBlock {
			// Every subscription's context reaches the host, in order.
			if out.Context != "" {
				out.Context += "\n\n"
			}
			out.Context += res.Context
		}
		switch res.Decision {
		case "", yep.DecisionAllow:
		case yep.DecisionBlock:
			return res, nil
		case yep.DecisionMutate:
			out.Decision = yep.DecisionMutate
			out.Reason = res.Reason
			if res.Args != nil {
				ev.Args, out.Args = res.Args, res.Args
			}
			if res.Result != nil {
				ev.Result, out.Result = res.Result, res.Result
			}
		default:
			return nil, yep.Errorf(yep.CodeInternalError, "extension %q: %s answered decision %q; want allow, block or mutate", s.info.Name, what, res.Decision)
		}
	}
	if !fired {
		s.log.Debug("hook/fire matched no subscription; allowing", "event", p.Event, "tool", p.ToolName, "matcher", p.Matcher)
	}
	return out, nil
}

func (s *Server) promptContribution(ctx context.Context, params json.RawMessage) (any, error) {
	if s.dynamicPrompt == nil {
		return nil, yep.Errorf(yep.CodeMethodNotFound, "extension %q did not declare a dynamic prompt", s.info.Name)
	}
	var p yep.PromptContributionParams
	if err := decodeParams(params, &p); err != nil {
		return nil, s.invalidParams(yep.MethodPromptContribution, err)
	}
	text, err := guard(s, "DynamicPrompt", func() (string, error) { return s.dynamicPrompt(ctx, p) })
	if err != nil {
		return nil, s.wireError(ctx, "DynamicPrompt", err)
	}
	return yep.PromptContributionResult{Text: text}, nil
}

func (s *Server) executeCommand(ctx context.Context, params json.RawMessage) (any, error) {
	var p yep.CommandExecuteParams
	if err := decodeParams(params, &p); err != nil {
		return nil, s.invalidParams(yep.MethodCommandExecute, err)
	}
	name := strings.TrimPrefix(p.Name, s.info.Name+":")
	c := s.commands[name]
	if c == nil {
		return nil, yep.Errorf(yep.CodeInvalidParams, "extension %q has no command %q (it serves: %s)", s.info.Name, p.Name,
			joinNames(s.commandOrder, func(c *command) string { return c.name }))
	}
	what := fmt.Sprintf("command %q", name)
	res, err := guard(s, what, func() (yep.CommandExecuteResult, error) { return c.h(ctx, p.Arguments) })
	if err != nil {
		if we := protocolError(ctx, err); we != nil {
			return nil, we
		}
		// Like a tool, a plain error is shown to the user as a failure.
		return yep.CommandExecuteResult{Success: false, Message: err.Error()}, nil
	}
	return res, nil
}

func (s *Server) configChanged(ctx context.Context, params json.RawMessage) (any, error) {
	if s.onConfigChanged == nil {
		return nil, yep.Errorf(yep.CodeMethodNotFound, "extension %q did not declare config (no OnConfigChanged handler); restart it to apply a new config", s.info.Name)
	}
	var p yep.ConfigChangedParams
	if err := decodeParams(params, &p); err != nil {
		return nil, s.invalidParams(yep.MethodConfigChanged, err)
	}
	restart, err := guard(s, "OnConfigChanged", func() (bool, error) { return s.onConfigChanged(ctx, p.Config) })
	if err != nil {
		return nil, s.wireError(ctx, "OnConfigChanged", err)
	}
	if restart {
		return yep.ConfigChangedResult{Status: yep.ConfigRestartRequired}, nil
	}
	return yep.ConfigChangedResult{Status: yep.ConfigOK}, nil
}

// wireError turns a handler error into a response error.
func (s *Server) wireError(ctx context.Context, what string, err error) *yep.Error {
	if we := protocolError(ctx, err); we != nil {
		return we
	}
	return yep.Errorf(yep.CodeUnclassified, "extension %q: %s: %v", s.info.Name, what, err)
}

// protocolError is the response error a handler's err stands for: the
// cancelled error once ctx has ended, a *yep.Error as it is, and nil for
// a plain error, which the caller reports its own way.
func protocolError(ctx context.Context, err error) *yep.Error {
	var we *yep.Error
	switch {
	case ctx.Err() != nil:
		return yep.ErrCancelled
	case errors.As(err, &we):
		return we
	}
	return nil
}
