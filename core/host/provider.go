package host

import (
	"fmt"
	"net"
	"net/url"
	"slices"

	"yolop.dev/core/yep"
)

// ProviderInfo is a model provider a running extension offers: the
// OpenAI-compatible endpoint its server announced in the handshake,
// clamped by the approved providers facet.
type ProviderInfo struct {
	// Extension is the bare name of the extension that serves it.
	Extension string
	// Name is the provider's name from the approved manifest.
	Name string
	// BaseURL is the announced endpoint, e.g. "http://127.0.0.1:43121/v1":
	// http(s) on a loopback IP literal, with a path.
	BaseURL string
	// Models are the announced models the manifest approved, in the
	// handshake's order, each with its approved context window.
	Models []ProviderModel
}

// Model returns the model with the given id, and whether it is offered.
func (p ProviderInfo) Model(id string) (ProviderModel, bool) {
	i := slices.IndexFunc(p.Models, func(m ProviderModel) bool { return m.ID == id })
	if i < 0 {
		return ProviderModel{}, false
	}
	return p.Models[i], true
}

// Provider returns the model provider the running server announced, after
// the clamp. It reports false when the server is not running, or when it
// announced no provider or none was left after the clamp (see
// [Extension.Refusals] for why).
func (e *Extension) Provider() (ProviderInfo, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.proc == nil || e.proc.contrib == nil || e.proc.contrib.provider == nil {
		return ProviderInfo{}, false
	}
	p := *e.proc.contrib.provider
	p.Models = slices.Clone(p.Models)
	return p, true
}

// Providers lists the model providers of the session's running extensions,
// in harness order. An extension that is not running is left out: the
// session starts an extension with a providers facet with the eager ones.
func (s *Session) Providers() []ProviderInfo {
	s.mu.Lock()
	exts := s.extensions()
	s.mu.Unlock()
	var out []ProviderInfo
	for _, e := range exts {
		if p, ok := e.Provider(); ok {
			out = append(out, p)
		}
	}
	return out
}

// clampProvider narrows the handshake's provider announcement to the
// grant. The server must list the provider token and give its params; the
// base URL must be http(s) on a loopback IP literal with a path, or the
// whole announcement is refused; a model the manifest did not approve is
// refused and left out.
func clampProvider(g *Grant, caps yep.Capabilities, params yep.CapabilityParams, refuse func(kind, name, reason string)) *ProviderInfo {
	var pp yep.ProviderParams
	has, err := params.Decode(yep.CapProvider, &pp)
	if err != nil {
		refuse("capability", yep.CapProvider, fmt.Sprintf("malformed provider params: %v", err))
		return nil
	}
	announced := has || caps.Has(yep.CapProvider)
	if !announced {
		return nil
	}
	if g.Provider == nil {
		refuse("provider", g.Name, "the approved manifest offers no model provider")
		return nil
	}
	name := g.Provider.Name
	switch {
	case !caps.Has(yep.CapProvider):
		refuse("provider", name, `provider params given without the "provider" capability token`)
		return nil
	case !has:
		refuse("provider", name, `the "provider" capability token was given without its params (baseUrl and models)`)
		return nil
	}
	if reason := checkProviderURL(pp.BaseURL); reason != "" {
		refuse("provider", name, reason)
		return nil
	}
	info := &ProviderInfo{Extension: g.Name, Name: name, BaseURL: pp.BaseURL}
	for _, id := range pp.Models {
		if _, dup := info.Model(id); dup {
			continue
		}
		i := slices.IndexFunc(g.Provider.Models, func(m ProviderModel) bool { return m.ID == id })
		if i < 0 {
			refuse("provider", id, fmt.Sprintf("model of provider %s not declared in the approved manifest", name))
			continue
		}
		info.Models = append(info.Models, g.Provider.Models[i])
	}
	if len(info.Models) == 0 {
		if len(pp.Models) == 0 {
			refuse("provider", name, "the announcement lists no models")
		}
		return nil
	}
	return info
}

// checkProviderURL says why base is not an acceptable provider endpoint,
// or returns "".
func checkProviderURL(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return fmt.Sprintf("baseUrl %q is not a URL: %v", base, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Sprintf("baseUrl %q: scheme must be http or https", base)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Sprintf("baseUrl %q: must carry no user info, query or fragment", base)
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	if ip == nil {
		return fmt.Sprintf("baseUrl %q: host %q is not a loopback IP literal (127.0.0.0/8 or ::1); a name such as localhost is not accepted because it can be rebound to another address", base, host)
	}
	if !ip.IsLoopback() {
		return fmt.Sprintf("baseUrl %q: host %s is not loopback (127.0.0.0/8 or ::1); a provider endpoint must stay on this machine", base, host)
	}
	if u.Path == "" || u.Path == "/" {
		return fmt.Sprintf("baseUrl %q: needs a path, e.g. /v1", base)
	}
	return ""
}
