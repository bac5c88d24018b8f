package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
)

// CannedAnswer is what doctor answers to a ui/ask question that offers no
// options; a question with options gets its first option.
const CannedAnswer = "yolop doctor's answer"

// cannedAsk answers every ui/ask as a user would, at once: the first
// option of a selector, else [CannedAnswer].
type cannedAsk struct{}

func (cannedAsk) Ask(_ context.Context, _ string, q yep.UIAskParams) (yep.UIAskResult, error) {
	if len(q.Options) > 0 {
		return yep.UIAskResult{Answer: q.Options[0]}, nil
	}
	return yep.UIAskResult{Answer: CannedAnswer}, nil
}

// exchange finds the first request for method travelling in dir from
// sequence number from on, and its answer; either is nil when not seen.
func (d *run) exchange(from int, dir direction, method string) (req, resp *wireMsg) {
	req, _ = d.w.waitFor(doneCtx(), from, func(m *wireMsg) bool {
		return m.dir == dir && m.isRequest() && m.method == method
	})
	if req != nil {
		resp, _ = d.w.response(doneCtx(), req.seq, req.conn, 1-dir, req.id)
	}
	return req, resp
}

// sent returns every message for method the server sent from sequence
// number from on.
func (d *run) sent(from int, method string) []*wireMsg {
	var out []*wireMsg
	for _, m := range d.w.since(from) {
		if m.dir == toHost && m.method == method {
			out = append(out, m)
		}
	}
	return out
}

// schemaFault says why m does not conform, or "" when it does.
func schemaFault(m *wireMsg) string {
	if m == nil || len(m.problems) == 0 {
		return ""
	}
	return fmt.Sprintf("%s, which does not match schema/yep/v1/schema.json (%s)", excerpt(m.raw), strings.Join(m.problems, "; "))
}

// checkCommands runs every command the manifest declares and the server
// serves once, with its example arguments or none, and grades the answer.
func (d *run) checkCommands(ctx context.Context) {
	served := d.ext.Commands()
	for _, c := range d.g.Commands {
		if !slices.ContainsFunc(served, func(s host.CommandGrant) bool { return s.Name == c.Name }) {
			continue // warned about by the clamp check
		}
		name := "command " + c.Name
		args := d.commandExamples[c.Name]
		run := fmt.Sprintf("/%s:%s with no arguments", d.g.Name, c.Name)
		if args != "" {
			run = fmt.Sprintf("/%s:%s with the example %q", d.g.Name, c.Name, args)
		}
		from := d.w.mark()
		cctx, cancel := context.WithTimeout(ctx, d.opts.CallTimeout)
		start := time.Now()
		res, err := d.ext.ExecuteCommand(cctx, c.Name, args)
		took := time.Since(start)
		cancel()
		_, resp := d.exchange(from, toServer, yep.MethodCommandExecute)
		switch {
		case err != nil && cctx.Err() == context.DeadlineExceeded:
			d.r.add(GroupCommand, name, Fail, "%s got no answer within %s", run, d.opts.CallTimeout)
		case schemaFault(resp) != "":
			d.r.add(GroupCommand, name, Fail, "%s was answered %s. Answer {\"success\": true|false, \"message\": \"…\"}", run, schemaFault(resp))
		case err != nil:
			d.r.add(GroupCommand, name, Fail, "%s failed: %v. A command answers {\"success\": false, \"message\": \"…\"} to tell the user it did not work", run, err)
		case !res.Success:
			d.r.add(GroupCommand, name, Warn, "%s answered success false: %s", run, clip(res.Message))
		default:
			d.r.add(GroupCommand, name, Pass, "%s → %s in %s", run, clip(res.Message), dur(took))
		}
	}
}

// checkConfig pushes the current config back as a session pushes a
// changed one, when the manifest has a config schema or the server
// declares config, and grades the answer.
func (d *run) checkConfig(ctx context.Context) {
	declares := d.init.Capabilities.Has(yep.CapConfig)
	if len(d.g.ConfigSchema) == 0 && !declares {
		return
	}
	const name = "config/changed"
	if d.w.live() == nil {
		d.r.add(GroupConfig, name, Fail, "no server is running to push the config to (it exited during the earlier checks)")
		return
	}
	cfg := d.g.Config
	if len(cfg) == 0 {
		cfg = json.RawMessage(`{}`)
	}
	from := d.w.mark()
	cctx, cancel := context.WithTimeout(ctx, d.opts.CallTimeout)
	restarted, err := d.ext.UpdateConfig(cctx, cfg)
	timedOut := cctx.Err() == context.DeadlineExceeded
	cancel()
	if !declares {
		if err != nil {
			d.r.add(GroupConfig, name, Fail, "the server does not declare config, so the host restarts it to apply a changed config; that restart failed: %v", err)
			return
		}
		d.r.add(GroupConfig, name, Pass, "the server does not declare config: the host restarted it to apply the config %s", clip(string(cfg)))
		return
	}
	req, resp := d.exchange(from, toServer, yep.MethodConfigChanged)
	const want = `Answer {"status": "ok"} once the config is applied, or {"status": "restart-required"}`
	switch {
	case req == nil:
		d.r.add(GroupConfig, name, Fail, "the host could not send config/changed: %v", err)
	case resp == nil && timedOut:
		d.r.add(GroupConfig, name, Fail, "the server did not answer config/changed within %s. %s", d.opts.CallTimeout, want)
	case resp == nil:
		d.r.add(GroupConfig, name, Fail, "the server did not answer config/changed: %v", err)
	case schemaFault(resp) != "":
		d.r.add(GroupConfig, name, Fail, "the server answered config/changed %s. %s", schemaFault(resp), want)
	case resp.err != nil:
		d.r.add(GroupConfig, name, Fail, "the server declares config but answered config/changed with an error: %s. %s", resp.err.Error(), want)
	case err != nil:
		d.r.add(GroupConfig, name, Fail, "the server answered restart-required, and the restart failed: %v", err)
	case restarted:
		d.r.add(GroupConfig, name, Pass, "pushed the config %s back: the server answered restart-required and the host restarted it", clip(string(cfg)))
	default:
		d.r.add(GroupConfig, name, Pass, "pushed the config %s back: the server answered ok", clip(string(cfg)))
	}
}

