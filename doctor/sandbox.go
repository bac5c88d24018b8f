package doctor

import (
	"context"

	"yolop.dev/core"
	"yolop.dev/transport/stdio/confine"
)

// GroupSandbox holds the checks of a native server's OS sandbox: what this
// machine enforces of it, and one probe per forbidden and declared access
// run from a process under the same rules.
const GroupSandbox = "sandbox"

// checkSandbox reports the sandbox of the grant's server (with the
// workspace filled in, as at a start) and probes it with [confine.Probe]:
// a read and a write outside the grant, a TCP connect to a port it did not
// declare and running /bin/sh must be blocked (unless the rules allow
// them), each declared path and port must work. A probe that does not
// match the rules fails the run where the rules are enforced in full; where
// this machine enforces only part (or none) of them, the status check says
// so and such a probe is a warning. A check names the launcher servers
// start through. A grant with no sandbox (WASM, or
// turned off) has no sandbox checks.
func (d *run) checkSandbox(ctx context.Context) {
	c := core.ExpandSandbox(d.g.Server.Sandbox, d.opts.Workspace)
	if c == nil {
		return
	}
	rep := confine.Check(c)
	st := Pass
	if !rep.Full() {
		st = Warn
	}
	d.r.add(GroupSandbox, "status", st, "%s (rules from %s)", rep.String(), originText(c.Origin))
	note, err := confine.LauncherNote()
	if err != nil {
		d.r.add(GroupSandbox, "launcher", Fail, "%v", err)
		return
	}
	d.r.add(GroupSandbox, "launcher", Pass, "%s", note)
	results, err := confine.Probe(ctx, c, confine.ProbeOptions{})
	if err != nil {
		d.r.add(GroupSandbox, "probe", Fail, "the sandbox could not be probed: %v", err)
		return
	}
	for _, r := range results {
		st := Pass
		if !r.OK() {
			st = Fail
			if !rep.Full() {
				st = Warn
			}
		}
		d.r.add(GroupSandbox, r.Kind, st, "%s", r.String())
	}
}

func originText(o string) string {
	switch o {
	case "":
		return "the grant"
	case "settings":
		return "the user's settings"
	default:
		return "the " + o
	}
}
