package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"yolop.dev/agent"
	"yolop.dev/agent/provider"
	"yolop.dev/agent/scripted"
	"yolop.dev/core"
	"yolop.dev/core/host"
	"yolop.dev/transport/stdio"
)

// benchSession starts a session of exts extensions serving perExt tools
// each (two never deferred, the rest behind tool_search), every one a real
// benchext process over stdio.
func benchSession(tb testing.TB, exts, perExt int) *host.Session {
	tb.Helper()
	var grants []host.Grant
	for e := range exts {
		prefix := fmt.Sprintf("e%02d", e)
		g := host.Grant{Name: prefix, ProtocolVersion: "1.0",
			Server: core.ServerSpec{Name: prefix, Command: bins["benchext"], Args: []string{prefix, fmt.Sprint(perExt)}},
			Prompt: &host.PromptGrant{Text: "Extension " + prefix + " is installed."}}
		for i := range perExt {
			g.Tools = append(g.Tools, host.ToolGrant{
				Name:        fmt.Sprintf("%s_t%02d", prefix, i),
				Description: fmt.Sprintf("Tool %d of extension %s: looks up record %d in the %s table.", i, prefix, i, prefix),
				InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"the record's id"},"limit":{"type":"integer","minimum":1}},"required":["id"]}`),
				NeverDefer:  i < 2,
			})
		}
		grants = append(grants, g)
	}
	s := host.NewSession(host.SessionOptions{Grants: grants, Transport: stdio.New(stdio.Options{}), SessionID: "bench"})
	tb.Cleanup(s.Close)
	if err := s.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return s
}

// instant is the model of the step benchmark: it answers at once, so what
// a step costs is the host's own work. A turn is three steps: search for a
// deferred tool, call it and a never-deferred one in parallel, answer.
type instant struct{}

func (instant) Name() string { return "instant" }

func (instant) Stream(ctx context.Context, req provider.Request, on func(provider.Delta)) (provider.Result, error) {
	last := req.Messages[len(req.Messages)-1]
	call := func(calls ...provider.ToolCall) (provider.Result, error) {
		return provider.Result{ToolCalls: calls, FinishReason: provider.FinishToolCalls}, nil
	}
	switch {
	case last.Role == provider.RoleUser:
		return call(provider.ToolCall{ID: "s", Name: "tool_search", Args: json.RawMessage(`{"query":"e42_t17"}`)})
	case last.ToolResult != nil && last.ToolResult.CallID == "s":
		return call(provider.ToolCall{ID: "a", Name: "e42_t17", Args: json.RawMessage(`{"id":"r1"}`)},
			provider.ToolCall{ID: "b", Name: "e07_t00", Args: json.RawMessage(`{"id":"r2"}`)})
	}
	on(provider.Delta{Text: "done"})
	return provider.Result{Text: "done", FinishReason: provider.FinishStop}, nil
}

// BenchmarkAgentStep reports the host's own cost of an agent step with 50
// extensions and 1,000 tools: each iteration is one turn of three steps
// (tool_search, two parallel calls, the answer) against a model that
// answers at once, so the time is request assembly, tool search, dispatch
// over stdio to real extension processes, events and the turn's prompt.
// Beside it, in the same run and alternating with it, the pieces: request
// assembly alone, one tool_search call, one tool call; and the same turn
// through the OpenAI SDK against the scripted model on loopback, for what
// the HTTP round trips add.
//
//	go test -run '^$' -bench AgentStep -benchtime 400x ./agent/
func BenchmarkAgentStep(b *testing.B) {
	s := benchSession(b, 50, 20)
	if n := len(s.Tools()); n != 1001 { // and tool_search
		b.Fatalf("%d tools", n)
	}
	srv := benchScripted(b, b.N)
	overSDK := provider.OpenAI(provider.Options{BaseURL: srv.URL() + "/v1/", APIKey: "k"})
	// Each iteration is the first turn of a new conversation, so the
	// history does not grow across iterations.
	newAgent := func(p provider.Provider) *agent.Agent {
		a, err := agent.New(agent.Options{Session: s, Provider: p, Model: "m", BasePrompt: "You are yolop."})
		if err != nil {
			b.Fatal(err)
		}
		return a
	}
	ctx := context.Background()
	var step, assemble, search, dispatch, http []time.Duration
	var offered int
	b.ResetTimer()
	for i := range b.N {
		a, overHTTP := newAgent(instant{}), newAgent(overSDK)
		t0 := time.Now()
		res, err := a.Turn(ctx, fmt.Sprintf("turn %d", i))
		if err != nil || res.Steps != 3 || res.Text != "done" {
			b.Fatalf("turn = %+v, %v", res, err)
		}
		step = append(step, time.Since(t0)/3)

		t0 = time.Now()
		req := a.Request()
		assemble = append(assemble, time.Since(t0))
		offered = len(req.Tools)

		t0 = time.Now()
		out, err := s.CallTool(ctx, "tool_search", "s", json.RawMessage(`{"query":"e42_t17"}`), nil)
		search = append(search, time.Since(t0))
		if err != nil || !strings.Contains(out.Output, `"e42_t17"`) {
			b.Fatalf("tool_search = %v, %v", out.Output, err)
		}

		t0 = time.Now()
		out, err = s.CallTool(ctx, "e42_t17", "c", json.RawMessage(`{"id":"r1"}`), nil)
		dispatch = append(dispatch, time.Since(t0))
		if err != nil || out.Output != "ok e42_t17" {
			b.Fatalf("call = %v, %v", out.Output, err)
		}

		t0 = time.Now()
		if res, err := overHTTP.Turn(ctx, fmt.Sprintf("turn %d", i)); err != nil || res.Steps != 3 {
			b.Fatalf("turn over HTTP = %+v, %v", res, err)
		}
		http = append(http, time.Since(t0)/3)
	}
	b.StopTimer()
	p50 := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds())
	}
	b.ReportMetric(p50(step), "step-p50-µs")
	b.ReportMetric(p50(assemble), "assembly-p50-µs")
	b.ReportMetric(p50(search), "search-p50-µs")
	b.ReportMetric(p50(dispatch), "dispatch-p50-µs")
	b.ReportMetric(p50(http), "step-over-http-p50-µs")
	b.ReportMetric(p50(http)/p50(step), "http/host")
	b.ReportMetric(float64(offered), "tools-offered")
}

// benchScripted serves the instant model's turn over HTTP, turns times.
func benchScripted(b *testing.B, turns int) *scripted.Server {
	turn := `{"when": {"user": ""}, "reply": {"tool_calls": [{"name": "tool_search", "arguments": {"query": "e42_t17"}}]}},
		{"when": {"tool_result": {"tool": "tool_search"}}, "reply": {"tool_calls": [{"name": "e42_t17", "arguments": {"id": "r1"}}, {"name": "e07_t00", "arguments": {"id": "r2"}}]}},
		{"when": {"tool_result": {"tool": "e07_t00"}}, "reply": {"text": "done"}}`
	parsed, err := scripted.Parse([]byte(`{"steps": [` + strings.Repeat(turn+",", turns-1) + turn + `]}`))
	if err != nil {
		b.Fatal(err)
	}
	srv := scripted.NewServer(parsed, scripted.Options{})
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	return srv
}
