package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"yolop.dev/core/yep"
)

// Lifecycle hook events: session_start, session_end, user_prompt_submit,
// stop, pre_compact, notification and post_tool_use_failure fire through
// hook/fire with the subscription shape of the tool events (event,
// matcher, timeout_ms, on_error), clamped at the handshake like them. Any
// [Capability] whose Hooks lists a subscription is fired, so a front-end
// can bring hooks of its own (commands run as hooks, say) by adding a
// capability that implements FireHook.

// A HookOutcome is what came of firing one event's subscriptions.
type HookOutcome struct {
	// Blocked says a subscription blocked, or failed under on_error
	// "block". Only the blocking events (see [yep.HookBlocking]) block;
	// the first block wins and the rest of the subscriptions do not fire.
	Blocked bool
	// Capability names the capability that blocked.
	Capability string
	// Reason is the block's reason, never empty when Blocked.
	Reason string
	// Context is the text the subscriptions added (a result's context),
	// in harness order, empty texts left out.
	Context []string
}

// FireEvent fires every subscription to event whose matcher matches
// subject, in harness order, with payload, and returns what came of them.
// subject is the tool's name for a tool event and the payload's source for
// a lifecycle event ("" when the event has none: only "*" matches it).
// For post_tool_use_failure the subject also goes as hook/fire's toolName.
//
// A subscription that fails — times out, errors, its server crashed or
// answered no known decision — counts as its on_error: "warn" logs and
// goes on, "block" blocks a blocking event (it fails closed). Under
// on_error "block" a blocking event's subscription that answers no
// decision at all fails too: consent is never assumed from silence. A
// subscription of a non-blocking event cannot block; its failure is
// logged and reported.
//
// Every firing counts in the session's hook report (see
// [Session.HookReport]). A cancelled ctx stops the firing; a blocking
// event then reports Blocked with ctx's error as the reason.
func (s *Session) FireEvent(ctx context.Context, event, subject string, payload yep.HookPayload) HookOutcome {
	var out HookOutcome
	targets := s.subscriptions(event, subject)
	if len(targets) == 0 {
		return out
	}
	blocking := yep.HookBlocking(event)
	s.mu.Lock()
	turn, span := s.turn, s.span
	s.mu.Unlock()
	if span.traceID == "" {
		span.traceID = NewTraceID()
	}
	tool := toolSpan{turn: span, spanID: NewSpanID(), under: parentSpan(ctx)}
	tool.parent = TraceParent(tool.turn.traceID, tool.spanID, s.traced())
	tool.observed = s.traced() || s.hasSubscribers()
	params := yep.HookFireParams{Event: event, Payload: mustJSON(payload), TraceParent: tool.parent}
	if yep.HookToolEvent(event) {
		params.ToolName = subject
	}
	for _, h := range targets {
		p := params
		p.Matcher = h.sub.Matcher
		res, err := s.fireHook(ctx, h, tool, turn, p)
		if err == nil && failsClosedOnSilence(h.sub) && res.Decision == "" {
			err = newError(ErrHookDecision, nil, "hook %s of %s answered no decision", event, h.cap.Name())
			s.hooks.note(h, err)
		}
		if err != nil {
			if ctx.Err() != nil {
				if blocking {
					out.Blocked, out.Capability, out.Reason = true, h.cap.Name(), ctx.Err().Error()
				}
				return out
			}
			if blocking && h.sub.OnError == yep.HookOnErrorBlock {
				s.log.Warn("blocking hook failed; failing closed", "event", event, "capability", h.cap.Name(), "error", err)
				out.Blocked, out.Capability = true, h.cap.Name()
				out.Reason = fmt.Sprintf("hook failed and its on_error is block: %v", err)
				return out
			}
			s.log.Warn("hook failed; continuing", "event", event, "capability", h.cap.Name(), "on_error", h.sub.OnError, "error", err)
			continue
		}
		if c := strings.TrimSpace(res.Context); c != "" {
			out.Context = append(out.Context, c)
		}
		if res.Decision == yep.DecisionBlock && blocking {
			out.Blocked, out.Capability, out.Reason = true, h.cap.Name(), res.Reason
			if out.Reason == "" {
				out.Reason = "no reason given"
			}
			return out
		}
	}
	return out
}

// failsClosedOnSilence says a subscription's answer without a decision is
// a failure: a lifecycle event that blocks, under on_error "block". (The
// tool events keep YEP 1.0's rule: a missing decision means allow.)
func failsClosedOnSilence(sub HookGrant) bool {
	return sub.OnError == yep.HookOnErrorBlock && yep.HookBlocking(sub.Event) && !yep.HookToolEvent(sub.Event)
}

