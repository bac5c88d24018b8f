package logfire

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// The environment variables the manifest's config_schema maps its fields
// to, the same ones Logfire's own SDKs read.
const (
	TokenEnv       = "LOGFIRE_TOKEN"
	EndpointEnv    = "LOGFIRE_ENDPOINT"
	ServiceNameEnv = "OTEL_SERVICE_NAME"
)

// DefaultEndpoint is Logfire's OTLP/HTTP base URL (US region); traces go to
// its /v1/traces. For the EU region use https://logfire-eu.pydantic.dev.
const DefaultEndpoint = "https://logfire-api.pydantic.dev"

// DefaultServiceName is the service.name of the exported resource when
// none is configured.
const DefaultServiceName = "yolop"

// Config is the extension's plain config as it arrives in
// initialize.config. The token is never part of it.
type Config struct {
	// Endpoint is the OTLP/HTTP base URL (traces go to <endpoint>/v1/traces)
	// or the full traces URL.
	Endpoint string `json:"endpoint"`
	// ServiceName is the resource's service.name.
	ServiceName string `json:"service_name"`
}

// settings is what the pipeline is built from.
type settings struct {
	tracesURL   string
	serviceName string
	token       string
}

// resolve merges config, environment and defaults, and checks the
// endpoint. Its errors never contain the token.
func resolve(raw json.RawMessage, getenv func(string) string) (settings, error) {
	var c Config
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &c); err != nil {
			return settings{}, fmt.Errorf("logfire: config: %w", err)
		}
	}
	endpoint := first(c.Endpoint, getenv(EndpointEnv), DefaultEndpoint)
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return settings{}, fmt.Errorf("logfire: endpoint %q is not an http(s) URL; set endpoint in the extension's config or %s", endpoint, EndpointEnv)
	}
	if !strings.HasSuffix(u.Path, "/v1/traces") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	}
	return settings{
		tracesURL:   u.String(),
		serviceName: first(c.ServiceName, getenv(ServiceNameEnv), DefaultServiceName),
		token:       strings.TrimSpace(getenv(TokenEnv)),
	}, nil
}

func first(vals ...string) string {
	for _, v := range vals {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}
