package gateway_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"yolop.dev/core"
	"yolop.dev/core/host"
	yolopsdk "yolop.dev/core/sdk"
	"yolop.dev/core/transporttest"
	"yolop.dev/core/yep"
	"yolop.dev/mcp/gateway"
)

// TestGatewayServesOnlyTheReplacedResult: when a post_tool_use hook
// replaces a tool's result, an MCP client of the gateway gets the
// replacement as the call's result, and what the tool streamed before the
// hook ran (its tool.update output) never reaches the client as a
// progress notification.
func TestGatewayServesOnlyTheReplacedResult(t *testing.T) {
	const original, replaced = "ORIGINAL-4711 the token the hook hides", "REPLACED by the redactor"
	servers := map[string]transporttest.Server{
		"leaky": transporttest.SDK(yolopsdk.Info{}, func(s *yolopsdk.Server) {
			s.StreamingTool("leaky", func(_ context.Context, c *yolopsdk.ToolCall) (yep.ToolResult, error) {
				if err := c.Update(original + " (streamed)"); err != nil {
					return yep.ToolResult{}, err
				}
				if err := c.Progress(1, 2, "half way"); err != nil {
					return yep.ToolResult{}, err
				}
				return yep.ToolResult{Output: original}, nil
			})
		}),
		"redactor": transporttest.SDK(yolopsdk.Info{}, func(s *yolopsdk.Server) {
			s.OnHook(yep.HookPostToolUse, "*", func(_ context.Context, ev *yolopsdk.HookEvent) (yep.HookFireResult, error) {
				if ev.Result != nil && strings.Contains(ev.Result.Output, "ORIGINAL-4711") {
					return yep.HookFireResult{Decision: yep.DecisionMutate, Result: &yep.ToolResult{Output: replaced}}, nil
				}
				return yep.HookFireResult{Decision: yep.DecisionAllow}, nil
			}, yolopsdk.HookOptions{OnError: yep.HookOnErrorBlock})
		}),
	}
	grant := func(name string) host.Grant {
		return host.Grant{Name: name, Version: "1.0.0", ProtocolVersion: yep.ProtocolVersion, Server: core.ServerSpec{Name: name}}
	}
	leaky := grant("leaky")
	leaky.Tools = []host.ToolGrant{{Name: "leaky", Description: "answers a secret", InputSchema: json.RawMessage(`{"type":"object"}`), Streaming: true}}
	redactor := grant("redactor")
	redactor.Hooks = []host.HookGrant{{Event: yep.HookPostToolUse, Matcher: "*", TimeoutMS: 5000, OnError: yep.HookOnErrorBlock}}

	ctx := context.Background()
	gw := gateway.New(gateway.Options{})
	s := host.NewSession(host.SessionOptions{Grants: []host.Grant{leaky, redactor}, Transport: &transporttest.Transport{Servers: servers}, Ask: gw})
	defer s.Close()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if w := gw.Attach(s); len(w) > 0 {
		t.Fatal(w)
	}
	defer gw.Close()
	st, ct := sdk.NewInMemoryTransports()
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- gw.Serve(sctx, st) }()
	defer func() { stop(); <-served }()

	var mu sync.Mutex
	var progress []string
	halfWay := make(chan struct{})
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, r.Params.Message)
			mu.Unlock()
			if r.Params.Message == "half way" {
				close(halfWay)
			}
		}}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	p := &sdk.CallToolParams{Name: "leaky", Arguments: map[string]any{}}
	p.SetProgressToken("leaky")
	res, err := cs.CallTool(ctx, p)
	if err != nil || res.IsError || text(res) != replaced {
		t.Fatalf("leaky through the gateway = %+v (%q), %v; want the hook's replacement", res, text(res), err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// The client handles notifications in the order they arrive, on its
	// own goroutine, and may do so after CallTool has returned: wait for
	// the progress the tool sent after its update. (The guard only turns
	// a hang into a failure.)
	select {
	case <-halfWay:
	case <-time.After(time.Minute):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("progress = %q; want the tool's progress passed on (so the route was there to leak through)", progress)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, m := range progress {
		if strings.Contains(m, "ORIGINAL-4711") {
			t.Fatalf("a progress notification carried the original result: %q (all: %q)", m, progress)
		}
	}
}
