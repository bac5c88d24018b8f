package host

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"yolop.dev/core"
	"yolop.dev/core/internal/leakcheck"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/sdk"
	"yolop.dev/core/transporttest"
	"yolop.dev/core/yep"
)

// checkErr fails unless err reads exactly want and matches every target.
func checkErr(t *testing.T, what string, err error, want string, targets ...error) {
	t.Helper()
	if err == nil || err.Error() != want {
		t.Errorf("%s: err = %v, want %q", what, err, want)
		return
	}
	for _, target := range targets {
		if !errors.Is(err, target) {
			t.Errorf("%s: err = %v does not match %v", what, err, target)
		}
	}
}

// noREPLHints fails when an error names a front-end's command: core does
// not know them, a front-end adds its own hints by matching sentinels.
func noREPLHints(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, cmd := range []string{"/tools", "/reload", "/status", "/enable", "/help", "/call"} {
		if strings.Contains(err.Error(), cmd) {
			t.Errorf("err = %v names the front-end command %s", err, cmd)
		}
	}
}

// TestLookupAndApprovalErrors: a missing tool, command or extension, a
// tool the manifest does not approve and one the server does not serve
// each fail with their sentinel and a message that names them.
func TestLookupAndApprovalErrors(t *testing.T) {
	leakcheck.Check(t)
	g := Grant{Name: "x", ProtocolVersion: "1.0", Tools: []ToolGrant{{Name: "served"}, {Name: "unserved"}}, Commands: []CommandGrant{{Name: "go"}}}
	s := newMemSession(t, SessionOptions{Grants: []Grant{g}}, map[string]transporttest.Server{
		"x": sdkServer(func(s *sdk.Server) {
			s.Tool("served", func(context.Context, *sdk.ToolCall) (yep.ToolResult, error) { return yep.ToolResult{Output: "ok"}, nil })
			s.Command("go", "", func(context.Context, string) (yep.CommandExecuteResult, error) {
				return yep.CommandExecuteResult{Success: true}, nil
			})
		}),
	})
	ctx := context.Background()
	e, _ := s.Extension("x")

	_, err := s.CallTool(ctx, "nope", "1", nil, nil)
	checkErr(t, "session tool", err, `no tool "nope" in this session`, ErrNoSuchTool)
	noREPLHints(t, err)

	_, err = e.CallTool(ctx, ToolCall{Name: "steal_keys"}, nil)
	checkErr(t, "unapproved tool", err, `extension "x" has no approved tool "steal_keys"`, ErrToolNotApproved)

	if res, err := s.CallTool(ctx, "served", "2", nil, nil); err != nil || res.Output != "ok" {
		t.Fatalf("served = %+v, %v", res, err)
	}
	_, err = s.CallTool(ctx, "unserved", "3", nil, nil)
	checkErr(t, "unserved tool", err, `extension "x" does not serve tool "unserved" (its server declared fewer tools than its manifest)`, ErrToolNotServed)

	_, err = s.ExecuteCommand(ctx, "x:nope", "")
	checkErr(t, "extension command", err, `extension "x" has no command "nope"`, ErrNoSuchCommand)
	_, err = s.ExecuteCommand(ctx, "y:go", "")
	checkErr(t, "command of no extension", err, `no command "y:go" in this session`, ErrNoSuchCommand)
	_, err = s.ExecuteCommand(ctx, "go", "")
	checkErr(t, "unqualified command", err, `no command "go" in this session`, ErrNoSuchCommand)

	err = s.Reload(ctx, "y")
	checkErr(t, "reload", err, `no extension "y" in this session`, ErrNoSuchExtension)

	e.Close()
	err = e.Start(ctx)
	checkErr(t, "closed", err, `extension "x": extension closed`, ErrExtensionClosed)
}

