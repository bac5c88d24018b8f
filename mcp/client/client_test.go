package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/mcp/client"
	"yolop.dev/mcp/internal/testserver"
)

func leaks(t *testing.T) {
	t.Helper()
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
}

// waitFile waits for a file to appear; the deadline only catches a hang.
func waitFile(t *testing.T, p string) string {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(p); err == nil {
			return string(b)
		}
	}
	t.Fatalf("%s never appeared", p)
	return ""
}

// TestGoServerOverStdio drives the go-sdk test server from a .mcp.json
// through a session: naming, deferral behind tool_search, schema and
// description carried through, a plain call, structured output, progress
// as tool updates and cancellation reaching the server.
func TestGoServerOverStdio(t *testing.T) {
	leaks(t)
	ws := t.TempDir()
	mark := filepath.Join(ws, "cancelled")
	os.WriteFile(filepath.Join(ws, client.FileName), []byte(`{"mcpServers":{"go":{"command":"`+bin("mcptestserver")+`","env":{"MCPTEST_CANCEL_MARK":"${MARK}"}}}}`), 0o644)
	servers, warns := client.LoadFile(filepath.Join(ws, client.FileName), func(k string) (string, bool) {
		if k == "MARK" {
			return mark, true
		}
		return "", false
	})
	if len(warns) != 0 || len(servers) != 1 {
		t.Fatalf("LoadFile = %+v, %v", servers, warns)
	}
	f := newSession(t, client.Options{Servers: servers, NeverDefer: []string{"mcp__go__echo"}})
	tools := toolNames(f.s)
	echo, sum := tools["mcp__go__echo"], tools["mcp__go__sum"]
	if echo.Deferred || !sum.Deferred || tools["tool_search"].Name == "" {
		t.Fatalf("deferral: echo %+v, sum %+v, tools %v", echo, sum, tools)
	}
	if echo.Def.Description != "Echo the text back." || !strings.Contains(string(echo.Def.InputSchema), `"text"`) {
		t.Fatalf("echo def = %+v", echo.Def)
	}
	found, err := f.s.CallTool(context.Background(), "tool_search", "s1", json.RawMessage(`{"query":"add two"}`), nil)
	if err != nil || !strings.Contains(found.Output, "mcp__go__sum") {
		t.Fatalf("tool_search = %+v, %v", found, err)
	}

	res, err := f.s.CallTool(context.Background(), "mcp__go__echo", "c1", json.RawMessage(`{"text":"hi there"}`), nil)
	if err != nil || res.Output != "hi there" || res.IsError {
		t.Fatalf("echo = %+v, %v", res, err)
	}
	res, err = f.s.CallTool(context.Background(), "mcp__go__sum", "c2", json.RawMessage(`{"a":2,"b":40}`), nil)
	if err != nil || string(res.Data) != `{"sum":42}` {
		t.Fatalf("sum = %+v, %v", res, err)
	}

	var mu sync.Mutex
	var steps []float64
	gate := filepath.Join(ws, "gate")
	gargs, _ := json.Marshal(map[string]any{"steps": 3, "gate": gate})
	res, err = f.s.CallTool(context.Background(), "mcp__go__slow", "c3", gargs, func(u yep.ToolUpdateParams) {
		mu.Lock()
		defer mu.Unlock()
		if u.Progress != nil && u.Progress.Total == 3 {
			steps = append(steps, u.Progress.Current)
			if len(steps) == 3 {
				os.WriteFile(gate, nil, 0o600) // the server answers once every step arrived
			}
		}
	})
	mu.Lock()
	// The go-sdk client delivers notifications concurrently with the
	// response; the gate made the server wait until all three arrived.
	if err != nil || res.Output != "done" || len(steps) != 3 {
		t.Fatalf("slow = %+v, %v, progress %v", res, err, steps)
	}
	mu.Unlock()

	ctx, cancel := context.WithCancel(context.Background())
	_, err = f.s.CallTool(ctx, "mcp__go__slow", "c4", json.RawMessage(`{"steps":1,"hold":true}`), func(yep.ToolUpdateParams) { cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call = %v", err)
	}
	if got := waitFile(t, mark); got != "cancelled" {
		t.Fatalf("server saw %q", got)
	}
	// The connection survives a cancelled call.
	if res, err := f.s.CallTool(context.Background(), "mcp__go__echo", "c5", json.RawMessage(`{"text":"again"}`), nil); err != nil || res.Output != "again" {
		t.Fatalf("after cancel = %+v, %v", res, err)
	}
	st := f.mcp.Status()
	if len(st) != 1 || st[0].State != client.StateReady || st[0].Tools != 5 || st[0].PID == 0 {
		t.Fatalf("status = %+v", st)
	}
	// Closing the session stops and reaps the server: no orphan.
	f.s.Close()
	if alive(st[0].PID) {
		t.Fatalf("server %d outlived the session", st[0].PID)
	}
}

// alive reports whether a process exists (unix: signal 0).
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}

