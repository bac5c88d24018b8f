package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode"

	"yolop.dev/agent"
	"yolop.dev/agent/provider"
	"yolop.dev/agent/tokens"
	"yolop.dev/harness/secrets"
	"yolop.dev/harness/settings"
)

// The model providers the harness builds. A model reference is
// "<provider>/<model>": "openai/gpt-4.1", "anthropic/claude-sonnet-4-5".
// "openai" is any server that speaks OpenAI's Chat Completions API
// (OpenAI, Ollama, vLLM, llama.cpp's server, LM Studio, OpenRouter). A
// model an extension serves (the providers facet) is
// "ext:<extension>/<model>"; see [ExtProviderPrefix].
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
)

// ExtProviderPrefix starts the provider of a model an extension serves:
// "ext:<extension>", the extension's capability ref.
const ExtProviderPrefix = settings.ExtPrefix

// ModelEnv is the environment variable naming the model when no --model
// flag does: a reference such as "openai/gpt-4.1".
const ModelEnv = "YOLOP_MODEL"

// ModelSecrets is the name model API keys are stored under in the
// credential store: connections.toml's table ["ext:yolop.model"], one
// field per provider ("openai_api_key", "anthropic_api_key"; see
// [ModelKeyField]). An extension name never holds a dot, so no extension
// can own or remove that table, and the scrubber redacts the keys as it
// redacts every stored secret.
const ModelSecrets = "yolop.model"

// ModelKeyField is the field of [ModelSecrets] holding provider's key.
func ModelKeyField(provider string) string { return provider + "_api_key" }

// Where a [ModelConfig] value came from.
const (
	FromFlag        = "--model"
	FromEnv         = ModelEnv
	FromSettings    = settings.FileName
	FromDefault     = "default"
	FromConnections = secrets.FileName
)

// ErrModelConfig is wrapped by every error about which model to ask: none
// configured, an unknown or unsupported provider, a malformed reference or
// [model] table.
var ErrModelConfig = errors.New("model configuration")

// A ModelConfig is the model a front-end's agent asks, resolved by
// [Harness.ResolveModel], with where each value came from. It never
// prints its key.
type ModelConfig struct {
	// Provider is [ProviderOpenAI], [ProviderAnthropic] or
	// "ext:<extension>" for a model an extension serves; Model is the
	// model as the provider names it.
	Provider, Model string
	// ModelFrom is [FromFlag], [FromEnv] or [FromSettings].
	ModelFrom string
	// BaseURL is the API's base URL; BaseURLFrom is [FromSettings], the
	// provider's environment variable (OPENAI_BASE_URL,
	// ANTHROPIC_BASE_URL) or [FromDefault]. Both are empty for an
	// extension's model: its server announces the URL when it starts.
	BaseURL, BaseURLFrom string
	// KeyFrom is where the API key comes from: the provider's environment
	// variable (OPENAI_API_KEY, ANTHROPIC_API_KEY), [FromConnections], or
	// "" when there is none (a local server needs none).
	KeyFrom string
	// ContextWindow and MaxTokens are settings.toml's, which apply to the
	// model it names; zero leaves the agent's defaults. For an extension's
	// model the window the user approved in its manifest applies, which
	// ContextWindow may lower but never raise.
	ContextWindow, MaxTokens int

	key secrets.Secret
}

// Ref is the model's reference, "<provider>/<model>".
func (c ModelConfig) Ref() string { return c.Provider + "/" + c.Model }

// Extension is the name of the extension that serves the model, and
// whether one does: the provider is "ext:<name>".
func (c ModelConfig) Extension() (string, bool) {
	return strings.CutPrefix(c.Provider, ExtProviderPrefix)
}

// KeyHint says, for an authentication failure, where the key came from
// and how to replace it.
func (c ModelConfig) KeyHint() string {
	if name, ok := c.Extension(); ok {
		return fmt.Sprintf("the model is served by extension %q, which gets no API key from yolop; see its configuration (yolop ext info %s)", name, name)
	}
	switch c.KeyFrom {
	case FromConnections:
		return fmt.Sprintf("the key used is the one stored in %s: replace it with `yolop model key %s`", FromConnections, c.Provider)
	case "":
		return fmt.Sprintf("or store a key with `yolop model key %s`", c.Provider)
	}
	return fmt.Sprintf("the key used is $%s (it takes precedence over a key stored with `yolop model key %s`)", c.KeyFrom, c.Provider)
}

