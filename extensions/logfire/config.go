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

// The OpenTelemetry exporter variables the extension honours when its
// config names no endpoint. The manifest passes them on from the user's
// environment (capabilityServer.env), since a server inherits no
// OTEL_* variable otherwise.
const (
	// OTLPEndpointEnv is the OTLP/HTTP base URL, as in the OpenTelemetry
	// SDKs: traces go to <endpoint>/v1/traces.
	OTLPEndpointEnv = "OTEL_EXPORTER_OTLP_ENDPOINT"
	// OTLPHeadersEnv holds headers sent with every export, as
	// comma-separated key=value pairs with percent-encoded values
	// ("authorization=Bearer%20abc,x-team=core").
	OTLPHeadersEnv = "OTEL_EXPORTER_OTLP_HEADERS"
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
	// headers go with every export: those of OTLPHeadersEnv, and the
	// token as Authorization, which wins over a header of that name.
	headers map[string]string
}

// resolve merges config, environment and defaults, and checks the
// endpoint. The endpoint is the config's, else LOGFIRE_ENDPOINT (the
// config field's variable), else OTEL_EXPORTER_OTLP_ENDPOINT, else
// [DefaultEndpoint]. Its errors never contain the token or a header
// value.
func resolve(raw json.RawMessage, getenv func(string) string) (settings, error) {
	var c Config
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &c); err != nil {
			return settings{}, fmt.Errorf("logfire: config: %w", err)
		}
	}
	endpoint, from := first(c.Endpoint, getenv(EndpointEnv)), "the extension's config"
	if endpoint == "" {
		endpoint, from = first(getenv(OTLPEndpointEnv), DefaultEndpoint), OTLPEndpointEnv
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return settings{}, fmt.Errorf("logfire: endpoint %q (from %s) is not an http(s) URL; set one with `yolop ext config set logfire endpoint <url>` (the server reads it as %s) or in %s", endpoint, from, EndpointEnv, OTLPEndpointEnv)
	}
	headers, err := parseHeaders(getenv(OTLPHeadersEnv))
	if err != nil {
		return settings{}, fmt.Errorf("logfire: %s: %w; write it as key=value pairs separated by commas, values percent-encoded", OTLPHeadersEnv, err)
	}
	token := strings.TrimSpace(getenv(TokenEnv))
	if token != "" {
		// Logfire takes the write token as the bare Authorization value.
		for k := range headers {
			if strings.EqualFold(k, "Authorization") {
				delete(headers, k)
			}
		}
		headers["Authorization"] = token
	}
	if !strings.HasSuffix(u.Path, "/v1/traces") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	}
	return settings{
		tracesURL:   u.String(),
		serviceName: first(c.ServiceName, getenv(ServiceNameEnv), DefaultServiceName),
		token:       token,
		headers:     headers,
	}, nil
}

// parseHeaders reads OTEL_EXPORTER_OTLP_HEADERS: "k1=v1,k2=v2", spaces
// around keys and values ignored, values percent-decoded, as the
// OpenTelemetry SDKs read it. Its errors name the key, never a value.
func parseHeaders(s string) (map[string]string, error) {
	headers := map[string]string{}
	for i, pair := range strings.Split(s, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("entry %d has no key=value", i+1)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("the value of %q is not percent-encoded correctly", k)
		}
		headers[k] = dv
	}
	return headers, nil
}

// secrets are the values the extension keeps out of what it writes: the
// token and every header value.
func (st settings) secrets() []string {
	var out []string
	for _, v := range st.headers {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

func first(vals ...string) string {
	for _, v := range vals {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}
