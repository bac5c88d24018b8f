package harness_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"yolop.dev/agent"
	"yolop.dev/agent/provider"
	"yolop.dev/agent/scripted"
	"yolop.dev/harness"
	"yolop.dev/harness/secrets"
)

// modelEnv clears every variable model resolution reads, so the tests see
// only what they set.
func modelEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{"YOLOP_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"} {
		t.Setenv(k, "")
	}
}

// modelHarness opens a harness over a new config directory whose
// settings.toml is settings ("" writes none).
func modelHarness(t *testing.T, settings string) *harness.Harness {
	t.Helper()
	dir := t.TempDir()
	if settings != "" {
		if err := os.WriteFile(filepath.Join(dir, "settings.toml"), []byte(settings), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h, err := harness.Open(context.Background(), harness.Options{ConfigDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

const ollamaSettings = `[model]
provider = "openai"
model = "llama3.2"
base_url = "http://localhost:11434/v1"
context_window = 32768
max_tokens = 2048
`

// TestResolveModelPrecedence: the --model flag wins over YOLOP_MODEL,
// which wins over settings.toml; the settings' base URL, window and reply
// cap apply only to what settings.toml names, and the provider's
// environment gives the base URL otherwise.
func TestResolveModelPrecedence(t *testing.T) {
	ctx := context.Background()
	ignore := cmpopts.IgnoreUnexported(harness.ModelConfig{})
	for _, tc := range []struct {
		name, settings, flag string
		env                  map[string]string
		want                 harness.ModelConfig
	}{{
		name:     "settings alone",
		settings: ollamaSettings,
		want: harness.ModelConfig{Provider: "openai", Model: "llama3.2", ModelFrom: harness.FromSettings,
			BaseURL: "http://localhost:11434/v1", BaseURLFrom: harness.FromSettings, ContextWindow: 32768, MaxTokens: 2048},
	}, {
		name:     "YOLOP_MODEL over settings, same provider keeps the base URL",
		settings: ollamaSettings,
		env:      map[string]string{"YOLOP_MODEL": "openai/qwen2.5-coder"},
		want: harness.ModelConfig{Provider: "openai", Model: "qwen2.5-coder", ModelFrom: harness.FromEnv,
			BaseURL: "http://localhost:11434/v1", BaseURLFrom: harness.FromSettings},
	}, {
		name:     "flag over YOLOP_MODEL and settings",
		settings: ollamaSettings,
		env:      map[string]string{"YOLOP_MODEL": "openai/qwen2.5-coder", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/"},
		flag:     "anthropic/claude-sonnet-4-5",
		want: harness.ModelConfig{Provider: "anthropic", Model: "claude-sonnet-4-5", ModelFrom: harness.FromFlag,
			BaseURL: "http://127.0.0.1:9/", BaseURLFrom: "ANTHROPIC_BASE_URL"},
	}, {
		name: "env base URL, no settings",
		env:  map[string]string{"YOLOP_MODEL": "openai/gpt-4.1", "OPENAI_BASE_URL": "http://127.0.0.1:8/v1"},
		want: harness.ModelConfig{Provider: "openai", Model: "gpt-4.1", ModelFrom: harness.FromEnv,
			BaseURL: "http://127.0.0.1:8/v1", BaseURLFrom: "OPENAI_BASE_URL"},
	}, {
		name: "the provider's default",
		flag: "openai/gpt-4.1",
		want: harness.ModelConfig{Provider: "openai", Model: "gpt-4.1", ModelFrom: harness.FromFlag,
			BaseURL: "https://api.openai.com/v1/", BaseURLFrom: harness.FromDefault},
	}, {
		name:     "a model name with slashes (OpenRouter)",
		settings: "[model]\nmodel = \"openai/meta-llama/llama-3.1-70b\"\nbase_url = \"https://openrouter.ai/api/v1\"\n",
		want: harness.ModelConfig{Provider: "openai", Model: "meta-llama/llama-3.1-70b", ModelFrom: harness.FromSettings,
			BaseURL: "https://openrouter.ai/api/v1", BaseURLFrom: harness.FromSettings},
	}, {
		name: "a model an extension serves, from the flag",
		flag: "ext:scripted/scripted-1",
		env:  map[string]string{"OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1"},
		want: harness.ModelConfig{Provider: "ext:scripted", Model: "scripted-1", ModelFrom: harness.FromFlag},
	}, {
		name:     "a model an extension serves, from settings, with its window",
		settings: "[model]\nprovider = \"ext:ollama\"\nmodel = \"llama3.1:8b\"\ncontext_window = 8000\n",
		want:     harness.ModelConfig{Provider: "ext:ollama", Model: "llama3.1:8b", ModelFrom: harness.FromSettings, ContextWindow: 8000},
	}, {
		name:     "settings base URL without a model, model from the flag",
		settings: "[model]\nbase_url = \"http://localhost:8080/v1\"\n",
		flag:     "openai/local",
		want: harness.ModelConfig{Provider: "openai", Model: "local", ModelFrom: harness.FromFlag,
			BaseURL: "http://localhost:8080/v1", BaseURLFrom: harness.FromSettings},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			modelEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			h := modelHarness(t, tc.settings)
			got, err := h.ResolveModel(ctx, tc.flag)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, ignore); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestResolveModelRefusals: an extension's provider, an unknown provider,
// a reference without a model and no configuration at all each fail with
// a message that says what to do.
func TestResolveModelRefusals(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, settings, flag, env string
		want                      []string
	}{
		{name: "ext provider without an extension", flag: "ext:/llama3.2",
			want: []string{"ext:/llama3.2", "names no extension", "ext:<extension>/<model>"}},
		{name: "ext provider with a base URL", settings: "[model]\nprovider = \"ext:ollama\"\nmodel = \"llama3.2\"\nbase_url = \"http://127.0.0.1:11434/v1\"\n",
			want: []string{"settings.toml", "base_url", "ext:ollama", "announces its own endpoint"}},
		{name: "unknown provider from YOLOP_MODEL", env: "mistral/large",
			want: []string{"YOLOP_MODEL", `unknown provider "mistral"`, `"openai"`, `"anthropic"`}},
		{name: "unknown provider in settings", settings: "[model]\nprovider = \"gemini\"\nmodel = \"pro\"\n",
			want: []string{"settings.toml", `unknown provider "gemini"`, `"openai"`, `"anthropic"`}},
		{name: "no model in the reference", flag: "openai",
			want: []string{"--model", `"openai"`, "<provider>/<model>", "openai/gpt-4.1"}},
		{name: "provider but no model in settings", settings: "[model]\nprovider = \"openai\"\n",
			want: []string{"settings.toml", "no model"}},
		{name: "nothing configured",
			want: []string{"no model is configured", "--model", "YOLOP_MODEL", "[model]"}},
		{name: "malformed settings", settings: "[model]\nprovider = \"openai\"\nmodel = \"m\"\ncontext_window = -5\n",
			want: []string{"model.context_window"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			modelEnv(t)
			t.Setenv("YOLOP_MODEL", tc.env)
			h := modelHarness(t, tc.settings)
			_, err := h.ResolveModel(ctx, tc.flag)
			if err == nil {
				t.Fatal("resolved; want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
		})
	}
}

// TestModelKeySources: the provider's environment variable wins over the
// key stored in connections.toml, which is used when the variable is
// unset; the key is stored under a name no extension can have and never
// prints.
func TestModelKeySources(t *testing.T) {
	ctx := context.Background()
	modelEnv(t)
	h := modelHarness(t, "")
	if got, err := h.ResolveModel(ctx, "openai/gpt-4.1"); err != nil || got.KeyFrom != "" {
		t.Fatalf("no key anywhere: KeyFrom=%q, %v", got.KeyFrom, err)
	}
	if err := h.SetModelKey(ctx, "openai", secrets.New("sk-stored")); err != nil {
		t.Fatal(err)
	}
	got, err := h.ResolveModel(ctx, "openai/gpt-4.1")
	if err != nil || got.KeyFrom != harness.FromConnections {
		t.Fatalf("stored key: KeyFrom=%q, %v", got.KeyFrom, err)
	}
	if s := got.String(); strings.Contains(s, "sk-stored") {
		t.Fatalf("the config prints its key: %s", s)
	}
	if got, _ := h.ResolveModel(ctx, "anthropic/claude-sonnet-4-5"); got.KeyFrom != "" {
		t.Fatalf("the openai key serves anthropic: KeyFrom=%q", got.KeyFrom)
	}
	t.Setenv("OPENAI_API_KEY", "sk-env")
	if got, _ := h.ResolveModel(ctx, "openai/gpt-4.1"); got.KeyFrom != "OPENAI_API_KEY" {
		t.Fatalf("env and stored key: KeyFrom=%q, want OPENAI_API_KEY", got.KeyFrom)
	}
	if v, ok, err := h.Secrets().Get(ctx, harness.ModelSecrets, "openai_api_key"); err != nil || !ok || v.Reveal() != "sk-stored" {
		t.Fatalf("connections.toml holds %v, %v, %v", v, ok, err)
	}
	if err := h.SetModelKey(ctx, "mistral", secrets.New("x")); err == nil || !strings.Contains(err.Error(), `"openai"`) {
		t.Fatalf("a key for an unknown provider: %v", err)
	}
	if ok, err := h.DeleteModelKey(ctx, "openai"); err != nil || !ok {
		t.Fatalf("delete: %v, %v", ok, err)
	}
	if ok, err := h.DeleteModelKey(ctx, "openai"); err != nil || ok {
		t.Fatalf("delete again: %v, %v", ok, err)
	}
}

// TestModelConfigured: YOLOP_MODEL or a model in settings.toml configure
// a model; a base URL alone does not, and a malformed [model] counts as
// configured so NewAgent reports it.
func TestModelConfigured(t *testing.T) {
	modelEnv(t)
	if ref, ok := modelHarness(t, "").ModelConfigured(); ok {
		t.Fatalf("nothing configured: %q, true", ref)
	}
	if ref, ok := modelHarness(t, "[model]\nbase_url = \"http://localhost:11434/v1\"\n").ModelConfigured(); ok {
		t.Fatalf("a base URL alone: %q, true", ref)
	}
	if ref, ok := modelHarness(t, ollamaSettings).ModelConfigured(); !ok || ref != "openai/llama3.2" {
		t.Fatalf("settings: %q, %v", ref, ok)
	}
	if _, ok := modelHarness(t, "[model]\nmax_tokens = \"lots\"\n").ModelConfigured(); !ok {
		t.Fatal("a malformed [model] is not configured; NewAgent would never report it")
	}
	t.Setenv("YOLOP_MODEL", "anthropic/claude-sonnet-4-5")
	if ref, ok := modelHarness(t, ollamaSettings).ModelConfigured(); !ok || ref != "anthropic/claude-sonnet-4-5" {
		t.Fatalf("YOLOP_MODEL: %q, %v", ref, ok)
	}
}

const answerScript = `{"steps": [{"when": {"user": "hello"}, "reply": {"text": "hi from the model"}}]}`

// TestNewAgentUsesTheResolvedModel runs a turn with an agent built from
// settings.toml alone, for each provider, against a scripted server that
// requires the key stored in connections.toml: the base URL, the model
// and the stored key all reach the server.
func TestNewAgentUsesTheResolvedModel(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ provider, path string }{{"openai", "/v1"}, {"anthropic", ""}} {
		t.Run(tc.provider, func(t *testing.T) {
			modelEnv(t)
			script, err := scripted.Parse([]byte(answerScript))
			if err != nil {
				t.Fatal(err)
			}
			srv := scripted.NewServer(script, scripted.Options{APIKey: "sk-stored-" + tc.provider})
			if err := srv.Listen("127.0.0.1:0"); err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			h := modelHarness(t, "[model]\nprovider = \""+tc.provider+"\"\nmodel = \"scripted-"+tc.provider+"\"\nbase_url = \""+srv.URL()+tc.path+"\"\n")
			if err := h.SetModelKey(ctx, tc.provider, secrets.New("sk-stored-"+tc.provider)); err != nil {
				t.Fatal(err)
			}
			s, _ := h.NewSession(ctx, harness.SessionOptions{NoEnabled: true, WorkspaceRoot: t.TempDir()})
			defer s.Close()
			if err := s.Start(ctx); err != nil {
				t.Fatal(err)
			}
			a, err := h.NewAgent(ctx, s, harness.AgentOptions{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Turn(ctx, "hello")
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "hi from the model" || res.Stop != agent.StopDone {
				t.Fatalf("turn = %+v", res)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || reqs[0].Status != 200 {
				t.Fatalf("requests: %+v", reqs)
			}
			model := ""
			if reqs[0].Chat != nil {
				model = reqs[0].Chat.Model
			} else if reqs[0].Messages != nil {
				model = reqs[0].Messages.Model
			}
			if model != "scripted-"+tc.provider {
				t.Errorf("the request named model %q", model)
			}
			if sys := systemText(reqs[0]); !strings.Contains(sys, harness.BasePrompt) {
				t.Errorf("the system prompt lacks the base prompt: %q", sys)
			}
		})
	}
}

// systemText is the system prompt a recorded request carried.
func systemText(r scripted.Request) string {
	if r.Chat != nil && len(r.Chat.Messages) > 0 {
		return r.Chat.Messages[0].Text()
	}
	if r.Messages != nil {
		return string(r.Messages.System) // JSON: a string or text blocks
	}
	return ""
}

// TestNewAgentWithAProvider: a front-end's own provider (the demo's
// scripted model) bypasses resolution, so nothing need be configured, and
// the bounds reach the agent.
func TestNewAgentWithAProvider(t *testing.T) {
	ctx := context.Background()
	modelEnv(t)
	script, err := scripted.Parse([]byte(`{"steps": [{"when": {"any": true}, "reply": {"text": "calling", "tool_calls": [{"name": "nothing_here", "arguments": {}}]}, "repeat": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := scripted.NewServer(script, scripted.Options{})
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h := modelHarness(t, "")
	s, _ := h.NewSession(ctx, harness.SessionOptions{NoEnabled: true, WorkspaceRoot: t.TempDir()})
	defer s.Close()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	p := provider.OpenAI(provider.Options{BaseURL: srv.URL() + "/v1/"})
	a, err := h.NewAgent(ctx, s, harness.AgentOptions{Provider: p, Model: "scripted", MaxSteps: 2})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Turn(ctx, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != agent.StopMaxSteps || res.Steps != 2 {
		t.Fatalf("turn = %+v; want stopped at 2 steps", res)
	}
	if _, err := h.NewAgent(ctx, s, harness.AgentOptions{Provider: p}); err == nil {
		t.Fatal("a provider without a model name was accepted")
	}
	// A model an extension serves is found in the session at each
	// request: one that is not there fails the turn, saying so.
	a, err = h.NewAgent(ctx, s, harness.AgentOptions{Model: "ext:demo/scripted"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err = a.Turn(ctx, "hello"); err == nil || !errors.Is(err, harness.ErrModelConfig) || !strings.Contains(err.Error(), `extension "demo" is not in this session`) {
		t.Fatalf("ext: model turn = %v; want ErrModelConfig, not in this session", err)
	}
}
