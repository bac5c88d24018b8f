package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/harness"
	"yolop.dev/harness/internal/echotest"
	"yolop.dev/harness/settings"
)

// appendSettings adds body to the settings.toml of cfg.
func appendSettings(t *testing.T, cfg, body string) {
	t.Helper()
	p := filepath.Join(cfg, settings.FileName)
	old, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append(old, "\n"+body...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// asked records the approval requests of a session and answers them.
type asked struct {
	mu     sync.Mutex
	reqs   []host.ApprovalRequest
	answer bool
}

func (a *asked) approve(_ context.Context, r host.ApprovalRequest) (bool, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reqs = append(a.reqs, r)
	return a.answer, "", nil
}

func (a *asked) tools() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, r := range a.reqs {
		out = append(out, r.Tool)
	}
	return out
}

func approvalSession(t *testing.T, cfg string, o harness.SessionOptions) (*harness.Session, []string) {
	t.Helper()
	ctx := context.Background()
	h, err := harness.Open(ctx, harness.Options{ConfigDir: cfg})
	if err != nil {
		t.Fatal(err)
	}
	o.NoBuiltins = true
	s, warnings := h.NewSession(ctx, o)
	t.Cleanup(s.Close)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return s, warnings
}

// TestSessionAppliesTheApprovalPolicy: the [approval] table of
// settings.toml reaches the session: an extension's "ask" puts its calls
// to SessionOptions.Approve, a tool's "deny" refuses the call without
// asking, and the tightest entry wins.
func TestSessionAppliesTheApprovalPolicy(t *testing.T) {
	cfg := echotest.Installed(t)
	appendSettings(t, cfg, "[approval.extensions]\necho = \"ask\"\n[approval.tools]\n\"echo.reverse\" = \"deny\"\n\"echo.count\" = \"allow\"\n")
	a := &asked{answer: true}
	s, warnings := approvalSession(t, cfg, harness.SessionOptions{Approve: a.approve})
	if len(warnings) != 0 {
		t.Fatalf("warnings: %q", warnings)
	}
	ctx := context.Background()
	res, err := s.CallTool(ctx, "echo", "c1", json.RawMessage(`{"text":"hi"}`), nil)
	if err != nil || res.Output != "hi" {
		t.Fatalf("echo = %+v, %v", res, err)
	}
	if got := a.tools(); !slices.Equal(got, []string{"echo"}) {
		t.Fatalf("asked about %v, want echo", got)
	}
	if r := a.reqs[0]; r.Extension != "echo" || r.Version != "0.1.0" || !strings.Contains(r.Reason, "policy") {
		t.Errorf("request = %+v", r)
	}
	// count: the tool's allow does not loosen the extension's ask.
	if _, err := s.CallTool(ctx, "count", "c2", json.RawMessage(`{"n":1,"delay_ms":1}`), nil); err != nil {
		t.Fatal(err)
	}
	// reverse: the tool's deny, without a question.
	_, err = s.CallTool(ctx, "reverse", "c3", json.RawMessage(`{"text":"abc"}`), nil)
	var de *host.ApprovalDeniedError
	if !errors.As(err, &de) || de.By != yep.ApprovalByPolicy || !strings.Contains(err.Error(), "settings.toml") {
		t.Fatalf("reverse = %v; want a policy denial", err)
	}
	if got := a.tools(); !slices.Equal(got, []string{"echo", "count"}) {
		t.Fatalf("asked about %v, want echo and count only", got)
	}
	if st := s.Stats(); len(st) != 1 || st[0].Calls != 2 {
		t.Errorf("echo's calls = %+v; want 2 (reverse never reached it)", st)
	}
}

// TestMalformedApprovalAsksEverything: an [approval] table that does not
// parse is a warning naming the key, and every tool call is asked about
// (fail closed), not run as if there were no policy.
func TestMalformedApprovalAsksEverything(t *testing.T) {
	cfg := echotest.Installed(t)
	appendSettings(t, cfg, "[approval]\nrisk = \"severe\"\n")
	a := &asked{answer: false}
	s, warnings := approvalSession(t, cfg, harness.SessionOptions{Approve: a.approve})
	if len(warnings) != 1 || !strings.Contains(warnings[0], "approval.risk") || !strings.Contains(warnings[0], "every tool call asks") {
		t.Fatalf("warnings = %q", warnings)
	}
	_, err := s.CallTool(context.Background(), "echo", "c1", json.RawMessage(`{"text":"hi"}`), nil)
	if !errors.Is(err, host.ErrApprovalDenied) {
		t.Fatalf("echo = %v; want it asked and denied", err)
	}
	if got := a.tools(); !slices.Equal(got, []string{"echo"}) {
		t.Fatalf("asked about %v", got)
	}
}

// TestRunApprover: a headless turn's approver denies what needs approval
// with the advice to rerun with --yes and names each denied tool in its
// error (exit status 3); with yes it approves, and reports each approval.
// A policy deny is never its to override.
func TestRunApprover(t *testing.T) {
	cfg := echotest.Installed(t)
	appendSettings(t, cfg, "[approval.extensions]\necho = \"ask\"\n[approval.tools]\n\"echo.reverse\" = \"deny\"\n")
	ctx := context.Background()

	no := &harness.RunApprover{}
	s, _ := approvalSession(t, cfg, harness.SessionOptions{Approve: no.Approve})
	_, err := s.CallTool(ctx, "echo", "c1", json.RawMessage(`{"text":"hi"}`), nil)
	if !errors.Is(err, host.ErrApprovalDenied) || !strings.Contains(err.Error(), harness.NeedsYes) {
		t.Fatalf("echo without yes = %v", err)
	}
	s.CallTool(ctx, "echo", "c2", json.RawMessage(`{"text":"again"}`), nil)
	s.CallTool(ctx, "count", "c3", json.RawMessage(`{"n":1}`), nil)
	if len(no.Denied()) != 3 {
		t.Fatalf("denied = %+v", no.Denied())
	}
	err = no.Err()
	if harness.ExitStatus(err) != 3 || err.Error() != "3 tool calls needed approval and were denied: echo (echo@0.1.0) ×2, count (echo@0.1.0); rerun with --yes to approve them" {
		t.Fatalf("Err() = %v (exit status %d)", err, harness.ExitStatus(err))
	}
	if st := s.Stats(); st[0].Calls != 0 {
		t.Errorf("echo ran %d calls; want none", st[0].Calls)
	}

	var approved []string
	yes := &harness.RunApprover{Yes: true, OnApproved: func(r host.ApprovalRequest) { approved = append(approved, r.Tool+" "+r.Who()) }}
	s2, _ := approvalSession(t, cfg, harness.SessionOptions{Approve: yes.Approve})
	res, err := s2.CallTool(ctx, "echo", "c1", json.RawMessage(`{"text":"hi"}`), nil)
	if err != nil || res.Output != "hi" {
		t.Fatalf("echo with yes = %+v, %v", res, err)
	}
	if _, err := s2.CallTool(ctx, "reverse", "c2", json.RawMessage(`{"text":"abc"}`), nil); !errors.Is(err, host.ErrApprovalDenied) {
		t.Fatalf("reverse with yes = %v; want the policy's deny", err)
	}
	if !slices.Equal(approved, []string{"echo echo@0.1.0"}) || yes.Err() != nil || len(yes.Denied()) != 0 {
		t.Fatalf("approved %v, denied %v, err %v", approved, yes.Denied(), yes.Err())
	}
}

// TestApprovalPolicyIsLive: with live config, an edit of [approval]
// applies to the session's next call; a malformed edit is a warning event
// and every call is asked about from then on.
func TestApprovalPolicyIsLive(t *testing.T) {
	cfg := echotest.Installed(t)
	a := &asked{answer: false}
	s, _ := approvalSession(t, cfg, harness.SessionOptions{Approve: a.approve, LiveConfig: true})
	ctx := context.Background()
	if _, err := s.CallTool(ctx, "echo", "c1", json.RawMessage(`{"text":"hi"}`), nil); err != nil {
		t.Fatalf("echo before the edit: %v", err)
	}
	warned := make(chan string, 1)
	defer s.Subscribe(func(ev host.Event) {
		if w, ok := ev.Data.(yep.WarningData); ok && strings.Contains(w.Message, "approval.risk") {
			select {
			case warned <- w.Message:
			default:
			}
		}
	})()
	appendSettings(t, cfg, "[approval]\nrisk = \"severe\"\n")
	if w := <-warned; !strings.Contains(w, "every tool call asks") {
		t.Fatalf("warning = %q", w)
	}
	if _, err := s.CallTool(ctx, "echo", "c2", json.RawMessage(`{"text":"hi"}`), nil); !errors.Is(err, host.ErrApprovalDenied) {
		t.Fatalf("echo after the edit = %v; want it asked and denied", err)
	}
	if got := a.tools(); !slices.Equal(got, []string{"echo"}) {
		t.Fatalf("asked about %v", got)
	}
}

// TestRuleNamesMatchTheHost: settings.toml's rules are the host's.
func TestRuleNamesMatchTheHost(t *testing.T) {
	if settings.RuleAllow != host.RuleAllow || settings.RuleAsk != host.RuleAsk || settings.RuleDeny != host.RuleDeny {
		t.Fatal("settings' rule names differ from core/host's")
	}
}