// TestBadInput: a malformed .mcp.json, a missing command, an unreachable
// URL, a server that hangs on initialize, one that writes garbage, one that
// crashes and a 50 MiB result each end in a warning or a degraded server
// naming it, and never stop the session or the healthy server.
func TestBadInput(t *testing.T) {
	leaks(t)
	ws := t.TempDir()
	bad := filepath.Join(ws, "bad.json")
	os.WriteFile(bad, []byte(`{"mcpServers": {`), 0o644)
	if _, warns := client.LoadFile(bad, nil); len(warns) != 1 || !strings.Contains(warns[0], bad) {
		t.Fatalf("malformed: %v", warns)
	}
	file := filepath.Join(ws, client.FileName)
	os.WriteFile(file, []byte(`{"mcpServers":{
		"ok":      {"command":"`+bin("mcptestserver")+`"},
		"missing": {"command":"no-such-mcp-server-command"},
		"gone":    {"type":"http","url":"http://127.0.0.1:1/mcp"},
		"hang":    {"command":"`+bin("mcptestserver")+`","args":["-mode","hang"]},
		"garbage": {"command":"`+bin("mcptestserver")+`","args":["-mode","garbage"]},
		"crash":   {"command":"`+bin("mcptestserver")+`","args":["-mode","crash"]},
		"sse":     {"type":"sse","url":"http://127.0.0.1:1/sse"},
		"bad name!": {"command":"x"}
	}}`), 0o644)
	servers, warns := client.LoadFile(file, nil)
	if len(servers) != 6 || len(warns) != 2 {
		t.Fatalf("LoadFile = %d servers, warnings %v", len(servers), warns)
	}
	t0 := time.Now()
	f := newSession(t, client.Options{Servers: servers, Warnings: warns, InitTimeout: 3 * time.Second, MaxResultBytes: 8 << 20})
	t.Logf("start took %v", time.Since(t0))
	t.Cleanup(func() { t.Logf("at cleanup %v", time.Since(t0)) })
	all := strings.Join(f.s.Warnings(), "\n")
	for _, n := range []string{"missing", "gone", "hang", "garbage", "crash", "sse", "bad name!"} {
		if !strings.Contains(all, `"`+n+`"`) || !strings.Contains(all, file) {
			t.Errorf("no warning naming %s and the file:\n%s", n, all)
		}
	}
	st := map[string]client.ServerStatus{}
	for _, s := range f.mcp.Status() {
		st[s.Name] = s
	}
	if st["ok"].State != client.StateReady {
		t.Fatalf("ok = %+v", st["ok"])
	}
	for _, n := range []string{"missing", "gone", "hang", "garbage", "crash"} {
		if st[n].State != client.StateDegraded || st[n].Reason == "" {
			t.Errorf("%s = %+v", n, st[n])
		}
		t.Logf("%s: %s", n, st[n].Reason)
	}
	if !strings.Contains(st["hang"].Reason, "initialize") {
		t.Errorf("hang reason = %q", st["hang"].Reason)
	}
	if !strings.Contains(strings.Join(st["crash"].StderrTail, "\n"), "giving up at once") {
		t.Errorf("crash stderr tail = %q", st["crash"].StderrTail)
	}
	if _, ok := toolNames(f.s)["mcp__hang__echo"]; ok {
		t.Error("a degraded server's tools are served")
	}
	// 50 MiB over an 8 MiB bound: a clear error, not a hang or an OOM.
	_, err := f.s.CallTool(context.Background(), "mcp__ok__big", "b1", json.RawMessage(`{"mib":50}`), nil)
	if err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("50 MiB result = %v", err)
	}
	t.Logf("50 MiB result: %v (%v)", err, time.Since(t0))
	t1 := time.Now()
	f.s.Close()
	t.Logf("close took %v", time.Since(t1))
}

