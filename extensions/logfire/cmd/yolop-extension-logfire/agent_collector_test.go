package main

import (
	"context"
	"path/filepath"
	"testing"

	"yolop.dev/agent"
	"yolop.dev/agent/provider"
	"yolop.dev/agent/scripted"
	"yolop.dev/extensions/logfire/otlptest"
)

// TestCollectorAgentTurn runs one agent turn — a scripted model on
// loopback asks for echotrace's echo, then answers — with logfire and
// echotrace both exporting to a real OpenTelemetry Collector, and reads
// the trace the collector forwards: the turn holds its two reasons, each
// with its generation, and the act span, which holds the host's tool span,
// the extension's tool/call span and the extension's own child span.
func TestCollectorAgentTurn(t *testing.T) {
	sink := otlptest.New()
	defer sink.Close()
	endpoint := startCollector(t, sink)

	echo := buildEchotrace(t)
	eg := grant(t, filepath.Join(moduleDir(), "examples", "echotrace"), "", nil, "")
	eg.Server.Command = echo
	eg.Server.Env = map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}
	lg := grant(t, filepath.Join(moduleDir(), "package"), "logfire", map[string]string{"LOGFIRE_TOKEN": "tok-agent"}, `{"endpoint":"`+endpoint+`","service_name":"yolop-agent-test"}`)
	s := newSession(t, lg, eg)

	script, err := scripted.Parse([]byte(`{"steps": [
		{"when": {"user": "say hi"}, "reply": {"tool_calls": [{"name": "echo", "arguments": {"text": "hi"}}],
		 "usage": {"prompt_tokens": 300, "completion_tokens": 12, "cached_tokens": 256}}},
		{"when": {"tool_result": {"tool": "echo", "contains": "hi"}}, "reply": {"text": "It said hi.", "usage": {"prompt_tokens": 330, "completion_tokens": 5}}}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	model := scripted.NewServer(script, scripted.Options{})
	if err := model.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	a, err := agent.New(agent.Options{Session: s, Model: "gpt-collector",
		Provider: provider.OpenAI(provider.Options{BaseURL: model.URL() + "/v1/", APIKey: "k"})})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Turn(context.Background(), "say hi")
	if err != nil || res.Text != "It said hi." {
		t.Fatalf("turn = %+v, %v", res, err)
	}
	s.Close()

	spans, ok := sink.WaitFor(wait, func(spans []otlptest.Span, _ []otlptest.Request) bool {
		return countName(spans, "echo.render") == 1 && countName(spans, "turn") == 1
	})
	if !ok {
		t.Fatalf("the collector forwarded:\n%s", otlptest.Tree(spans))
	}
	tree := otlptest.Tree(spans, "service.name")
	want := "turn service.name=yolop-agent-test\n" +
		"  reason service.name=yolop-agent-test\n" +
		"    chat gpt-collector service.name=yolop-agent-test\n" +
		"  act service.name=yolop-agent-test\n" +
		"    execute_tool echo service.name=yolop-agent-test\n" +
		"      tool/call echo service.name=yolop-extension-echotrace\n" +
		"        echo.render service.name=yolop-extension-echotrace\n" +
		"  reason service.name=yolop-agent-test\n" +
		"    chat gpt-collector service.name=yolop-agent-test\n"
	if tree != want {
		t.Errorf("the turn as the collector forwarded it:\n%s\nwant:\n%s", tree, want)
	}
	var gen otlptest.Span
	for _, sp := range spans {
		if sp.Name == "chat gpt-collector" && gen.Name == "" {
			gen = sp
		}
	}
	for k, v := range map[string]string{
		"gen_ai.request.model": "gpt-collector", "gen_ai.usage.input_tokens": "300",
		"gen_ai.usage.cache_read.input_tokens": "256", "gen_ai.usage.output_tokens": "12",
	} {
		if got := gen.Attrs[k]; got != v {
			t.Errorf("generation %s = %q, want %q (attributes %v)", k, got, v, gen.Attrs)
		}
	}
	if err := model.Verify(); err != nil {
		t.Error(err)
	}
}
