package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"yolop.dev/core/host"
	"yolop.dev/mcp/gateway"
	"yolop.dev/mcp/internal/testpkg"
	"yolop.dev/transport/stdio"
)

func TestMain(m *testing.M) {
	cleanup, err := testpkg.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// serve runs a gateway over a session of grants and connects a go-sdk
// client to it in memory.
func serve(t *testing.T, opts *sdk.ClientOptions, grants ...host.Grant) *sdk.ClientSession {
	t.Helper()
	cs, _ := serveSession(t, opts, nil, grants...)
	return cs
}

// serveSession is serve, the client's transport wrapped by wrap when it is
// not nil, and it returns the session too.
func serveSession(t *testing.T, opts *sdk.ClientOptions, wrap func(sdk.Transport) sdk.Transport, grants ...host.Grant) (*sdk.ClientSession, *host.Session) {
	t.Helper()
	before := goleak.IgnoreCurrent()
	gw := gateway.New(gateway.Options{})
	s := host.NewSession(host.SessionOptions{Grants: grants, Transport: stdio.New(stdio.Options{Logger: hclog.NewNullLogger()}), Ask: gw})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if w := gw.Attach(s); len(w) > 0 {
		t.Fatal(w)
	}
	st, ct := sdk.NewInMemoryTransports()
	var client sdk.Transport = ct
	if wrap != nil {
		client = wrap(ct)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- gw.Serve(ctx, st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts).Connect(context.Background(), client, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
		s.Close()
		goleak.VerifyNone(t, before)
	})
	return cs, s
}

func text(r *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestGatewayEcho serves the echo extension to a go-sdk client: tools/list
// from the manifest, a call, count's tool/update relayed as progress, MCP
// cancellation reaching the extension, and its pre_tool_use hook's block
// as a tool error.
func TestGatewayEcho(t *testing.T) {
	var mu sync.Mutex
	var progress []float64
	first := make(chan struct{}, 1)
	cs := serve(t, &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
		mu.Lock()
		progress = append(progress, r.Params.Progress)
		mu.Unlock()
		select {
		case first <- struct{}{}:
		default:
		}
	}}, testpkg.Echo(t))
	ctx := context.Background()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*sdk.Tool{}
	for _, tl := range lt.Tools {
		byName[tl.Name] = tl
	}
	// Every tool, reverse (deferred in a model's session) too: an MCP
	// client lists them all.
	if len(byName) != 3 || byName["echo"] == nil || byName["count"] == nil || byName["reverse"] == nil {
		t.Fatalf("tools = %v", byName)
	}
	if byName["echo"].Description != "Return the given text unchanged." {
		t.Fatalf("echo = %+v", byName["echo"])
	}
	schema, _ := json.Marshal(byName["echo"].InputSchema)
	if !strings.Contains(string(schema), `"required":["text"]`) {
		t.Fatalf("echo schema = %s", schema)
	}

	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "through the gateway"}})
	if err != nil || res.IsError || text(res) != "through the gateway" {
		t.Fatalf("echo = %+v, %v", res, err)
	}

	p := &sdk.CallToolParams{Name: "count", Arguments: map[string]any{"n": 5, "delay_ms": 1}}
	p.SetProgressToken("count-1")
	res, err = cs.CallTool(ctx, p)
	if err != nil || text(res) != "counted to 5" {
		t.Fatalf("count = %+v, %v", res, err)
	}
	// Progress notifications are delivered concurrently with the result:
	// wait for the first (the test's deadline catches none ever coming).
	<-first
	mu.Lock()
	if len(progress) == 0 || progress[0] < 1 {
		t.Fatalf("progress = %v", progress)
	}
	mu.Unlock()

	cctx, cancel := context.WithCancel(ctx)
	p = &sdk.CallToolParams{Name: "count", Arguments: map[string]any{"n": 100000, "delay_ms": 5}}
	p.SetProgressToken("count-2")
	done := make(chan error, 1)
	go func() { _, err := cs.CallTool(cctx, p); done <- err }()
	<-first
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled count = %v", err)
	}

	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "forbidden"}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "forbidden") || !strings.Contains(text(res), "blocked") {
		t.Fatalf("hook block = %+v (%q), %v", res, text(res), err)
	}
}

