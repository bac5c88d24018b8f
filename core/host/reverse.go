package host

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	yjson "yolop.dev/core/internal/json"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/yep"
)

// reverseHandler serves the server-to-host methods, gated by the clamped
// opt-ins of process p.
func (e *Extension) reverseHandler(p *process) jsonrpc.Handler {
	return jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		c := p.contrib
		switch req.Method {
		case yep.MethodLog:
			var l yep.LogParams
			if yjson.Unmarshal(req.Params, &l) == nil && e.allowServerLog(p) {
				e.logFromServer(l)
			}
			return nil, nil
		case yep.MethodStatusChanged:
			if c == nil || !c.status {
				req.Conn.ReportViolation("dropped status/changed: the extension did not declare status in its manifest")
				return nil, nil
			}
			var s yep.StatusChangedParams
			if yjson.Unmarshal(req.Params, &s) != nil {
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
			if err := yjson.Unmarshal(req.Params, &q); err != nil {
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

// allowServerLog reports whether one more of p's log messages may be
// logged now: the same rate limit as protocol warnings, so a server's
// flood of log notifications cannot flood the host's log. The messages
// held back are counted into a "suppressed N" line, logged before the
// next one let through and when the process ends.
func (e *Extension) allowServerLog(p *process) bool {
	p.logMu.Lock()
	defer p.logMu.Unlock()
	if !p.logs.Allow(time.Now()) {
		return false
	}
	e.logSuppressed(p)
	return true
}

// flushServerLogs logs how many of p's log messages the rate limit held
// back since the last one logged.
func (e *Extension) flushServerLogs(p *process) {
	p.logMu.Lock()
	defer p.logMu.Unlock()
	e.logSuppressed(p)
}

// logSuppressed is flushServerLogs with p.logMu held.
func (e *Extension) logSuppressed(p *process) {
	if n := p.logs.TakeSuppressed(); n > 0 {
		e.log.Warn(fmt.Sprintf("suppressed %d log messages from the server (rate limit)", n), "suppressed", n)
	}
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