// TestOffAndDegradedErrors: calls on an extension left off or degraded
// fail with its sentinel and the cause, from the call that made it so
// onwards; a reload clears a degraded state.
func TestOffAndDegradedErrors(t *testing.T) {
	leakcheck.Check(t)
	major2 := rawServer(func(ctx context.Context, req *jsonrpc.Request, _ func(error)) (any, error) {
		if req.Method == yep.MethodInitialize {
			return yep.InitializeResult{ProtocolVersion: "2.0"}, nil
		}
		return nil, nil
	})
	failing := func(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
		_, _ = bufio.NewReader(stdin).ReadString('\n') // initialize
		return errors.New("fatal: cannot initialize")
	}
	tools := []ToolGrant{{Name: "t"}}
	s := newMemSession(t, SessionOptions{Grants: []Grant{
		{Name: "new", ProtocolVersion: "1.0", Tools: tools},
		{Name: "broken", ProtocolVersion: "1.0", Tools: []ToolGrant{{Name: "u"}}},
	}}, map[string]transporttest.Server{"new": major2, "broken": failing})
	ctx := context.Background()

	var ve *yep.VersionError
	const off = `extension "new": protocol version 2.0 is incompatible with ours (` + yep.ProtocolVersion + `): majors must match`
	_, err := s.CallTool(ctx, "t", "1", nil, nil)
	checkErr(t, "first call, off", err, off, ErrExtensionOff)
	if !errors.As(err, &ve) {
		t.Errorf("first call, off: err = %v, want a *yep.VersionError", err)
	}
	_, err = s.CallTool(ctx, "t", "2", nil, nil)
	checkErr(t, "next call, off", err, `extension "new" is off: server speaks `+strings.TrimPrefix(off, `extension "new": `)+`; extension left off`, ErrExtensionOff)
	if !errors.As(err, &ve) || errors.Is(err, ErrExtensionDegraded) {
		t.Errorf("next call, off: err = %v, want a *yep.VersionError and not degraded", err)
	}

	var xe *core.ExitError
	const exited = `extension "broken" exited during initialize: extension "broken" exited (exit status 1); last stderr lines:
  fatal: cannot initialize`
	_, err = s.CallTool(ctx, "u", "3", nil, nil)
	checkErr(t, "first call, degraded", err, exited, ErrExtensionDegraded)
	if !errors.As(err, &xe) || xe.Code != 1 {
		t.Errorf("first call, degraded: err = %v, want the *core.ExitError", err)
	}
	e, _ := s.Extension("broken")
	for _, call := range []func() error{
		func() error { _, err := s.CallTool(ctx, "u", "4", nil, nil); return err },
		func() error { return e.Start(ctx) },
		func() error {
			_, err := e.FireHook(ctx, HookGrant{Event: yep.HookPreToolUse}, yep.HookFireParams{})
			return err
		},
	} {
		err := call()
		checkErr(t, "next call, degraded", err, `extension "broken" is degraded: `+exited, ErrExtensionDegraded)
		if !errors.As(err, &xe) {
			t.Errorf("next call, degraded: err = %v, want the *core.ExitError as its cause", err)
		}
		noREPLHints(t, err)
	}
	if err := e.Reload(ctx); !errors.Is(err, ErrExtensionDegraded) {
		t.Errorf("reload of a server that still fails = %v, want degraded again", err)
	}
}

// TestHandshakeTimeoutError: on a fake clock, a server that never answers
// initialize fails the start with ErrHandshakeTimeout, degraded; later
// calls are refused with both.
func TestHandshakeTimeoutError(t *testing.T) {
	leakcheck.Check(t)
	synctest.Test(t, func(t *testing.T) {
		s := newMemSession(t, SessionOptions{
			Grants:    []Grant{{Name: "wedged", ProtocolVersion: "1.0", Tools: []ToolGrant{{Name: "t"}}}},
			Extension: ExtensionOptions{HandshakeTimeout: 3 * time.Second},
		}, map[string]transporttest.Server{"wedged": transporttest.Unresponsive})
		const want = `extension "wedged" did not answer initialize within 3s`
		_, err := s.CallTool(context.Background(), "t", "1", nil, nil)
		checkErr(t, "first call", err, want, ErrHandshakeTimeout, ErrExtensionDegraded)
		_, err = s.CallTool(context.Background(), "t", "2", nil, nil)
		checkErr(t, "next call", err, `extension "wedged" is degraded: `+want, ErrHandshakeTimeout, ErrExtensionDegraded)
		if errors.Is(err, yep.ErrCancelled) || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v: a handshake timeout must not read as the caller's cancel or deadline", err)
		}
	})
}