// String describes the configuration, never the key.
func (c ModelConfig) String() string {
	if name, ok := c.Extension(); ok {
		return fmt.Sprintf("%s (from %s), served by extension %q at the endpoint it announces", c.Ref(), c.ModelFrom, name)
	}
	key := "no API key"
	if c.KeyFrom != "" {
		key = "API key from " + c.KeyFrom
	}
	return fmt.Sprintf("%s (from %s) at %s (from %s), %s", c.Ref(), c.ModelFrom, c.BaseURL, c.BaseURLFrom, key)
}

// providerEnv are a provider's environment variables and default base URL.
var providerEnv = map[string]struct{ key, url, defaultURL string }{
	ProviderOpenAI:    {"OPENAI_API_KEY", "OPENAI_BASE_URL", "https://api.openai.com/v1/"},
	ProviderAnthropic: {"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "https://api.anthropic.com/"},
}

// CheckModelProvider returns nil for a provider whose API key yolop
// stores ([ProviderOpenAI], [ProviderAnthropic]), and otherwise an error
// wrapping [ErrModelConfig] that names them.
func CheckModelProvider(name string) error {
	if _, ok := strings.CutPrefix(name, ExtProviderPrefix); ok {
		return fmt.Errorf("%w: provider %q is an extension's: yolop stores no API key for it (an extension's endpoint is on this machine and takes none from yolop)", ErrModelConfig, name)
	}
	return checkProvider(name, "provider "+strconv.Quote(name))
}

// ModelKeyEnv is the environment variable holding provider's API key:
// OPENAI_API_KEY, ANTHROPIC_API_KEY; "" for a provider the harness does
// not build.
func ModelKeyEnv(provider string) string { return providerEnv[provider].key }

// checkProvider refuses a provider the harness cannot build; from names
// where the name came from.
func checkProvider(name, from string) error {
	if _, ok := providerEnv[name]; ok {
		return nil
	}
	if ext, ok := strings.CutPrefix(name, ExtProviderPrefix); ok {
		if ext == "" || strings.ContainsFunc(ext, unicode.IsSpace) {
			return fmt.Errorf("%w: %s: %q names no extension: write ext:<extension>/<model>, such as ext:scripted/scripted", ErrModelConfig, from, name)
		}
		return nil
	}
	return fmt.Errorf("%w: %s: unknown provider %q; the providers are %q (OpenAI and any OpenAI-compatible server: Ollama, vLLM, llama.cpp, LM Studio, OpenRouter), %q, and ext:<extension> for a model an extension serves (see yolop models)", ErrModelConfig, from, name, ProviderOpenAI, ProviderAnthropic)
}

// parseRef splits a reference "<provider>/<model>" at its first slash (a
// model name may hold more); from names where it came from.
func parseRef(ref, from string) (prov, model string, err error) {
	ref = strings.TrimSpace(ref)
	prov, model, ok := strings.Cut(ref, "/")
	if _, known := providerEnv[prov]; !ok && !known && !strings.HasPrefix(prov, ExtProviderPrefix) {
		return "", "", fmt.Errorf("%w: %s %q is not a model reference: write <provider>/<model>, such as openai/gpt-4.1 or anthropic/claude-sonnet-4-5", ErrModelConfig, from, ref)
	}
	if err := checkProvider(prov, fmt.Sprintf("%s %q", from, ref)); err != nil {
		return "", "", err
	}
	if model == "" {
		return "", "", fmt.Errorf("%w: %s %q names no model: write <provider>/<model>, such as openai/gpt-4.1 or anthropic/claude-sonnet-4-5", ErrModelConfig, from, ref)
	}
	return prov, model, nil
}

// ResolveModel resolves the model a front-end's agent asks. flag is a
// --model reference; empty, $YOLOP_MODEL is; empty too, settings.toml's
// [model] table names it (provider and model, or model as a reference).
// The base URL is settings.toml's base_url when the table names the same
// provider or none, else the provider's environment variable
// (OPENAI_BASE_URL, ANTHROPIC_BASE_URL), else the provider's own. The key
// is the provider's environment variable (OPENAI_API_KEY,
// ANTHROPIC_API_KEY) when it is set, else the one stored with
// [Harness.SetModelKey] (`yolop model key`), else none. context_window
// and max_tokens apply when settings.toml names the resolved model.
// Every failure wraps [ErrModelConfig] or the settings' own error, and
// says what to write.
func (h *Harness) ResolveModel(ctx context.Context, flag string) (ModelConfig, error) {
	sm, _, err := h.settings.Model(ctx)
	if err != nil {
		return ModelConfig{}, err
	}
	// What settings.toml names, if anything.
	var setProv, setModel string
	switch {
	case sm.Provider != "" && sm.Model != "":
		setProv, setModel = sm.Provider, sm.Model
		if err := checkProvider(setProv, fmt.Sprintf("%s [model] provider", h.settings.Path())); err != nil {
			return ModelConfig{}, err
		}
	case sm.Model != "":
		if setProv, setModel, err = parseRef(sm.Model, h.settings.Path()+" [model] model"); err != nil {
			return ModelConfig{}, err
		}
	case sm.Provider != "" && flag == "" && os.Getenv(ModelEnv) == "":
		return ModelConfig{}, fmt.Errorf("%w: %s [model] sets provider = %q but no model; add model = \"<name>\" (such as model = \"gpt-4.1\")", ErrModelConfig, h.settings.Path(), sm.Provider)
	}

	var c ModelConfig
	switch env := strings.TrimSpace(os.Getenv(ModelEnv)); {
	case flag != "":
		c.ModelFrom = FromFlag
		c.Provider, c.Model, err = parseRef(flag, FromFlag)
	case env != "":
		c.ModelFrom = FromEnv
		c.Provider, c.Model, err = parseRef(env, FromEnv)
	case setModel != "":
		c.ModelFrom = FromSettings
		c.Provider, c.Model = setProv, setModel
	default:
		return ModelConfig{}, fmt.Errorf("%w: no model is configured: pass --model <provider>/<model> (such as openai/gpt-4.1 or anthropic/claude-sonnet-4-5), set %s, or add to %s:\n\n[model]\nprovider = \"openai\"\nmodel = \"gpt-4.1\"\n\n(for a local server such as Ollama add base_url = \"http://localhost:11434/v1\"; see docs/agent.md)", ErrModelConfig, ModelEnv, h.settings.Path())
	}
	if err != nil {
		return ModelConfig{}, err
	}

	if setProv == c.Provider && setModel == c.Model {
		c.ContextWindow, c.MaxTokens = sm.ContextWindow, sm.MaxTokens
	}
	sameProvider := sm.Provider == c.Provider || (sm.Provider == "" && (setProv == "" || setProv == c.Provider))
	if _, ok := c.Extension(); ok {
		// The extension's server announces its endpoint; yolop sends it
		// no key of the user's.
		if sm.BaseURL != "" && sameProvider {
			return ModelConfig{}, fmt.Errorf("%w: %s [model] sets base_url for %s, whose server announces its own endpoint; remove base_url", ErrModelConfig, h.settings.Path(), c.Provider)
		}
		return c, nil
	}
	env := providerEnv[c.Provider]
	switch {
	case sm.BaseURL != "" && sameProvider:
		c.BaseURL, c.BaseURLFrom = sm.BaseURL, FromSettings
	case os.Getenv(env.url) != "":
		c.BaseURL, c.BaseURLFrom = os.Getenv(env.url), env.url
	default:
		c.BaseURL, c.BaseURLFrom = env.defaultURL, FromDefault
	}

	if v := os.Getenv(env.key); v != "" {
		c.key, c.KeyFrom = secrets.New(v), env.key
		return c, nil
	}
	v, ok, err := h.secrets.Get(ctx, ModelSecrets, ModelKeyField(c.Provider))
	if err != nil {
		return ModelConfig{}, fmt.Errorf("reading the %s API key: %w (or set %s)", c.Provider, err, env.key)
	}
	if ok {
		c.key, c.KeyFrom = v, FromConnections
	}
	return c, nil
}

// ModelConfigured reports whether a model is configured apart from a
// --model flag: $YOLOP_MODEL, or a model in settings.toml's [model]. ref
// is the reference it names. A [model] table that does not parse counts
// as configured (ref empty), so that [Harness.NewAgent] reports it.
func (h *Harness) ModelConfigured() (ref string, ok bool) {
	if env := strings.TrimSpace(os.Getenv(ModelEnv)); env != "" {
		return env, true
	}
	sm, _, err := h.settings.Model(context.Background())
	switch {
	case err != nil:
		return "", true
	case sm.Model == "":
		return "", false
	case sm.Provider != "":
		return sm.Provider + "/" + sm.Model, true
	default:
		return sm.Model, true
	}
}

// NoModelAdvice is what a front-end answers a message with when no model
// is configured: the ways to configure one.
const NoModelAdvice = "configure one with `yolop model`, under [model] in settings.toml, with YOLOP_MODEL or with --model <provider>/<model> (such as openai/gpt-4.1 or anthropic/claude-sonnet-4-5)"

// SessionModel reports whether an interactive session talks to a model,
// and which: flag (a --model) when set, else the configured one. A
// configured model that does not resolve (a malformed settings.toml, say)
// is no model, with a warning saying why, so the session still runs its
// commands; a flag that does not resolve fails later, in
// [Harness.NewAgent].
func (h *Harness) SessionModel(ctx context.Context, flag string) (ref string, ok bool, warning string) {
	if flag != "" {
		return flag, true, ""
	}
	if ref, ok = h.ModelConfigured(); !ok {
		return "", false, ""
	}
	if _, err := h.ResolveModel(ctx, ""); err != nil {
		return "", false, "no model for this session: " + err.Error()
	}
	return ref, true, ""
}

// SetModelKey stores provider's API key in connections.toml (see
// [ModelSecrets]), replacing any previous one.
func (h *Harness) SetModelKey(ctx context.Context, provider string, key secrets.Secret) error {
	if err := CheckModelProvider(provider); err != nil {
		return err
	}
	if key.IsZero() {
		return fmt.Errorf("%w: the %s API key is empty; nothing was saved", ErrModelConfig, provider)
	}
	if err := h.secrets.Set(ctx, ModelSecrets, ModelKeyField(provider), key); err != nil {
		return fmt.Errorf("storing the %s API key: %w", provider, err)
	}
	h.ReloadScrubber(ctx)
	return nil
}

// DeleteModelKey removes provider's stored API key and reports whether
// one was stored.
func (h *Harness) DeleteModelKey(ctx context.Context, provider string) (bool, error) {
	if err := CheckModelProvider(provider); err != nil {
		return false, err
	}
	ok, err := h.secrets.Delete(ctx, ModelSecrets, ModelKeyField(provider))
	if err != nil {
		return false, fmt.Errorf("removing the %s API key: %w", provider, err)
	}
	h.ReloadScrubber(ctx)
	return ok, nil
}

// AgentOptions configure [Harness.NewAgent].
type AgentOptions struct {
	// Model is a --model reference, "<provider>/<model>"; empty:
	// $YOLOP_MODEL, then settings.toml's [model] (see
	// [Harness.ResolveModel]). With Provider set it names the model only.
	Model string
	// Provider, when set, answers the model requests instead of the
	// resolved one (the demo's scripted model); nothing is resolved.
	Provider provider.Provider
	// MaxSteps bounds a turn's model requests; zero: the agent's default.
	MaxSteps int
	// MaxTurnTokens bounds a turn's output tokens; zero: no bound.
	MaxTurnTokens int64
}

// NewAgent returns an agent over s asking the model o names (see
// [Harness.ResolveModel]), with the host's [BasePrompt] and token counts
// from [tokens.Count]. A model an extension serves, "ext:<name>/<model>",
// is asked through that extension of s (see [ExtProviderPrefix]): each
// request finds it in the session, starts it if need be and streams from
// the endpoint it announced, within what the user approved.
func (h *Harness) NewAgent(ctx context.Context, s *Session, o AgentOptions) (*agent.Agent, error) {
	ao := agent.Options{
		Session: s.Session, Provider: o.Provider, Model: o.Model, BasePrompt: BasePrompt,
		MaxSteps: o.MaxSteps, MaxTurnTokens: o.MaxTurnTokens, Count: tokens.Count,
	}
	if o.Provider == nil {
		c, err := h.ResolveModel(ctx, o.Model)
		if err != nil {
			return nil, err
		}
		ao.Model, ao.ContextWindow, ao.MaxTokens = c.Model, c.ContextWindow, c.MaxTokens
		if name, ok := c.Extension(); ok {
			ao.Provider = newExtProvider(h, s, name)
			ao.ContextWindow, _ = h.ModelContextWindow(ctx, s, c)
		} else {
			ao.Provider = c.provider()
		}
	}
	return agent.New(ao)
}

// provider builds the configuration's provider.
func (c ModelConfig) provider() provider.Provider {
	po := provider.Options{BaseURL: c.BaseURL, APIKey: c.key.Reveal()}
	if c.Provider == ProviderAnthropic {
		return provider.Anthropic(po)
	}
	return provider.OpenAI(po)
}