// TestGatewayElicitation: an extension's ui/ask becomes MCP elicitation
// for a client that supports it, and is answered cancelled for one that
// does not.
func TestGatewayElicitation(t *testing.T) {
	g := testpkg.TestExt(t, nil, nil)
	cs := serve(t, &sdk.ClientOptions{ElicitationHandler: func(_ context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		if !strings.Contains(r.Params.Message, "Your name?") {
			return &sdk.ElicitResult{Action: "decline"}, nil
		}
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": "Ada"}}, nil
	}}, g)
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "ask", Arguments: map[string]any{}})
	if err != nil || text(res) != "hello, Ada" {
		t.Fatalf("ask with elicitation = %q, %v", text(res), err)
	}
	cs2 := serve(t, nil, testpkg.TestExt(t, nil, nil))
	res, err = cs2.CallTool(context.Background(), &sdk.CallToolParams{Name: "ask", Arguments: map[string]any{}})
	if err != nil || text(res) != "cancelled" {
		t.Fatalf("ask without elicitation = %+v, %v", res, err)
	}
}

// TestGatewayHTTPToken: the streamable HTTP handler refuses a request
// without the bearer token and serves one with it.
func TestGatewayHTTPToken(t *testing.T) {
	before := goleak.IgnoreCurrent()
	gw := gateway.New(gateway.Options{})
	s := host.NewSession(host.SessionOptions{Grants: []host.Grant{testpkg.Echo(t)}, Transport: stdio.New(stdio.Options{Logger: hclog.NewNullLogger()}), Ask: gw})
	defer func() { s.Close(); goleak.VerifyNone(t, before) }()
	s.Start(context.Background())
	gw.Attach(s)
	srv := httptest.NewServer(gw.HTTPHandler("t0ken"))
	defer srv.Close()
	_, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, nil)
	if err == nil || !strings.Contains(err.Error(), "401") && !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
		t.Fatalf("no token = %v", err)
	}
	hc := &http.Client{Transport: bearer{"t0ken"}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "over http"}})
	if err != nil || text(res) != "over http" {
		t.Fatalf("echo over http = %+v, %v", res, err)
	}
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestCheckListenAddr: loopback is served as asked; another address needs
// allowRemote and then always a token, generated when none was given.
func TestCheckListenAddr(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "[::1]:8080", "localhost:9"} {
		if tok, gen, err := gateway.CheckListenAddr(addr, false, ""); err != nil || tok != "" || gen {
			t.Errorf("%s: %q, %v, %v; want it served as asked", addr, tok, gen, err)
		}
	}
	if _, _, err := gateway.CheckListenAddr("0.0.0.0:8080", false, "t"); !errors.Is(err, gateway.ErrRemoteNotAllowed) {
		t.Errorf("a remote address without allowRemote: %v, want gateway.ErrRemoteNotAllowed", err)
	}
	if tok, gen, err := gateway.CheckListenAddr("0.0.0.0:8080", true, "given"); err != nil || tok != "given" || gen {
		t.Errorf("remote with a token: %q, %v, %v; want the token kept", tok, gen, err)
	}
	tok, gen, err := gateway.CheckListenAddr("0.0.0.0:8080", true, "")
	if err != nil || !gen || len(tok) != 48 {
		t.Errorf("remote without a token: %q, %v, %v; want a generated 48-hex-digit token", tok, gen, err)
	}
	if _, _, err := gateway.CheckListenAddr("no-port", false, ""); err == nil || !strings.Contains(err.Error(), "HOST:PORT") {
		t.Errorf("an address without a port: %v", err)
	}
}