// TestHTTPServer reaches the go-sdk test server over streamable HTTP with
// the .mcp.json headers, and bounds an HTTP result.
func TestHTTPServer(t *testing.T) {
	leaks(t)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return testserver.New("") }, &sdk.StreamableHTTPOptions{JSONResponse: true})
	var sawAuth sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawAuth.Store(r.Header.Get("Authorization"), true)
		if r.Header.Get("Authorization") != "Bearer s3cret-token" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), client.FileName)
	os.WriteFile(file, []byte(`{"mcpServers":{"web":{"type":"http","url":"${URL}/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}}}}`), 0o644)
	env := map[string]string{"URL": srv.URL, "TOKEN": "s3cret-token"}
	servers, warns := client.LoadFile(file, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if len(warns) > 0 {
		t.Fatal(warns)
	}
	f := newSession(t, client.Options{Servers: servers, MaxResultBytes: 4 << 20, Scrub: func(s string) string { return strings.ReplaceAll(s, "s3cret-token", "[redacted]") }})
	res, err := f.s.CallTool(context.Background(), "mcp__web__echo", "h1", json.RawMessage(`{"text":"over http"}`), nil)
	if err != nil || res.Output != "over http" {
		t.Fatalf("echo = %+v, %v (status %+v)", res, err, f.mcp.Status())
	}
	// The scrubber applies to results.
	res, _ = f.s.CallTool(context.Background(), "mcp__web__echo", "h2", json.RawMessage(`{"text":"token s3cret-token"}`), nil)
	if res.Output != "token [redacted]" {
		t.Fatalf("scrubbed = %q", res.Output)
	}
	_, err = f.s.CallTool(context.Background(), "mcp__web__big", "h3", json.RawMessage(`{"mib":6}`), nil)
	if err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("big over http = %v", err)
	}
	f.s.Close()
}

// TestContributedServers: an extension contributes the go-sdk server over
// stdio (the secret in its env reaches the wrapped server's env through
// ${VAR} in the manifest) and one it hosts on a loopback port over HTTP
// (the secret in a header its handshake declares); disabling the extension at the turn boundary removes its MCP
// tools and stops its servers.
func TestContributedServers(t *testing.T) {
	leaks(t)
	g := writePackage(t, map[string]string{"MCPTEST_SERVER": "mcptestserver", "MCPTEST_HTTP": "1", "TESTEXT_TOKEN": "tok-987"}, []map[string]any{
		{"name": "go", "type": "stdio", "command": "mcptestserver", "env": map[string]string{"WRAPPED_TOKEN": "${TESTEXT_TOKEN}"}},
		{"name": "web", "type": "http", "url": "http://127.0.0.1:*/mcp", "headers": map[string]string{"X-Unused": "${TESTEXT_TOKEN}"}},
	})
	f := newSession(t, client.Options{}, g)
	tools := toolNames(f.s)
	if _, ok := tools["mcp__testext__go__echo"]; !ok {
		t.Fatalf("tools = %v; status %+v; warnings %v", tools, f.mcp.Status(), f.s.Warnings())
	}
	res, err := f.s.CallTool(context.Background(), "mcp__testext__go__env", "e1", json.RawMessage(`{"name":"WRAPPED_TOKEN"}`), nil)
	if err != nil || res.Output != "tok-987" {
		t.Fatalf("wrapped env = %+v, %v", res, err)
	}
	res, err = f.s.CallTool(context.Background(), "mcp__testext__web__echo", "e2", json.RawMessage(`{"text":"hosted"}`), nil)
	if err != nil || res.Output != "hosted" {
		t.Fatalf("hosted http = %+v, %v (status %+v)", res, err, f.mcp.Status())
	}
	// A reload respawns the extension, which hosts its server on a new
	// port: the next turn boundary reconnects it.
	if err := f.s.Reload(context.Background(), "testext"); err != nil {
		t.Fatal(err)
	}
	f.s.BeginTurn(context.Background())
	res, err = f.s.CallTool(context.Background(), "mcp__testext__web__echo", "e3", json.RawMessage(`{"text":"after reload"}`), nil)
	if err != nil || res.Output != "after reload" {
		t.Fatalf("after reload = %+v, %v (status %+v)", res, err, f.mcp.Status())
	}
	if !f.s.Deactivate("testext") {
		t.Fatal("testext is not in the session")
	}
	f.s.BeginTurn(context.Background())
	for n := range toolNames(f.s) {
		if strings.HasPrefix(n, "mcp__testext__") {
			t.Fatalf("tool %s survived the extension's disable", n)
		}
	}
	if st := f.mcp.Status(); len(st) != 0 {
		t.Fatalf("status after disable = %+v", st)
	}
}

