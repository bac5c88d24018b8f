package logfire

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"yolop.dev/agent"
	"yolop.dev/agent/provider"
	"yolop.dev/agent/scripted"
	"yolop.dev/core"
	"yolop.dev/core/host"
	"yolop.dev/core/sdk"
	"yolop.dev/core/transporttest"
	"yolop.dev/core/yep"
	"yolop.dev/extensions/logfire/otlptest"
	"yolop.dev/packaging"
	"yolop.dev/packaging/hostgrant"
	sdkotel "yolop.dev/sdk/otel"
)

// agentScript calls forecast, then answers from its result.
const agentScript = `{"steps": [
	{"when": {"user": "weather in Paris", "offered": ["forecast"]},
	 "reply": {"tool_calls": [{"name": "forecast", "arguments": {"city": "Paris"}}],
	           "usage": {"prompt_tokens": 120, "completion_tokens": 14, "cached_tokens": 64}}},
	{"when": {"tool_result": {"tool": "forecast", "contains": "sunny"}},
	 "reply": {"text": "Sunny in Paris, 21 degrees.", "usage": {"prompt_tokens": 161, "completion_tokens": 9}}}
]}`

// TestAgentTurnTrace runs one agent turn (yolop.dev/agent over a real
// host session, the model a scripted OpenAI-compatible server on loopback
// reached through the OpenAI provider) with the logfire extension enabled
// from its manifest and a tool extension that traces its own work with
// yolop.dev/sdk/otel, both exporting to one OTLP receiver. The receiver
// must hold the turn as one trace: reason spans under the turn, each with
// its generation, the act span holding the tool span, and the extension's
// own spans inside the tool span. Both servers run in-process over pipes
// (transporttest); the cmd tests cover the same servers as processes.
func TestAgentTurnTrace(t *testing.T) {
	ctx := context.Background()
	r := otlptest.New()
	defer r.Close()

	// The tool extension's own tracer, exporting as an extension does
	// (see examples/echotrace), each span as it ends.
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(r.URL()+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	extTP := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "weather-ext"))))
	defer extTP.Shutdown(ctx)
	tracer := extTP.Tracer("weather")

	m, err := packaging.Load("package")
	if err != nil {
		t.Fatal(err)
	}
	lfGrant, err := hostgrant.FromManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	lfGrant.Server.Name = "logfire"
	lfGrant.Config = json.RawMessage(`{"endpoint":"` + r.URL() + `","service_name":"yolop-agent-test"}`)
	lf := New(Options{Getenv: func(string) string { return "" }, Logger: hclog.NewNullLogger()})
	tr := &transporttest.Transport{Servers: map[string]transporttest.Server{
		"logfire": lf.ServeConn,
		"weather": transporttest.SDK(sdk.Info{}, func(s *sdk.Server) {
			s.Tool("forecast", sdkotel.Tool(tracer, func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
				_, span := sdkotel.Start(ctx, tracer, "forecast.lookup")
				defer span.End()
				return yep.ToolResult{Output: "sunny, 21 degrees"}, nil
			}))
		}),
	}}
	sess := host.NewSession(host.SessionOptions{
		SessionID: "sess-agent",
		Grants: []host.Grant{lfGrant, {
			Name: "weather", ProtocolVersion: yep.ProtocolVersion, Server: core.ServerSpec{Name: "weather"},
			Tools: []host.ToolGrant{{Name: "forecast", Description: "The weather in a city.", NeverDefer: true,
				InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}},
		}},
		Transport:     tr,
		WorkspaceRoot: t.TempDir(),
		Logger:        hclog.NewNullLogger(),
	})
	defer sess.Close()
	if err := sess.Start(ctx); err != nil {
		t.Fatal(err)
	}

	script, err := scripted.Parse([]byte(agentScript))
	if err != nil {
		t.Fatal(err)
	}
	model := scripted.NewServer(script, scripted.Options{APIKey: "sk-agent-trace"})
	if err := model.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	p := provider.OpenAI(provider.Options{BaseURL: model.URL() + "/v1/", APIKey: "sk-agent-trace", MaxRetries: -1,
		Getenv: func(string) string { return "" }})
	a, err := agent.New(agent.Options{Session: sess, Provider: p, Model: "gpt-trace"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Turn(ctx, "What is the weather in Paris?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Sunny in Paris, 21 degrees." || res.Steps != 2 || res.ToolCalls != 1 {
		t.Fatalf("turn = %+v", res)
	}
	if err := model.Verify(); err != nil {
		t.Error(err)
	}
	sess.Close() // logfire flushes what it has before it exits

	spans, ok := r.WaitFor(wait, func(spans []otlptest.Span, _ []otlptest.Request) bool {
		return countName(spans, "turn") == 1 && countName(spans, "forecast.lookup") == 1
	})
	tree := otlptest.Tree(spans, "service.name", "gen_ai.provider.name", "gen_ai.request.model", "gen_ai.response.model",
		"gen_ai.usage.input_tokens", "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.response.finish_reasons", "gen_ai.tool.name")
	if !ok {
		t.Fatalf("the receiver got:\n%s", tree)
	}
	t.Logf("received:\n%s", tree)

	// One trace, the turn its root.
	traces := map[string]bool{}
	by := map[string][]otlptest.Span{}
	for _, s := range spans {
		traces[s.TraceID] = true
		by[s.Name] = append(by[s.Name], s)
	}
	if len(traces) != 1 {
		t.Errorf("spans in %d traces, want the turn's one", len(traces))
	}
	const gen = "chat gpt-trace"
	for name, n := range map[string]int{"turn": 1, "reason": 2, gen: 2, "act": 1, "execute_tool forecast": 1, "tool/call forecast": 1, "forecast.lookup": 1} {
		if len(by[name]) != n {
			t.Fatalf("%d %q spans, want %d; received:\n%s", len(by[name]), name, n, tree)
		}
	}
	turn := by["turn"][0]
	if turn.ParentID != "" || turn.StatusCode == "Error" || turn.Service != "yolop-agent-test" {
		t.Errorf("turn span %+v, want a root from the logfire extension", turn)
	}
	child := func(s, parent otlptest.Span) {
		t.Helper()
		if s.ParentID != parent.SpanID {
			t.Errorf("span %s is a child of %s, want of %s %s", s.Name, s.ParentID, parent.Name, parent.SpanID)
		}
	}
	// Each reason span holds its own generation.
	reasons := map[string]otlptest.Span{}
	for _, rs := range by["reason"] {
		child(rs, turn)
		reasons[rs.SpanID] = rs
	}
	for _, g := range by[gen] {
		if _, ok := reasons[g.ParentID]; !ok {
			t.Errorf("generation span %s is a child of %s, not of a reason span without one", g.Name, g.ParentID)
		}
		delete(reasons, g.ParentID)
	}
	act, tool, server, own := by["act"][0], by["execute_tool forecast"][0], by["tool/call forecast"][0], by["forecast.lookup"][0]
	child(act, turn)
	child(tool, act)
	child(server, tool)
	child(own, server)
	if server.Service != "weather-ext" || own.Service != "weather-ext" || tool.Service != "yolop-agent-test" {
		t.Errorf("services: tool %q, extension %q and %q", tool.Service, server.Service, own.Service)
	}

	// The generations carry the GenAI attributes of what the model server
	// reported, in the order of the requests.
	gens := by[gen]
	if gens[1].Start.Before(gens[0].Start) {
		gens[0], gens[1] = gens[1], gens[0]
	}
	for i, want := range []map[string]string{
		{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-trace", "gen_ai.response.model": "gpt-trace",
			"gen_ai.usage.input_tokens": "120", "gen_ai.usage.cache_read.input_tokens": "64", "gen_ai.usage.output_tokens": "14", "gen_ai.response.finish_reasons": "[tool_calls]"},
		{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-trace", "gen_ai.response.model": "gpt-trace",
			"gen_ai.usage.input_tokens": "161", "gen_ai.usage.output_tokens": "9", "gen_ai.response.finish_reasons": "[stop]"},
	} {
		if _, ok := want["gen_ai.usage.cache_read.input_tokens"]; !ok && gens[i].Attrs["gen_ai.usage.cache_read.input_tokens"] != "" {
			t.Errorf("generation %d: cached tokens %s, when the server reported none", i+1, gens[i].Attrs["gen_ai.usage.cache_read.input_tokens"])
		}
		for k, v := range want {
			if gens[i].Attrs[k] != v {
				t.Errorf("generation %d: %s = %q, want %q", i+1, k, gens[i].Attrs[k], v)
			}
		}
		if !strings.HasPrefix(gens[i].Attrs["gen_ai.response.id"], "chatcmpl-") {
			t.Errorf("generation %d: gen_ai.response.id = %q", i+1, gens[i].Attrs["gen_ai.response.id"])
		}
	}
	if tool.Attrs["gen_ai.tool.name"] != "forecast" || tool.Attrs["gen_ai.tool.call.id"] == "" || tool.Attrs["yolop.tool.status"] != yep.ToolOK {
		t.Errorf("tool span attrs %v", tool.Attrs)
	}
	for _, s := range spans {
		if s.StatusCode == "Error" || s.Attrs["yolop.unpaired"] != "" {
			t.Errorf("span %s: status %s %q, attrs %v", s.Name, s.StatusCode, s.StatusMessage, s.Attrs)
		}
	}
}

func countName(spans []otlptest.Span, name string) int {
	n := 0
	for _, s := range spans {
		if s.Name == name {
			n++
		}
	}
	return n
}
