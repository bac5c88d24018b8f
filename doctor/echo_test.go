package doctor_test

import (
	"strings"
	"testing"

	"yolop.dev/doctor"
)

// TestRunPassesTheEchoExample runs the doctor over core/examples/echo, its
// server built by go build into the package's bin/, as an author's test
// does before the extension ships.
func TestRunPassesTheEchoExample(t *testing.T) {
	rep := runDoctor(t, echoPackageT(t), doctor.Options{})
	mustPass(t, rep)
	if rep.Extension != "echo" || rep.Version != "0.1.0" || rep.Protocol == "" {
		t.Errorf("report names %s %s, protocol %q", rep.Extension, rep.Version, rep.Protocol)
	}
	for _, c := range []struct{ group, name string }{
		{doctor.GroupProtocol, "server"},
		{doctor.GroupHandshake, "initialize"},
		{doctor.GroupClamp, "grant"},
		{doctor.GroupPrompt, "static"},
		{doctor.GroupTool, "tool echo"},
		{doctor.GroupTool, "tool count"},
		{doctor.GroupCommand, "command greet"},
		{doctor.GroupCancel, "tool count"},
		{doctor.GroupCancel, "after cancel"},
		{doctor.GroupShutdown, "shutdown"},
		{doctor.GroupShutdown, "exit"},
		{doctor.GroupHook, "hook pre_tool_use * [normal]"},
		{doctor.GroupHook, "hook pre_tool_use * [timeout]"},
		{doctor.GroupHook, "hook pre_tool_use * [crash]"},
		{doctor.GroupHook, "hook pre_tool_use * [after-crash]"},
		{doctor.GroupSchema, "messages"},
	} {
		if got := check(t, rep, c.group, c.name); !passed(got) {
			t.Errorf("%s %s = %s: %s", c.group, c.name, got.Status, got.Detail)
		}
	}
	// The match-all hook is worth a warning, never a failure.
	if c := check(t, rep, doctor.GroupClamp, "warning"); c.Status != doctor.Warn || !strings.Contains(c.Detail, `("*")`) {
		t.Errorf("match-all hook: %+v", c)
	}
	// count streams, so it is the one cancelled; depending on timing the
	// server aborted it (-32800), had just finished it when the cancel
	// came, or (on a loaded machine) finished it before the host could
	// send the cancel at all.
	if c := check(t, rep, doctor.GroupCancel, "tool count"); !strings.Contains(c.Detail, "-32800") && !strings.Contains(c.Detail, `"cancelled": false`) &&
		!strings.Contains(c.Detail, "finished before it could be cancelled") {
		t.Errorf("cancel: %s", c.Detail)
	}
	// Every decision is shown; warn proceeds through the injected faults.
	if len(rep.Hooks) != 1 || len(rep.Hooks[0].Steps) != 4 {
		t.Fatalf("hook probes = %+v", rep.Hooks)
	}
	for _, s := range rep.Hooks[0].Steps {
		if s.Outcome != "proceeded" {
			t.Errorf("on_error warn, %s: the host %s the call", s.Condition, s.Outcome)
		}
	}
	if d := rep.Hooks[0].Steps[0].Decision; d != "allow" {
		t.Errorf("normal decision = %q", d)
	}
	if rep.Messages < 20 {
		t.Errorf("only %d messages validated", rep.Messages)
	}

	// The table for people says the same.
	if out := table(rep); !strings.Contains(out, "OK: ") || !strings.Contains(out, "pre_tool_use * → echo") {
		t.Fatalf("table:\n%s", out)
	}
}

// TestRunFailsAWideningSDKServer runs the echo example's manifest with an
// SDK-built server that also serves a tool the manifest does not declare.
func TestRunFailsAWideningSDKServer(t *testing.T) {
	rep := runDoctor(t, sdkPackage(t, "widen"), doctor.Options{})
	mustFail(t, rep)
	if c := check(t, rep, doctor.GroupClamp, "tool rm_rf"); c.Status != doctor.Fail || !strings.Contains(c.Detail, "not declared in the approved manifest") {
		t.Fatalf("widened tool: %+v", c)
	}
	if rep.Failed != 1 {
		t.Errorf("%d failed checks; want only the widened tool:\n%s", rep.Failed, table(rep))
	}
	// The refused tool is never called; the approved ones still work.
	for _, name := range []string{"tool echo", "tool count"} {
		if c := check(t, rep, doctor.GroupTool, name); c.Status != doctor.Pass {
			t.Errorf("%s: %+v", name, c)
		}
	}
	if !strings.Contains(table(rep), "FAILED: ") {
		t.Errorf("table:\n%s", table(rep))
	}
}
