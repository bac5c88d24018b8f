package host

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// diff returns "" when want and got are deeply equal, else both, for a
// failure message.
func diff(want, got any) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return fmt.Sprintf("want %+v\n got %+v", want, got)
}

// providerGrant is a grant for the Python test server announcing the
// given capabilities and provider params, approved for models a and b.
func providerGrant(t *testing.T, caps []string, provider any) Grant {
	t.Helper()
	spec := map[string]any{"capabilities": caps}
	if provider != nil {
		spec["capability_params"] = map[string]any{"provider": provider}
	}
	g := pyGrant(t, "prov", spec)
	g.Provider = &ProviderGrant{Name: "scripted", Models: []ProviderModel{{ID: "a", ContextWindow: 1000}, {ID: "b:8b", ContextWindow: 128000}}}
	return g
}

func startProvider(t *testing.T, g Grant) (*Session, *Extension, *logBuf) {
	t.Helper()
	lg, logs := testLogger()
	s := newTestSession(t, SessionOptions{Logger: lg, Grants: []Grant{g}})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	e, _ := s.Extension(g.Name)
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, e, logs
}

func refusalNames(rs []Refusal) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Kind+":"+r.Name)
	}
	return out
}

func TestProviderGrantIsEager(t *testing.T) {
	g := providerGrant(t, []string{"provider"}, map[string]any{"baseUrl": "http://127.0.0.1:9/v1", "models": []string{"a"}})
	if !g.eager() {
		t.Fatal("a grant with a providers facet is not eager; its endpoint would not exist before the first turn")
	}
	lg, _ := testLogger()
	s := newTestSession(t, SessionOptions{Logger: lg, Grants: []Grant{g}})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	e, _ := s.Extension("prov")
	if _, ok := e.Provider(); !ok {
		t.Fatalf("session Start did not start the provider extension (refusals %v)", e.Refusals())
	}
}

func TestProviderAnnouncementNarrowsToTheApprovedModels(t *testing.T) {
	g := providerGrant(t, []string{"tools", "provider"}, map[string]any{
		"baseUrl": "http://127.0.0.1:43121/v1", "models": []string{"b:8b", "gpt-5", "a", "a"},
	})
	s, e, logs := startProvider(t, g)
	got, ok := e.Provider()
	if !ok {
		t.Fatalf("no provider; refusals %v", e.Refusals())
	}
	want := ProviderInfo{Extension: "prov", Name: "scripted", BaseURL: "http://127.0.0.1:43121/v1",
		Models: []ProviderModel{{ID: "b:8b", ContextWindow: 128000}, {ID: "a", ContextWindow: 1000}}}
	if d := diff(want, got); d != "" {
		t.Fatalf("provider :\n%s", d)
	}
	if d := diff([]string{"provider:gpt-5"}, refusalNames(e.Refusals())); d != "" {
		t.Fatalf("refusals :\n%s", d)
	}
	if d := diff([]string{"provider:gpt-5"}, refusalNames(e.Stats().Refusals)); d != "" {
		t.Fatalf("Stats refusals :\n%s", d)
	}
	if !strings.Contains(logs.String(), "handshake wider than the approved manifest") || !strings.Contains(logs.String(), "gpt-5") {
		t.Fatalf("the unapproved model was not logged:\n%s", logs)
	}
	if d := diff([]ProviderInfo{want}, s.Providers()); d != "" {
		t.Fatalf("Session.Providers :\n%s", d)
	}
	// Changing the returned value does not change the extension's.
	got.Models[0].ContextWindow = 1
	if again, _ := e.Provider(); again.Models[0].ContextWindow != 128000 {
		t.Fatal("Provider returned the extension's own slice")
	}
	// Stopped, it offers nothing.
	s.Close()
	if _, ok := e.Provider(); ok {
		t.Fatal("a stopped extension still offers its provider")
	}
	if len(s.Providers()) != 0 {
		t.Fatal("a closed session still lists providers")
	}
}

func TestProviderBaseURLMustBeALoopbackLiteral(t *testing.T) {
	for _, tc := range []struct {
		url  string
		ok   bool
		want string // in the refusal's reason
	}{
		{"http://127.0.0.1:43121/v1", true, ""},
		{"http://127.1.2.3:80/v1", true, ""},
		{"https://[::1]:8443/openai/v1", true, ""},
		{"http://localhost:43121/v1", false, "can be rebound"},
		{"http://10.0.0.1:80/v1", false, "host 10.0.0.1 is not loopback"},
		{"http://api.openai.com/v1", false, `host "api.openai.com" is not a loopback IP literal`},
		{"http://0.0.0.0:80/v1", false, "is not loopback"},
		{"ftp://127.0.0.1:21/v1", false, "scheme must be http or https"},
		{"http://127.0.0.1:43121", false, "needs a path"},
		{"http://127.0.0.1:43121/", false, "needs a path"},
		{"http://u:p@127.0.0.1:43121/v1", false, "no user info"},
		{"http://127.0.0.1:43121/v1?x=1", false, "no user info, query or fragment"},
		{"", false, "scheme must be"},
	} {
		reason := checkProviderURL(tc.url)
		if tc.ok != (reason == "") || !strings.Contains(reason, tc.want) {
			t.Errorf("checkProviderURL(%q) = %q; want ok=%v with %q", tc.url, reason, tc.ok, tc.want)
		}
	}
}