// checkUIAsk grades every ui/ask the server sent so far (during the tool
// calls, which doctor answered with canned answers), when the manifest
// declares ui_ask or the server asked anyway.
func (d *run) checkUIAsk() {
	const name = "ui/ask"
	asks := d.sent(0, yep.MethodUIAsk)
	if len(asks) == 0 {
		if d.g.UIAsk {
			d.r.add(GroupUIAsk, name, Warn, "ui_ask is declared, but no tool call with its example asked anything, so doctor could not answer one. Give a tool that asks an \"example\" in plugin.json")
		}
		return
	}
	var answered []string
	for _, a := range asks {
		if f := schemaFault(a); f != "" {
			d.r.add(GroupUIAsk, name, Fail, "the server asked %s. Send {\"prompt\": \"…\"} with optional placeholder, secret and options", f)
			return
		}
		resp, _ := d.w.response(doneCtx(), a.seq, a.conn, toServer, a.id)
		var q yep.UIAskParams
		_ = json.Unmarshal(a.params, &q)
		switch {
		case resp == nil:
			continue // the run ended before the host answered
		case resp.err != nil && resp.err.Code == yep.CodeNotPermitted:
			how := "declare \"ui_ask\": true in plugin.json (users re-approve on update) and \"ui_ask\" in initialize's capabilities"
			if d.g.UIAsk {
				how = "add \"ui_ask\" to the capabilities the server declares in initialize"
			}
			d.r.add(GroupUIAsk, name, Fail, "the host refused the server's question %s: %s. The server did not declare ui_ask; %s", clip(q.Prompt), resp.err.Error(), how)
			return
		case resp.err != nil:
			d.r.add(GroupUIAsk, name, Fail, "the host refused the server's question %s: %s", excerpt(a.raw), resp.err.Error())
			return
		}
		var r yep.UIAskResult
		_ = json.Unmarshal(resp.result, &r)
		if r.Cancelled {
			answered = append(answered, fmt.Sprintf("%s (answered cancelled: another question was open)", clip(q.Prompt)))
			continue
		}
		answered = append(answered, fmt.Sprintf("%s (answered %q)", clip(q.Prompt), r.Answer))
	}
	if len(answered) == 0 {
		d.r.add(GroupUIAsk, name, Warn, "the server asked %s, but the run ended before the host answered", times(len(asks)))
		return
	}
	const maxListed = 3
	more := ""
	if len(answered) > maxListed {
		more = fmt.Sprintf(" and %d more", len(answered)-maxListed)
		answered = answered[:maxListed]
	}
	d.r.add(GroupUIAsk, name, Pass, "the server asked during its tool calls: %s%s; the tool calls then finished", strings.Join(answered, ", "), more)
}

// checkStatus grades every status/changed the server sent so far, when
// the manifest declares status or the server sent one anyway.
func (d *run) checkStatus() {
	const name = "status/changed"
	sent := d.sent(0, yep.MethodStatusChanged)
	if len(sent) == 0 {
		if d.g.Status {
			d.r.add(GroupStatus, name, Warn, "status is declared, but the server sent no status/changed during the handshake, the tool calls and the commands, so there was nothing to check")
		}
		return
	}
	for _, m := range sent {
		if f := schemaFault(m); f != "" {
			d.r.add(GroupStatus, name, Fail, "the server sent %s. Send {\"text\": \"…\"} (empty text clears the status)", f)
			return
		}
	}
	// The host takes status/changed only when both the manifest and the
	// handshake declare status.
	switch {
	case !d.g.Status:
		d.r.add(GroupStatus, name, Fail, "the server sent status/changed %s and the host drops every one: plugin.json does not declare \"status\": true (users re-approve on update)", times(len(sent)))
		return
	case !d.init.Capabilities.Has(yep.CapStatus):
		d.r.add(GroupStatus, name, Fail, "the server sent status/changed %s and the host drops every one: the server did not declare status in initialize's capabilities; add \"status\" to them", times(len(sent)))
		return
	}
	var last yep.StatusChangedParams
	_ = json.Unmarshal(sent[len(sent)-1].params, &last)
	d.r.add(GroupStatus, name, Pass, "the server sent status/changed %s; the host shows the last, %s", times(len(sent)), clip(last.Text))
}

// times says "once" or "n times".
func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}