// TestContributedWidening: an extension whose handshake turns an approved
// stdio server into a URL, and adds an undeclared one, has both refused
// and logged, and neither is connected.
func TestContributedWidening(t *testing.T) {
	leaks(t)
	g := writePackage(t, map[string]string{"MCPTEST_SERVER": "mcptestserver", "MCPTEST_WIDEN": "1"}, []map[string]any{
		{"name": "go", "type": "stdio", "command": "mcptestserver"},
	})
	f := newSession(t, client.Options{}, g)
	e, _ := f.s.Extension("testext")
	var refused []string
	for _, r := range e.Refusals() {
		refused = append(refused, r.Name+": "+r.Reason)
	}
	if len(refused) != 2 || !strings.Contains(strings.Join(refused, "\n"), "transport changed") {
		t.Fatalf("refusals = %v", refused)
	}
	if st := f.mcp.Status(); len(st) != 0 {
		t.Fatalf("refused servers connected: %+v", st)
	}
}

// TestServerDies: a stdio server that dies after start is degraded with its
// exit; the session's other tools keep working.
func TestServerDies(t *testing.T) {
	leaks(t)
	file := filepath.Join(t.TempDir(), client.FileName)
	os.WriteFile(file, []byte(`{"mcpServers":{"a":{"command":"`+bin("mcptestserver")+`"},"b":{"command":"`+bin("mcptestserver")+`"}}}`), 0o644)
	servers, _ := client.LoadFile(file, nil)
	f := newSession(t, client.Options{Servers: servers})
	// b exits when asked for a result it cannot deliver? No: kill it
	// through the env tool's sibling — ask the OS.
	var pid int
	for _, s := range f.mcp.Status() {
		if s.Name == "b" {
			pid = s.PID
		}
	}
	if pid == 0 {
		t.Fatalf("no pid for b: %+v", f.mcp.Status())
	}
	p, _ := os.FindProcess(pid)
	p.Kill()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		st := f.mcp.Status()
		if st[1].State == client.StateDegraded {
			if !strings.Contains(st[1].Reason, "exited") {
				t.Fatalf("b = %+v", st[1])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("b never degraded")
		}
	}
	if _, err := f.s.CallTool(context.Background(), "mcp__b__echo", "d1", json.RawMessage(`{"text":"x"}`), nil); err == nil || !strings.Contains(err.Error(), "degraded") {
		t.Fatalf("call to dead server = %v", err)
	}
	if res, err := f.s.CallTool(context.Background(), "mcp__a__echo", "d2", json.RawMessage(`{"text":"alive"}`), nil); err != nil || res.Output != "alive" {
		t.Fatalf("a = %+v, %v", res, err)
	}
}

var _ = host.ErrNoSuchTool
