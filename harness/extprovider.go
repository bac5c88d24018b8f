package harness

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"yolop.dev/agent"
	"yolop.dev/agent/provider"
	"yolop.dev/core/host"
	"yolop.dev/harness/settings"
)

// extKey is the API key every request to an extension's endpoint carries:
// a placeholder, so that no key of the user's (OPENAI_API_KEY, a stored
// key) ever reaches an extension.
const extKey = "yolop-extension"

// extExitWait bounds how long a request whose endpoint died waits for the
// host to record the server's exit, so that the next request starts a new
// server rather than finding the dead one.
const extExitWait = 5 * time.Second

// An extProvider asks a model an extension of the session serves (the
// providers facet): each request finds the extension in the session,
// starts it if need be (a crashed server respawns with the backoff and the
// circuit breaker of any extension), takes the endpoint its server
// announced, within what the user approved, and streams from it over the
// same OpenAI-compatible client as any provider.
type extProvider struct {
	h    *Harness
	s    *Session
	name string

	mu     sync.Mutex
	url    string                   // the base URL client talks to
	client *provider.OpenAIProvider // rebuilt when the URL changes (a respawned server)
	conns  *http.Transport          // client's connections
}

func newExtProvider(h *Harness, s *Session, name string) *extProvider {
	return &extProvider{h: h, s: s, name: name}
}

// Name is "ext:<extension>".
func (p *extProvider) Name() string { return ExtProviderPrefix + p.name }

