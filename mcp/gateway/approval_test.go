package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"yolop.dev/core"
	"yolop.dev/core/host"
	"yolop.dev/mcp/gateway"
	"yolop.dev/mcp/internal/testpkg"
	"yolop.dev/transport/stdio"
)

// alwaysEcho is the echo package with reverse's approval "always", its
// server behind a wrapper that copies what the host sends it to a log;
// it returns the grant and a function listing the tool/call requests the
// server received.
func alwaysEcho(t *testing.T) (host.Grant, func() []string) {
	t.Helper()
	g, dir := testpkg.EchoDir(t)
	for i := range g.Tools {
		if g.Tools[i].Name == "reverse" {
			g.Tools[i].Approval = host.ApprovalAlways
		}
	}
	log := filepath.Join(t.TempDir(), "received.jsonl")
	bin := filepath.Join(dir, "bin", "yolop-extension-echo")
	if err := os.Rename(bin, bin+".real"); err != nil {
		t.Fatal(err)
	}
	// tee writes its outputs in order: the log first, then the pipe
	// (fd 3), so a line the server answered is already in the log.
	script := "#!/bin/sh\ntee -a '" + log + "' /dev/fd/3 3>&1 >/dev/null | exec '" + bin + ".real' \"$@\"\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// The wrapper runs tee and the real server and appends to the log:
	// its sandbox says so.
	if g.Server.Sandbox != nil {
		g.Server.Sandbox.Exec = true
		g.Server.Sandbox.Paths = append(g.Server.Sandbox.Paths, core.ConfinedPath{Path: filepath.Dir(log), Write: true})
	}
	return g, func() []string {
		b, _ := os.ReadFile(log)
		var calls []string
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, `"method":"tool/call"`) {
				calls = append(calls, l)
			}
		}
		return calls
	}
}

// answering is a client's elicitation handler that answers every
// question with action (and answer, when it accepts) and keeps the
// questions' messages.
type answering struct {
	action, answer string
	mu             sync.Mutex
	asked          []string
}

func (a *answering) handle(_ context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	a.mu.Lock()
	a.asked = append(a.asked, r.Params.Message)
	a.mu.Unlock()
	if a.action != "accept" {
		return &sdk.ElicitResult{Action: a.action}, nil
	}
	return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": a.answer}}, nil
}

func (a *answering) questions() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.asked...)
}

// TestGatewayApproval: a call of a tool whose manifest says approval
// "always" is put to the MCP client as elicitation naming ext@version, the
// tool and its arguments; "allow" runs it, a decline is an error result
// and the server never gets the call, and a client without elicitation
// gets the call denied.
func TestGatewayApproval(t *testing.T) {
	ctx := context.Background()
	args := map[string]any{"text": "abc"}

	g, received := alwaysEcho(t)
	allow := &answering{action: "accept", answer: "allow"}
	cs := serve(t, &sdk.ClientOptions{ElicitationHandler: allow.handle}, g)
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "reverse", Arguments: args})
	if err != nil || res.IsError || text(res) != "cba" {
		t.Fatalf("allowed reverse = %+v (%q), %v", res, text(res), err)
	}
	if q := allow.questions(); len(q) != 1 || !strings.Contains(q[0], `Allow echo@0.1.0 to run "reverse"`) || !strings.Contains(q[0], `{"text":"abc"}`) {
		t.Fatalf("questions = %q", q)
	}
	// echo's manifest asks nothing: no question.
	if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: args}); err != nil || text(res) != "abc" || len(allow.questions()) != 1 {
		t.Fatalf("echo = %+v, %v; questions %q", res, err, allow.questions())
	}
	if n := len(received()); n != 2 {
		t.Fatalf("the server got %d tool calls, want 2", n)
	}

	for name, opts := range map[string]*sdk.ClientOptions{
		"decline":        {ElicitationHandler: (&answering{action: "decline"}).handle},
		"answer deny":    {ElicitationHandler: (&answering{action: "accept", answer: "deny"}).handle},
		"no elicitation": nil,
	} {
		g, received := alwaysEcho(t)
		cs := serve(t, opts, g)
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "reverse", Arguments: args})
		if err != nil || !res.IsError || !strings.Contains(text(res), `tool "reverse" of echo@0.1.0 was not run`) {
			t.Errorf("%s: reverse = %+v (%q), %v; want a denial", name, res, text(res), err)
		}
		if calls := received(); len(calls) != 0 {
			t.Errorf("%s: the server got %q", name, calls)
		}
	}
}

// TestGatewayApprovalReachesItsOwnCall: with two calls of one extension
// running for two clients, the approval question of the second goes to
// the client that made it, not to the client of the older call (which
// cannot answer it).
func TestGatewayApprovalReachesItsOwnCall(t *testing.T) {
	before := goleak.IgnoreCurrent()
	ctx := context.Background()
	g, received := alwaysEcho(t)
	gw := gateway.New(gateway.Options{})
	s := host.NewSession(host.SessionOptions{Grants: []host.Grant{g}, Transport: stdio.New(stdio.Options{Logger: hclog.NewNullLogger()}), Ask: gw})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	gw.Attach(s)
	sctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	connect := func(opts *sdk.ClientOptions) *sdk.ClientSession {
		st, ct := sdk.NewInMemoryTransports()
		wg.Add(1)
		go func() { defer wg.Done(); gw.Serve(sctx, st) }()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	first := make(chan struct{}, 1)
	counter := connect(&sdk.ClientOptions{ProgressNotificationHandler: func(context.Context, *sdk.ProgressNotificationClientRequest) {
		select {
		case first <- struct{}{}:
		default:
		}
	}})
	allow := &answering{action: "accept", answer: "allow"}
	approver := connect(&sdk.ClientOptions{ElicitationHandler: allow.handle})
	defer func() {
		counter.Close()
		approver.Close()
		stop()
		wg.Wait()
		gw.Close()
		s.Close()
		goleak.VerifyNone(t, before)
	}()

	// The first client's count runs (it has no elicitation) ...
	cctx, cancel := context.WithCancel(ctx)
	p := &sdk.CallToolParams{Name: "count", Arguments: map[string]any{"n": 100000, "delay_ms": 5}}
	p.SetProgressToken("count")
	done := make(chan error, 1)
	go func() { _, err := counter.CallTool(cctx, p); done <- err }()
	<-first
	// ... while the second client's reverse is asked about.
	res, err := approver.CallTool(ctx, &sdk.CallToolParams{Name: "reverse", Arguments: map[string]any{"text": "abc"}})
	cancel()
	<-done
	if err != nil || res.IsError || text(res) != "cba" {
		t.Fatalf("reverse beside a running count = %+v (%q), %v; questions %q", res, text(res), err, allow.questions())
	}
	if q := allow.questions(); len(q) != 1 {
		t.Fatalf("questions = %q", q)
	}
	var reversed int
	for _, c := range received() {
		if strings.Contains(c, `"reverse"`) {
			reversed++
		}
	}
	if reversed != 1 {
		t.Fatalf("the server got %d reverse calls, want 1", reversed)
	}
}