// TestProtocolViolationErrors: a server that breaks the protocol too
// often is degraded; the error of the call it broke says what to fix
// without naming a front-end command, and matches ErrExtensionDegraded
// and jsonrpc.ErrProtocolViolations, as do later calls.
func TestProtocolViolationErrors(t *testing.T) {
	leakcheck.Check(t)
	synctest.Test(t, func(t *testing.T) {
		garbage := func(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
			io.WriteString(stdout, "garbage 1\ngarbage 2\ngarbage 3\n")
			_, _ = io.Copy(io.Discard, stdin)
			return nil
		}
		s := newMemSession(t, SessionOptions{
			Grants:    []Grant{{Name: "noisy", ProtocolVersion: "1.0", Tools: []ToolGrant{{Name: "t"}}}},
			Extension: ExtensionOptions{MaxProtocolViolations: 3, ProtocolViolationWindow: time.Minute},
		}, map[string]transporttest.Server{"noisy": garbage})
		const reason = `stopped after 3 protocol violations within 1m0s; last: a line that is not JSON: "garbage 3"; fix the server's stdout (only protocol JSON may go there), then reload the extension`
		_, err := s.CallTool(context.Background(), "t", "1", nil, nil)
		checkErr(t, "first call", err, `extension "noisy" `+reason, ErrExtensionDegraded, jsonrpc.ErrProtocolViolations)
		_, err = s.CallTool(context.Background(), "t", "2", nil, nil)
		checkErr(t, "next call", err, `extension "noisy" is degraded: extension "noisy" `+reason, ErrExtensionDegraded, jsonrpc.ErrProtocolViolations)
		e, _ := s.Extension("noisy")
		if st, r := e.State(); st != StateDegraded || r != `extension "noisy" `+reason {
			t.Errorf("state = %s %q", st, r)
		}
	})
}