// Stream implements [provider.Provider].
func (p *extProvider) Stream(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (provider.Result, error) {
	for attempt := 0; ; attempt++ {
		e, info, err := p.endpoint(ctx, req.Model)
		if err != nil {
			return provider.Result{Provider: p.Name(), FinishReason: provider.FinishError}, err
		}
		pid := e.PID()
		var refused atomic.Bool
		res, err := p.clientFor(info.BaseURL).Stream(context.WithValue(ctx, refusedKey{}, &refused), req, onDelta)
		res.Provider = p.Name()
		if err == nil {
			return res, nil
		}
		if ctx.Err() != nil {
			return res, err
		}
		if !p.died(ctx, e, info.BaseURL, pid) {
			return res, fmt.Errorf("the model provider extension %q: %w", p.name, err)
		}
		if refused.Load() && attempt == 0 {
			// The server had died before the request reached it, and the
			// host had not noticed yet: start it again, once.
			continue
		}
		return res, fmt.Errorf("the model provider extension %q stopped mid-reply: %w; the next message starts it again", p.name, err)
	}
}

// endpoint finds the extension, starts it and returns the provider it
// announced, which must serve model.
func (p *extProvider) endpoint(ctx context.Context, model string) (*host.Extension, host.ProviderInfo, error) {
	e, ok := p.s.Extension(p.name)
	if !ok {
		return nil, host.ProviderInfo{}, p.h.notInSession(ctx, p.name)
	}
	if e.Grant().Provider == nil {
		return nil, host.ProviderInfo{}, fmt.Errorf("%w: extension %q serves no models: its manifest has no provider facet (yolop models lists the models extensions serve)", ErrModelConfig, p.name)
	}
	if err := e.Start(ctx); err != nil {
		return nil, host.ProviderInfo{}, fmt.Errorf("the model provider extension %q did not start: %w", p.name, err)
	}
	info, ok := e.Provider()
	if !ok {
		if why := providerRefusals(e.Refusals(), ""); why != "" {
			return nil, host.ProviderInfo{}, fmt.Errorf("extension %q announced no usable provider (refused: %s)", p.name, why)
		}
		return nil, host.ProviderInfo{}, fmt.Errorf("extension %q announced no model provider when it started: its server must announce \"provider\" with its endpoint's baseUrl and models", p.name)
	}
	if _, ok := info.Model(model); !ok {
		ids := make([]string, len(info.Models))
		for i, m := range info.Models {
			ids[i] = m.ID
		}
		msg := fmt.Sprintf("extension %q does not serve model %q; it serves %s (ask one as ext:%s/<model>)", p.name, model, strings.Join(ids, ", "), p.name)
		if why := providerRefusals(e.Refusals(), model); why != "" {
			msg += "; refused: " + why
		}
		return nil, host.ProviderInfo{}, fmt.Errorf("%w: %s", ErrModelConfig, msg)
	}
	return e, info, nil
}

// providerRefusals joins the reasons of the refusals of kind "provider",
// only model's when model is set.
func providerRefusals(rs []host.Refusal, model string) string {
	var out []string
	for _, r := range rs {
		if r.Kind == "provider" && (model == "" || r.Name == model) {
			out = append(out, r.Name+": "+r.Reason)
		}
	}
	return strings.Join(out, "; ")
}

// notInSession says why extension name is not in the session and what to
// do about it.
func (h *Harness) notInSession(ctx context.Context, name string) error {
	ents, _ := h.settings.Extensions(ctx)
	i := slices.IndexFunc(ents, func(e settings.Entry) bool { return e.Name == name })
	installed := false
	if names, err := h.mgr.Names(ctx); err == nil {
		installed = slices.Contains(names, name)
	}
	switch {
	case installed && (i < 0 || !ents[i].Enabled):
		return fmt.Errorf("%w: extension %q is not in this session: enable it with yolop ext enable %s", ErrModelConfig, name, name)
	case installed:
		return fmt.Errorf("%w: extension %q is enabled but not in this session: it did not load (see the session's warnings and yolop ext list), or the session leaves out the enabled extensions", ErrModelConfig, name)
	}
	return fmt.Errorf("%w: extension %q is not in this session: it is not installed; install it with yolop ext install <source>, or load its package with --ext <dir>", ErrModelConfig, name)
}

// clientFor returns the client for the endpoint at base, building one
// when the endpoint moved (a respawned server listens on a new port).
func (p *extProvider) clientFor(base string) *provider.OpenAIProvider {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.client == nil || p.url != base {
		if p.conns != nil {
			p.conns.CloseIdleConnections() // to the old endpoint
		}
		p.url = base
		p.conns = http.DefaultTransport.(*http.Transport).Clone()
		p.client = provider.OpenAI(provider.Options{
			BaseURL:    base,
			APIKey:     extKey,
			HTTPClient: &http.Client{Transport: extTransport{base: p.conns}},
			Name:       p.Name(),
		})
	}
	return p.client
}

// died reports whether a request to the extension's endpoint failed
// because its server died: the endpoint no longer answers HTTP (GET
// <base>/models gets no response, whatever its status) and the host
// records the exit of the server that had pid within extExitWait. A
// server that answers, or that the host still sees running after that
// long, did not die.
func (p *extProvider) died(ctx context.Context, e *host.Extension, base string, pid int) bool {
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(pctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/models", nil)
	if err != nil {
		return false
	}
	probe := &http.Client{Transport: extTransport{base: &http.Transport{DisableKeepAlives: true}}}
	if res, err := probe.Do(req); err == nil {
		res.Body.Close()
		return false // it answers: alive
	}
	if pid == 0 {
		return true
	}
	wait := time.NewTimer(extExitWait)
	defer wait.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for e.PID() == pid {
		select {
		case <-tick.C:
		case <-wait.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// refusedKey marks a request's context with the flag extTransport sets
// when a connection was refused.
type refusedKey struct{}

// extTransport sends requests to an extension's endpoint with only the
// headers the request needs: none of what the environment adds for
// OpenAI's own API (OPENAI_ORG_ID, OPENAI_PROJECT_ID,
// OPENAI_CUSTOM_HEADERS, an admin key) reaches an extension, and the key
// is the placeholder [extKey].
type extTransport struct{ base http.RoundTripper }

func (t extTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	out := r.Clone(r.Context())
	out.Header = http.Header{}
	for k, v := range r.Header {
		if keepHeader(k) {
			out.Header[k] = v
		}
	}
	out.Header.Set("Authorization", "Bearer "+extKey)
	res, err := t.base.RoundTrip(out)
	if err != nil && errors.Is(err, syscall.ECONNREFUSED) {
		if f, ok := r.Context().Value(refusedKey{}).(*atomic.Bool); ok {
			f.Store(true)
		}
	}
	return res, err
}

// keepHeader reports whether a request header may go to an extension's
// endpoint.
func keepHeader(k string) bool {
	switch http.CanonicalHeaderKey(k) {
	case "Accept", "Content-Type", "Content-Length", "User-Agent", "Idempotency-Key":
		return true
	}
	return strings.HasPrefix(http.CanonicalHeaderKey(k), "X-Stainless-")
}

// ModelContextWindow is the context window, in tokens, the agent assumes
// for c's model, and where it comes from. For a model an extension
// serves it is the window the user approved in the extension's manifest
// (s's grant, or with s nil or without the extension the installed
// manifest; from "the approved manifest of extension <name>"), lowered by
// settings.toml's context_window when that is smaller. Otherwise it is
// settings.toml's context_window ([FromSettings]), else the agent's
// default ([FromDefault], [agent.DefaultContextWindow]).
func (h *Harness) ModelContextWindow(ctx context.Context, s *Session, c ModelConfig) (int, string) {
	set := c.ContextWindow
	approved := 0
	name, ext := c.Extension()
	if ext {
		var pg *host.ProviderGrant
		if e, ok := sessionExtension(s, name); ok {
			pg = e.Grant().Provider
		} else if m, err := h.InstalledManifest(ctx, name); err == nil && m.Yolop != nil && m.Yolop.Provider != nil {
			pg = &host.ProviderGrant{}
			for _, pm := range m.Yolop.Provider.Models {
				pg.Models = append(pg.Models, host.ProviderModel{ID: pm.ID, ContextWindow: pm.ContextWindow})
			}
		}
		if pg != nil {
			if i := slices.IndexFunc(pg.Models, func(m host.ProviderModel) bool { return m.ID == c.Model }); i >= 0 {
				approved = pg.Models[i].ContextWindow
			}
		}
	}
	switch {
	case approved > 0 && (set == 0 || set >= approved):
		return approved, fmt.Sprintf("the approved manifest of extension %s", name)
	case set > 0:
		return set, FromSettings
	}
	return agent.DefaultContextWindow, FromDefault
}

// sessionExtension is s's extension name; false when s is nil.
func sessionExtension(s *Session, name string) (*host.Extension, bool) {
	if s == nil || s.Session == nil {
		return nil, false
	}
	return s.Extension(name)
}
