package harness

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"yolop.dev/core/host"
	"yolop.dev/harness/settings"
)

// ApprovalPolicy is the [host.SessionOptions] Policy of the user's
// [approval] table: for each tool, the tightest of its [approval.tools]
// entry, its extension's [approval.extensions] entry and the risk
// threshold (see [settings.Approval.Rule]). The session applies the
// tighter of that and the tool's manifest, so an "allow" never lifts a
// manifest's approval = "always".
func ApprovalPolicy(a settings.Approval) func(t host.ToolInfo, ext, version string) string {
	return func(t host.ToolInfo, ext, _ string) string {
		return a.Rule(ext, t.Def.Name, t.Name, t.Def.Risk)
	}
}

// askEverything is the policy of a session whose [approval] table does
// not parse: every call is asked about, since the table might have
// denied it.
func askEverything(host.ToolInfo, string, string) string { return host.RuleAsk }

// sessionPolicy is a session's approval policy as settings.toml last
// said it; live config replaces it.
type sessionPolicy struct {
	p atomic.Pointer[func(host.ToolInfo, string, string) string]
}

// load reads [approval]; a malformed table makes every call ask and is
// returned as the warning to show.
func (p *sessionPolicy) load(ctx context.Context, f *settings.File) error {
	a, err := f.Approval(ctx)
	rule := ApprovalPolicy(a)
	if err != nil {
		rule = askEverything
		err = fmt.Errorf("%w; every tool call asks for approval until [approval] is fixed", err)
	}
	p.p.Store(&rule)
	return err
}

func (p *sessionPolicy) rule(t host.ToolInfo, ext, version string) string {
	return (*p.p.Load())(t, ext, version)
}

// NeedsYes is the reason a headless turn's [RunApprover] gives for a call
// it denies: the model reads it in the tool's error.
const NeedsYes = "needs approval; rerun with --yes to approve it"

// ExitApprovalNeeded is the exit status of a headless turn that ended
// with tool calls denied for want of approval ([RunApprover.Err]).
const ExitApprovalNeeded = 3

// A RunApprover is the [SessionOptions] Approve of a front-end with no
// one to ask (yolop run): with Yes it approves every call that needs
// approval, else it denies each with [NeedsYes] and remembers it. It is
// never asked about a call the user's policy denies: that is denied
// before, --yes or not. Its methods are safe for concurrent use.
type RunApprover struct {
	// Yes approves every call asked about.
	Yes bool
	// OnApproved, if set, is told of each call Yes approved, for the
	// front-end to log.
	OnApproved func(host.ApprovalRequest)

	mu     sync.Mutex
	denied []host.ApprovalRequest
}

// Approve decides one call; pass it as SessionOptions.Approve.
func (a *RunApprover) Approve(_ context.Context, r host.ApprovalRequest) (bool, string, error) {
	if a.Yes {
		if a.OnApproved != nil {
			a.OnApproved(r)
		}
		return true, "approved with --yes", nil
	}
	a.mu.Lock()
	a.denied = append(a.denied, r)
	a.mu.Unlock()
	return false, NeedsYes, nil
}

// Denied lists the calls denied for want of approval, in order.
func (a *RunApprover) Denied() []host.ApprovalRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]host.ApprovalRequest(nil), a.denied...)
}

// Err is nil when no call was denied, else an [*ApprovalNeededError]
// naming each denied tool, whose exit status is [ExitApprovalNeeded].
func (a *RunApprover) Err() error {
	d := a.Denied()
	if len(d) == 0 {
		return nil
	}
	return &ApprovalNeededError{Denied: d}
}

// An ApprovalNeededError reports the calls of a headless turn that were
// denied because they needed approval and nothing approved them.
type ApprovalNeededError struct {
	Denied []host.ApprovalRequest
}

// Error names each denied tool with what serves it (how many times, when
// more than once) and says to rerun with --yes.
func (e *ApprovalNeededError) Error() string {
	var order []string
	count := map[string]int{}
	for _, r := range e.Denied {
		k := fmt.Sprintf("%s (%s)", r.Tool, r.Who())
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	for i, k := range order {
		if count[k] > 1 {
			order[i] = fmt.Sprintf("%s ×%d", k, count[k])
		}
	}
	calls := "1 tool call needed approval and was denied"
	if len(e.Denied) > 1 {
		calls = fmt.Sprintf("%d tool calls needed approval and were denied", len(e.Denied))
	}
	return fmt.Sprintf("%s: %s; rerun with --yes to approve them", calls, strings.Join(order, ", "))
}

// ExitCode is [ExitApprovalNeeded].
func (e *ApprovalNeededError) ExitCode() int { return ExitApprovalNeeded }