// TestCrashBackoffAndDegrade crashes a lazy server again and again on a
// fake clock: each respawn waits the backoff, doubling from MinBackoff and
// capped at MaxBackoff; crashes older than CrashWindow are forgotten; at
// CrashLimit the extension is degraded with a reason that says what to do
// (naming no front-end command) and calls are refused, matching
// ErrExtensionDegraded and the last crash, until a reload starts it at
// once.
func TestCrashBackoffAndDegrade(t *testing.T) {
	leakcheck.Check(t)
	synctest.Test(t, func(t *testing.T) {
		epoch := time.Now()
		var starts []time.Duration
		crashing := rawServer(func(ctx context.Context, req *jsonrpc.Request, exit func(error)) (any, error) {
			switch req.Method {
			case yep.MethodInitialize:
				starts = append(starts, time.Since(epoch))
				return yep.InitializeResult{ProtocolVersion: "1.0"}, nil
			case yep.MethodToolCall:
				exit(&core.ExitError{Code: 3})
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return nil, nil
		})
		s := newMemSession(t, SessionOptions{
			Grants: []Grant{{Name: "c", ProtocolVersion: "1.0", Tools: []ToolGrant{{Name: "crash"}}}},
			Extension: ExtensionOptions{
				MinBackoff: time.Second, MaxBackoff: 1500 * time.Millisecond,
				CrashLimit: 3, CrashWindow: 30 * time.Second,
			},
		}, map[string]transporttest.Server{"c": crashing})
		e, _ := s.Extension("c")
		ctx := context.Background()
		crash := func(what string) {
			t.Helper()
			_, err := s.CallTool(ctx, "crash", what, nil, nil)
			var xe *core.ExitError
			if !errors.As(err, &xe) || xe.Code != 3 || !errors.Is(err, jsonrpc.ErrClosed) {
				t.Fatalf("%s: err = %v, want the connection closed by exit status 3", what, err)
			}
			synctest.Wait() // the crash is recorded
		}

		crash("first")            // starts at 0s
		crash("after 1s")         // 1s of backoff
		time.Sleep(time.Minute)   // both crashes leave the window
		crash("after the window") // at once: 61s
		if st, _ := e.State(); st != StateCrashed {
			t.Fatalf("state = %s, want crashed: two crashes left the window", st)
		}
		crash("after 1s again")        // 62s
		crash("after the capped 1.5s") // 63.5s: the third within the window

		const reason = `crashed 3 times within 30s; not restarting (last: extension "c" exited (exit status 3)). Fix the server, then reload the extension`
		if st, r := e.State(); st != StateDegraded || r != reason {
			t.Fatalf("state = %s %q, want degraded %q", st, r, reason)
		}
		_, err := s.CallTool(ctx, "crash", "refused", nil, nil)
		checkErr(t, "call on the degraded extension", err, `extension "c" is degraded: `+reason, ErrExtensionDegraded)
		if xe := new(core.ExitError); !errors.As(err, &xe) {
			t.Errorf("err = %v, want the last crash as its cause", err)
		}
		noREPLHints(t, err)

		if err := e.Reload(ctx); err != nil {
			t.Fatalf("Reload = %v", err)
		}
		want := []time.Duration{0, time.Second, 61 * time.Second, 62 * time.Second, 63500 * time.Millisecond, 63500 * time.Millisecond}
		if !slices.Equal(starts, want) {
			t.Errorf("servers started at %v, want %v", starts, want)
		}
		if st := e.Stats(); st.State != StateReady || st.Restarts != 6 {
			t.Errorf("stats = %+v, want ready after 5 crashes and a reload", st)
		}
	})
}

// TestHookErrors: a hook that outlives its timeout fails with
// ErrHookTimeout, never a cancel; an unknown decision with
// ErrHookDecision; and a block with a *HookBlockedError matching
// ErrHookBlocked.
func TestHookErrors(t *testing.T) {
	leakcheck.Check(t)
	synctest.Test(t, func(t *testing.T) {
		srv := rawServer(func(ctx context.Context, req *jsonrpc.Request, _ func(error)) (any, error) {
			switch req.Method {
			case yep.MethodInitialize:
				return yep.InitializeResult{ProtocolVersion: "1.0", Capabilities: yep.Capabilities{yep.CapTools, yep.CapHooks}}, nil
			case yep.MethodHookFire:
				var p yep.HookFireParams
				_ = json.Unmarshal(req.Params, &p)
				switch p.ToolName {
				case "slow":
					<-ctx.Done()
					return nil, ctx.Err()
				case "odd":
					return yep.HookFireResult{Decision: "deny"}, nil
				}
				return yep.HookFireResult{Decision: yep.DecisionBlock, Reason: "no"}, nil
			}
			return nil, nil
		})
		sub := HookGrant{Event: yep.HookPreToolUse, Matcher: "*", TimeoutMS: 250}
		s := newMemSession(t, SessionOptions{
			Grants: []Grant{{Name: "guard", ProtocolVersion: "1.0", Tools: []ToolGrant{{Name: "slow"}, {Name: "odd"}, {Name: "t"}}, Hooks: []HookGrant{sub}}},
		}, map[string]transporttest.Server{"guard": srv})
		ctx := context.Background()
		e, _ := s.Extension("guard")

		_, err := e.FireHook(ctx, sub, yep.HookFireParams{Event: yep.HookPreToolUse, ToolName: "slow"})
		checkErr(t, "slow hook", err, `hook pre_tool_use of extension "guard" timed out after 250ms`, ErrHookTimeout)
		if errors.Is(err, yep.ErrCancelled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			t.Errorf("slow hook: err = %v must not read as a cancel", err)
		}
		_, err = e.FireHook(ctx, sub, yep.HookFireParams{Event: yep.HookPreToolUse, ToolName: "odd"})
		checkErr(t, "odd hook", err, `hook pre_tool_use of extension "guard" answered the unknown decision "deny" (want allow, block or mutate)`, ErrHookDecision)

		_, err = s.CallTool(ctx, "t", "1", nil, nil)
		var hb *HookBlockedError
		checkErr(t, "blocked call", err, `tool "t" blocked by ext:guard: no`, ErrHookBlocked)
		if !errors.As(err, &hb) || hb.Reason != "no" {
			t.Errorf("blocked call: err = %v, want a *HookBlockedError", err)
		}
	})
}
