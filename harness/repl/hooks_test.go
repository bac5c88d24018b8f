package repl_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/harness/repl"
)

// guardHooks is a built-in subscribed to session_start, stop and
// pre_compact; its stop hook fails.
type guardHooks struct{ host.Base }

func (guardHooks) Name() string { return "builtin:guard" }
func (guardHooks) Hooks() []host.HookGrant {
	return []host.HookGrant{{Event: yep.HookSessionStart, Matcher: "*"}, {Event: yep.HookStop, Matcher: "*"}, {Event: yep.HookPreCompact, Matcher: "*"}}
}
func (guardHooks) FireHook(_ context.Context, sub host.HookGrant, _ yep.HookFireParams) (yep.HookFireResult, error) {
	if sub.Event == yep.HookStop {
		return yep.HookFireResult{}, errors.New("guard is broken")
	}
	return yep.HookFireResult{Decision: yep.DecisionAllow}, nil
}

// /status lists the hooks that timed out or failed, and leaves out those
// that fired cleanly or not yet (an extension's line names its unfired
// hooks; hook.report names them all as the session closes).
func TestStatusReportsHooks(t *testing.T) {
	s := host.NewSession(host.SessionOptions{Builtins: []host.Capability{guardHooks{}}})
	defer s.Close()
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.FireEvent(context.Background(), yep.HookStop, "", yep.HookPayload{})
	out := &recorder{}
	r := repl.New(repl.Options{Session: s, Out: out})
	defer r.Close()
	r.Run(context.Background(), "/status")
	ev, _ := out.take()
	if len(ev) != 1 {
		t.Fatalf("/status = %+v, want the failed stop hook alone", ev)
	}
	stop := ev[0]
	if stop.fields["hook"] != yep.HookStop || stop.fields["failures"] != 1 || stop.fields["last_error"] != "guard is broken" ||
		stop.text != "hook stop \"*\" of builtin:guard: fired=1 timeouts=0 failures=1\n  last error: guard is broken" {
		t.Errorf("stop line = %+v", stop)
	}
}

// An extension's /status line names its hooks that have not fired.
func TestStatusNamesUnfiredHooks(t *testing.T) {
	_, s := session(t)
	out := &recorder{}
	r := repl.New(repl.Options{Session: s.Session, Out: out})
	defer r.Close()
	r.Run(context.Background(), "/status")
	ev, _ := out.take()
	if len(ev) != 1 || !strings.Contains(ev[0].text, " unfired=pre_tool_use:*") {
		t.Fatalf("/status = %+v, want echo's line naming its unfired pre_tool_use hook", ev)
	}
}

// As the session closes, its hook report has a line of text per hook
// that never fired, timed out or failed.
func TestHookReportAtClose(t *testing.T) {
	s := host.NewSession(host.SessionOptions{Builtins: []host.Capability{guardHooks{}}})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.FireEvent(context.Background(), yep.HookStop, "", yep.HookPayload{})
	out := &recorder{lifecycle: true}
	r := repl.New(repl.Options{Session: s, Out: out})
	s.Close()
	r.Close()
	ev, _ := out.take()
	var report []string
	for _, e := range ev {
		if e.kind == yep.EventHookReport {
			report = append(report, e.text)
		}
	}
	want := "hooks at the end of the session:\n  stop \"*\" of builtin:guard: fired 1, failed 1: guard is broken\n  pre_compact \"*\" of builtin:guard: never fired"
	if len(report) != 1 || report[0] != want {
		t.Fatalf("hook report = %q, want %q", report, want)
	}
}
