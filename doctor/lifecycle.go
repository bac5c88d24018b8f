package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
)

// The lifecycle events (session_start, user_prompt_submit, stop, …) fire at
// points of a session, not around a tool call, so doctor fires each
// declared one synthetically through a host session's own FireEvent, with
// the host's matching and on_error policy: once answered normally and once
// with the server's answer held back past a short deadline. A blocking
// event (user_prompt_submit, stop) under on_error "block" must then fail
// closed; any other event must let the session go on.

// probeToolName names the probe session's tool when no tool is involved.
const probeToolName = "doctor_probe"

// lifecyclePayload is the subject and payload of a synthetic firing of
// event, and false when the matcher selects no subject doctor can make.
func (d *run) lifecyclePayload(sub host.HookGrant) (string, yep.HookPayload, bool) {
	switch sub.Event {
	case yep.HookPostToolUseFailure:
		tool, args, ok := d.probeTarget(sub.Matcher)
		return tool, yep.HookPayload{ToolCallID: d.callID(), Args: args, Error: "yolop doctor: synthetic tool failure"}, ok
	case yep.HookUserPromptSubmit:
		return "", yep.HookPayload{Prompt: "yolop doctor: synthetic prompt"}, sub.Matcher == "*"
	case yep.HookStop:
		return "", yep.HookPayload{Message: "yolop doctor: synthetic answer"}, sub.Matcher == "*"
	}
	source := map[string]string{yep.HookSessionStart: "startup", yep.HookSessionEnd: "exit", yep.HookPreCompact: "auto", yep.HookNotification: host.NotifyIdle}[sub.Event]
	p := yep.HookPayload{Source: source}
	if sub.Event == yep.HookNotification {
		p.Message = "yolop doctor: synthetic notification"
	}
	ok, _ := matchTool(sub.Matcher, source)
	return source, p, ok && source != ""
}

func (d *run) probeLifecycle(ctx context.Context, sub host.HookGrant) {
	onErr := sub.OnError
	if onErr == "" {
		onErr = yep.HookOnErrorWarn
	}
	name := hookName(sub)
	subject, payload, ok := d.lifecyclePayload(sub)
	if !ok {
		d.r.add(GroupHook, name, Warn, "matcher %q selects no subject of a synthetic %s (the host matches it against the tool name or the payload's source; %s has %q): skipped", sub.Matcher, sub.Event, sub.Event, subject)
		return
	}
	hp := HookProbe{Event: sub.Event, Matcher: sub.Matcher, OnError: onErr, TimeoutMS: effectiveTimeoutMS(sub), Tool: subject}
	want := outProceeded
	if yep.HookBlocking(sub.Event) && onErr == yep.HookOnErrorBlock {
		want = outBlocked
	}
	defer func() {
		d.r.Hooks = append(d.r.Hooks, hp)
		for _, s := range hp.Steps {
			d.r.add(GroupHook, name+" ["+s.Condition+"]", s.Status, "%s", s.Detail)
		}
	}()
	timeout := d.lifecycleTimeout(ctx, sub, subject, payload, want)

	ps, err := d.newProbeSession(ctx, sub, probeToolName, json.RawMessage(`{}`))
	if err != nil {
		hp.Steps = append(hp.Steps, HookStep{Condition: condNormal, Outcome: outError, Status: Fail, Detail: fmt.Sprintf("the server did not start for the hook probe: %v", err)}, timeout)
		return
	}
	from := d.w.mark()
	out := ps.sess.FireEvent(ctx, sub.Event, subject, payload)
	ps.sess.Close()
	sent, dec, errText, took := d.answer(from)
	normal := HookStep{Condition: condNormal, Decision: dec, Outcome: outcomeOf(out)}
	timeoutMS := effectiveTimeoutMS(sub)
	switch {
	case !sent:
		normal.Status = Fail
		normal.Detail = fmt.Sprintf("the host never fired the subscription for a synthetic %s: the hook never fires", sub.Event)
	case dec == "" && errText != "":
		normal.Status = Fail
		normal.Detail = fmt.Sprintf("the hook answered an error on a synthetic %s (%s)", sub.Event, errText)
	case dec == "":
		normal.Status = Fail
		normal.Detail = fmt.Sprintf("the hook did not answer within its timeout_ms (%dms)", timeoutMS)
	case dec != yep.DecisionAllow && dec != yep.DecisionBlock && dec != yep.DecisionMutate:
		normal.Status = Fail
		normal.Detail = fmt.Sprintf("decision %q is not allow, block or mutate", dec)
	case out.Blocked && dec != yep.DecisionBlock:
		normal.Status = Fail
		normal.Detail = fmt.Sprintf("the server answered no decision, and under on_error block the host counts silence as a failure: it blocks every %s (%s)", sub.Event, firstLine(out.Reason))
	case took > time.Duration(timeoutMS)*time.Millisecond*8/10:
		normal.Status = Warn
		normal.Detail = fmt.Sprintf("answered %s in %s, close to its timeout_ms (%dms)", dec, dur(took), timeoutMS)
	default:
		normal.Status = Pass
		normal.Detail = fmt.Sprintf("a synthetic %s fired it: the server answered %s in %s and the host %s", sub.Event, dec, dur(took), didEvent(normal.Outcome, sub.Event))
		if len(out.Context) > 0 {
			normal.Detail += fmt.Sprintf(", with %d bytes of context", len(out.Context[0]))
		}
	}
	hp.Steps = append(hp.Steps, normal, timeout)
}

// lifecycleTimeout fires the event with the server's answer held back
// past a short deadline.
func (d *run) lifecycleTimeout(ctx context.Context, sub host.HookGrant, subject string, payload yep.HookPayload, want string) HookStep {
	return d.heldTimeout(ctx, sub, probeToolName, json.RawMessage(`{}`), want, func(ps *probeSession) (string, string) {
		out := ps.sess.FireEvent(ctx, sub.Event, subject, payload)
		return outcomeOf(out), out.Reason
	})
}

func outcomeOf(out host.HookOutcome) string {
	if out.Blocked {
		return outBlocked
	}
	return outProceeded
}

// didEvent says in words what the host did with a synthetic event.
func didEvent(outcome, event string) string {
	if outcome == outBlocked {
		return "blocked the " + event
	}
	return "went on"
}
