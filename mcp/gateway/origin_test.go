package gateway_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"go.uber.org/goleak"

	"yolop.dev/core/host"
	"yolop.dev/mcp/gateway"
	"yolop.dev/mcp/internal/testpkg"
	"yolop.dev/transport/stdio"
)

// TestGatewayHTTPOrigin: the streamable HTTP endpoint on 127.0.0.1 refuses
// a request whose Origin is not loopback (a web page the user visits, or
// one reached by DNS rebinding) with 403, with and without a token, and
// serves a loopback Origin and a request with none (a non-browser client).
func TestGatewayHTTPOrigin(t *testing.T) {
	before := goleak.IgnoreCurrent()
	gw := gateway.New(gateway.Options{})
	s := host.NewSession(host.SessionOptions{Grants: []host.Grant{testpkg.Echo(t)}, Transport: stdio.New(stdio.Options{Logger: hclog.NewNullLogger()}), Ask: gw})
	defer func() { s.Close(); goleak.VerifyNone(t, before) }()
	s.Start(context.Background())
	gw.Attach(s)
	for _, token := range []string{"", "t0ken"} {
		srv := httptest.NewServer(gw.HTTPHandler(token))
		var do func(method, origin, session string) (int, string)
		do = func(method, origin, session string) (int, string) {
			t.Helper()
			req, _ := http.NewRequest(method, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			if origin != "" {
				req.Header.Set("Origin", origin)
			}
			if session != "" {
				req.Header.Set("Mcp-Session-Id", session)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			if id := res.Header.Get("Mcp-Session-Id"); id != "" && method == "POST" {
				do("DELETE", origin, id) // end the session initialize opened
			}
			return res.StatusCode, string(b)
		}
		post := func(origin string) (int, string) { t.Helper(); return do("POST", origin, "") }
		for _, o := range []string{"https://evil.example", "http://127.0.0.1.evil.example:8080", "null", "http://10.0.0.5:8765", "not a url"} {
			if code, body := post(o); code != http.StatusForbidden || !strings.Contains(body, "Origin") {
				t.Errorf("token %q, Origin %q: %d %q; want 403 naming the Origin", token, o, code, body)
			}
		}
		for _, o := range []string{"", "http://localhost:3000", "http://127.0.0.1:9", "http://[::1]:8080", "vscode-webview://localhost"} {
			if code, body := post(o); code != http.StatusOK {
				t.Errorf("token %q, Origin %q: %d %q; want 200", token, o, code, body)
			}
		}
		srv.Close()
	}
}
