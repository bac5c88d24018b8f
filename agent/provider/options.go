package provider

import (
	"fmt"
	"net/http"
	"os"
)

// Options configure a provider. Every field's zero value is usable.
type Options struct {
	// BaseURL is the API's base URL. Empty: the environment's
	// (OPENAI_BASE_URL or ANTHROPIC_BASE_URL), else the provider's own
	// (https://api.openai.com/v1/, https://api.anthropic.com/). For a
	// local OpenAI-compatible server give its /v1 URL, such as Ollama's
	// http://localhost:11434/v1.
	BaseURL string
	// APIKey is the key. Empty: the environment's (OPENAI_API_KEY or
	// ANTHROPIC_API_KEY); still empty, requests carry none, which local
	// servers accept.
	APIKey string
	// MaxRetries is how many times the SDK retries a request that failed
	// with a connection error, 408, 409, 429 or 5xx, waiting as
	// Retry-After asks or backing off. Zero: the SDK's default, 2.
	// Negative: no retries.
	MaxRetries int
	// HTTPClient sends the requests. Nil: the SDK's default.
	HTTPClient *http.Client
	// Getenv reads the environment. Nil: os.Getenv.
	Getenv func(string) string
	// Name names the provider in its results and error messages, for an
	// endpoint that is neither OpenAI's nor Anthropic's own service and is
	// configured by no environment variable (an extension's, "ext:<name>").
	// Set, the environment is never read and messages point at no
	// environment variable. Empty: "openai" or "anthropic".
	Name string
}

// base is what both providers share: their resolved settings.
type base struct {
	name    string
	key     string
	baseURL string
	retries int // resolved: -1 for the SDK's default
	keyEnv  string
	urlEnv  string
}

func resolve(name string, o Options, keyEnv, urlEnv, defaultURL string) base {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if o.Name != "" {
		name, keyEnv, urlEnv = o.Name, "", ""
		getenv = func(string) string { return "" }
	}
	b := base{name: name, key: o.APIKey, baseURL: o.BaseURL, keyEnv: keyEnv, urlEnv: urlEnv, retries: o.MaxRetries}
	if b.key == "" {
		b.key = getenv(keyEnv)
	}
	if b.baseURL == "" {
		b.baseURL = getenv(urlEnv)
	}
	if b.baseURL == "" {
		b.baseURL = defaultURL
	}
	if o.MaxRetries == 0 {
		b.retries = 2
	} else if o.MaxRetries < 0 {
		b.retries = 0
	}
	return b
}

// attempts says how many requests a failure took.
func (p *base) attempts() string {
	if p.retries == 0 {
		return "1 attempt"
	}
	return fmt.Sprintf("%d attempts", p.retries+1)
}