// fireSessionStart fires session_start once, as the session starts, and
// keeps the context its subscriptions add for the system prompt's
// dynamic segment.
func (s *Session) fireSessionStart(ctx context.Context) {
	out := s.FireEvent(ctx, yep.HookSessionStart, "startup", yep.HookPayload{Source: "startup"})
	if len(out.Context) == 0 {
		return
	}
	s.hooks.mu.Lock()
	s.hooks.startContext = strings.Join(out.Context, "\n\n")
	s.hooks.mu.Unlock()
}

// SessionContext returns the context session_start hooks added, which
// [Session.SystemPrompt] puts in the dynamic segment.
func (s *Session) SessionContext() string {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	return s.hooks.startContext
}

// endHooks fires session_end and reports as hook.report the
// subscriptions that never fired, timed out or failed, when there are
// any. The firing is bounded by the hooks' own timeouts.
func (s *Session) endHooks() {
	if len(s.HookReport()) == 0 {
		return
	}
	s.FireEvent(context.Background(), yep.HookSessionEnd, "exit", yep.HookPayload{Source: "exit"})
	if problems := HookProblems(s.HookReport()); len(problems) > 0 {
		s.Emit(Event{Type: yep.EventHookReport, Data: yep.HookReportData{Hooks: problems}})
	}
}

// HookReport lists every hook subscription of the session's capabilities,
// in harness order, with what came of it so far: how often it fired,
// timed out and failed. A front-end shows it in /status; as the session
// closes, the subscriptions that never fired, timed out or failed go out
// as hook.report (see [HookProblems]).
func (s *Session) HookReport() []yep.HookStats {
	s.mu.Lock()
	caps := s.caps
	s.mu.Unlock()
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	var out []yep.HookStats
	for _, c := range caps {
		for _, h := range c.Hooks() {
			st := s.hooks.stats[hookKey{c.Name(), h.Event, h.Matcher}]
			st.Event, st.Matcher, st.Capability = h.Event, h.Matcher, c.Name()
			if e, ok := c.(*Extension); ok {
				st.Extension = e.ExtName()
			}
			out = append(out, st)
		}
	}
	return out
}

// HookProblems keeps the subscriptions of a report that never fired, timed
// out or failed.
func HookProblems(report []yep.HookStats) []yep.HookStats {
	out := []yep.HookStats{}
	for _, st := range report {
		if st.Fired == 0 || st.Timeouts > 0 || st.Failures > 0 {
			out = append(out, st)
		}
	}
	return out
}

// hookLedger counts a session's hook firings.
type hookLedger struct {
	mu           sync.Mutex
	stats        map[hookKey]yep.HookStats
	startContext string
}

type hookKey struct{ capability, event, matcher string }

// fired counts one firing of h; note counts its failure.
func (l *hookLedger) fired(h hookTarget, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := hookKey{h.cap.Name(), h.sub.Event, h.sub.Matcher}
	if l.stats == nil {
		l.stats = map[hookKey]yep.HookStats{}
	}
	st := l.stats[k]
	st.Fired++
	l.stats[k] = st
	l.failLocked(k, err)
}

func (l *hookLedger) note(h hookTarget, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failLocked(hookKey{h.cap.Name(), h.sub.Event, h.sub.Matcher}, err)
}

func (l *hookLedger) failLocked(k hookKey, err error) {
	if err == nil {
		return
	}
	if l.stats == nil {
		l.stats = map[hookKey]yep.HookStats{}
	}
	st := l.stats[k]
	if errors.Is(err, ErrHookTimeout) || errors.Is(err, context.DeadlineExceeded) {
		st.Timeouts++
	} else {
		st.Failures++
	}
	st.LastError = err.Error()
	l.stats[k] = st
}

// fireFailure fires post_tool_use_failure for a tool call that failed or
// was interrupted, with its error. It fires even when ctx is cancelled
// (the interruption is what it reports), bounded by the hooks' timeouts.
func (s *Session) fireFailure(ctx context.Context, tool, callID string, args []byte, reason string) {
	s.FireEvent(context.WithoutCancel(ctx), yep.HookPostToolUseFailure, tool, yep.HookPayload{ToolCallID: callID, Args: args, Error: reason})
}

// notifyAsk fires notification as a question is put to the user: the
// agent waits for them. Its source is "ask".
func (s *Session) notifyAsk(ctx context.Context, ext, question string) {
	msg := question
	if ext != "" {
		msg = ext + " asks: " + question
	}
	s.FireEvent(ctx, yep.HookNotification, NotifyAsk, yep.HookPayload{Source: NotifyAsk, Message: msg})
}

// Sources of notification: what the agent waits for the user to do.
const (
	// NotifyAsk: a question (an approval, an extension's ui/ask) is put
	// to the user.
	NotifyAsk = "ask"
	// NotifyIdle: the turn ended and the agent waits for the next
	// message.
	NotifyIdle = "idle"
)