func TestProviderOnANonLoopbackHostIsRefusedWhole(t *testing.T) {
	g := providerGrant(t, []string{"provider"}, map[string]any{"baseUrl": "http://10.0.0.1:80/v1", "models": []string{"a"}})
	s, e, logs := startProvider(t, g)
	if p, ok := e.Provider(); ok {
		t.Fatalf("a provider on 10.0.0.1 was accepted: %+v", p)
	}
	rs := e.Refusals()
	if len(rs) != 1 || rs[0].Kind != "provider" || rs[0].Name != "scripted" || !strings.Contains(rs[0].Reason, "10.0.0.1") {
		t.Fatalf("refusals = %v, want one provider refusal naming the host", rs)
	}
	if !strings.Contains(logs.String(), "10.0.0.1") {
		t.Fatalf("the refused host was not logged:\n%s", logs)
	}
	if len(s.Providers()) != 0 {
		t.Fatal("Session.Providers lists a refused provider")
	}
}

func TestProviderAnnouncementNeedsTokenParamsAndAGrant(t *testing.T) {
	params := map[string]any{"baseUrl": "http://127.0.0.1:43121/v1", "models": []string{"a"}}
	for _, tc := range []struct {
		name     string
		caps     []string
		provider any
		noGrant  bool
		want     []string
		reason   string
	}{
		{"params without token", []string{"tools"}, params, false, []string{"provider:scripted"}, "without the \"provider\" capability token"},
		{"token without params", []string{"provider"}, nil, false, []string{"provider:scripted"}, "without its params"},
		{"no models", []string{"provider"}, map[string]any{"baseUrl": "http://127.0.0.1:1/v1", "models": []string{}}, false, []string{"provider:scripted"}, "lists no models"},
		{"only unapproved models", []string{"provider"}, map[string]any{"baseUrl": "http://127.0.0.1:1/v1", "models": []string{"x"}}, false, []string{"provider:x"}, "not declared"},
		{"malformed", []string{"provider"}, map[string]any{"baseUrl": 7, "models": []string{"a"}}, false, []string{"capability:provider"}, "malformed provider params"},
		{"no providers facet", []string{"provider"}, params, true, []string{"provider:prov"}, "offers no model provider"},
		{"nothing announced", []string{"tools"}, nil, false, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := providerGrant(t, tc.caps, tc.provider)
			if tc.noGrant {
				g.Provider = nil
			}
			_, e, _ := startProvider(t, g)
			if p, ok := e.Provider(); ok {
				t.Fatalf("provider accepted: %+v", p)
			}
			rs := e.Refusals()
			if d := diff(tc.want, refusalNames(rs)); d != "" {
				t.Fatalf("refusals :\n%s\n%v", d, rs)
			}
			if len(rs) > 0 && !strings.Contains(rs[0].Reason, tc.reason) {
				t.Fatalf("reason %q, want %q in it", rs[0].Reason, tc.reason)
			}
		})
	}
}

// FuzzCheckProviderURL: whatever a server announces, an accepted base URL
// is http(s) on a loopback IP literal with a path.
func FuzzCheckProviderURL(f *testing.F) {
	for _, s := range []string{
		"http://127.0.0.1:43121/v1", "https://[::1]:8443/v1", "http://localhost:1/v1", "http://10.0.0.1/v1",
		"http://127.0.0.1.nip.io/v1", "http://[::ffff:127.0.0.1]:1/v1", "http://0177.0.0.1/v1", "http://2130706433/v1",
		"http://127.0.0.1%2f@evil/v1", "http://[::1%25lo]:1/v1", "//127.0.0.1/v1", "http:/127.0.0.1/v1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if checkProviderURL(s) != "" {
			return
		}
		u, err := url.Parse(s)
		if err != nil {
			t.Fatalf("accepted %q, which does not parse: %v", s, err)
		}
		ip := net.ParseIP(u.Hostname())
		if ip == nil || !ip.IsLoopback() || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Path == "" || u.Path == "/" {
			t.Fatalf("accepted %q: scheme %q host %q path %q", s, u.Scheme, u.Hostname(), u.Path)
		}
	})
}
