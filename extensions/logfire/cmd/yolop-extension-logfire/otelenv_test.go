package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	corehost "yolop.dev/core/host"
	"yolop.dev/extensions/logfire/otlptest"
	"yolop.dev/packaging"
	"yolop.dev/packaging/hostgrant"
)

// manifestGrant is the logfire extension as a session starts it: the
// grant from package/plugin.json, its capabilityServer.env expanded from
// hostEnv (the user's environment) as the host does, the server being
// this test binary, and config as initialize.config.
func manifestGrant(t *testing.T, hostEnv map[string]string, config string) corehost.Grant {
	t.Helper()
	m, err := packaging.Load(filepath.Join(moduleDir(), "package"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := hostgrant.FromManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	lookup := func(k string) (string, bool) { v, ok := hostEnv[k]; return v, ok }
	if w := hostgrant.ExpandServer(m.Name, &g.Server, lookup); len(w) > 0 {
		t.Fatalf("expanding the manifest's server env: %q", w)
	}
	g.Server.Command = os.Args[0]
	if g.Server.Env == nil {
		g.Server.Env = map[string]string{}
	}
	g.Server.Env[serveEnv] = "logfire"
	if config != "" {
		g.Config = json.RawMessage(config)
	}
	return g
}

// echoGrant is the reference echo extension (its pre_tool_use hook blocks
// arguments with the word "forbidden").
func echoGrant(t *testing.T) corehost.Grant {
	return grant(t, filepath.Join(moduleDir(), "..", "..", "core", "examples", "echo"), "echo", nil, "")
}

// TestOTELEnvironment: with no endpoint in its config, the extension
// exports to the standard OTEL_EXPORTER_OTLP_ENDPOINT of the user's
// environment, with the headers of OTEL_EXPORTER_OTLP_HEADERS (values
// percent-decoded), both passed on by its manifest.
func TestOTELEnvironment(t *testing.T) {
	r := otlptest.New()
	defer r.Close()
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": r.URL(),
		"OTEL_EXPORTER_OTLP_HEADERS":  "x-yolop-test=first%20value, x-other = 2",
	}
	s := newSession(t, echoGrant(t), manifestGrant(t, env, ""))
	turn(t, s, "env")
	s.Close()

	reqs := r.Requests()
	if len(reqs) == 0 || len(r.Spans()) == 0 {
		t.Fatalf("the endpoint of OTEL_EXPORTER_OTLP_ENDPOINT received %d requests, %d spans; want the session's spans", len(reqs), len(r.Spans()))
	}
	for _, req := range reqs {
		if got := req.Header.Get("X-Yolop-Test"); got != "first value" {
			t.Errorf("header x-yolop-test = %q, want %q (from OTEL_EXPORTER_OTLP_HEADERS)", got, "first value")
		}
		if got := req.Header.Get("X-Other"); got != "2" {
			t.Errorf("header x-other = %q, want %q", got, "2")
		}
	}
}

// TestConfigEndpointOverridesEnvironment: an endpoint in the extension's
// config wins over OTEL_EXPORTER_OTLP_ENDPOINT.
func TestConfigEndpointOverridesEnvironment(t *testing.T) {
	fromEnv, fromConfig := otlptest.New(), otlptest.New()
	defer fromEnv.Close()
	defer fromConfig.Close()
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": fromEnv.URL()}
	s := newSession(t, echoGrant(t), manifestGrant(t, env, `{"endpoint":"`+fromConfig.URL()+`"}`))
	turn(t, s, "config")
	s.Close()

	if len(fromConfig.Spans()) == 0 {
		t.Error("the configured endpoint received no spans")
	}
	if n := len(fromEnv.Requests()); n != 0 {
		t.Errorf("the endpoint of OTEL_EXPORTER_OTLP_ENDPOINT received %d requests; the config's endpoint should win", n)
	}
}

// TestHookSpans: each hook firing is a span under the tool call's span,
// with the hook's decision.
func TestHookSpans(t *testing.T) {
	r := otlptest.New()
	defer r.Close()
	s := session(t, r.URL(), "", nil)
	turn(t, s, "allowed")
	s.BeginTurn(t.Context())
	if _, err := s.CallTool(t.Context(), "echo", "call-forbidden", json.RawMessage(`{"text":"forbidden"}`), nil); err == nil {
		t.Fatal("the echo guard did not block a forbidden call")
	}
	s.EndTurn()
	s.Close()

	tree := otlptest.Tree(r.Spans(), "gen_ai.tool.name", "yolop.tool.status", "yolop.hook.event", "yolop.extension", "yolop.hook.decision", "yolop.hook.reason")
	t.Logf("received:\n%s", tree)
	want := "turn\n" +
		"  execute_tool echo gen_ai.tool.name=echo yolop.tool.status=ok yolop.extension=echo\n" +
		"    hook pre_tool_use gen_ai.tool.name=echo yolop.hook.event=pre_tool_use yolop.extension=echo yolop.hook.decision=allow\n" +
		"turn\n" +
		"  execute_tool echo gen_ai.tool.name=echo yolop.tool.status=blocked yolop.extension=echo [error: tool \"echo\" blocked by ext:echo: echo: the arguments of echo contain the word \"forbidden\"]\n" +
		"    hook pre_tool_use gen_ai.tool.name=echo yolop.hook.event=pre_tool_use yolop.extension=echo yolop.hook.decision=block yolop.hook.reason=echo: the arguments of echo contain the word \"forbidden\"\n"
	if tree != want {
		t.Errorf("spans:\n%s\nwant:\n%s", tree, want)
	}
}
