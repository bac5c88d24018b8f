package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/mcp/client"
)

// TestServerEverything drives the real @modelcontextprotocol/server-everything
// (npm, pinned in mcp/testdata/node) four ways: named in a .mcp.json over
// stdio and over streamable HTTP, and contributed by an extension over stdio and over streamable
// HTTP (a process the extension owns, on a port it picks). Each serves
// echo, get-sum and the long-running tool with progress, and a cancelled
// long-running call returns at once and leaves the server usable.
func TestServerEverything(t *testing.T) {
	leaks(t)
	js := everythingJS(t)
	ws := t.TempDir()
	file := filepath.Join(ws, client.FileName)
	url := startEverythingHTTP(t, js)
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything":     map[string]any{"command": "node", "args": []string{js, "stdio"}},
		"everything-web": map[string]any{"type": "http", "url": url},
	}})
	os.WriteFile(file, b, 0o644)
	servers, warns := client.LoadFile(file, nil)
	if len(warns) > 0 {
		t.Fatal(warns)
	}
	g := writePackage(t, map[string]string{"MCPTEST_EVERYTHING": js}, []map[string]any{
		{"name": "everything", "type": "stdio", "command": "node", "args": []string{js, "stdio"}},
		{"name": "everything-http", "type": "http", "url": "http://127.0.0.1:*/mcp"},
	})
	f := newSession(t, client.Options{Servers: servers}, g)
	for _, st := range f.mcp.Status() {
		if st.State != client.StateReady {
			t.Fatalf("%s = %+v", st.Name, st)
		}
	}
	for _, srv := range []string{"everything", "everything-web", "testext__everything", "testext__everything-http"} {
		t.Run(srv, func(t *testing.T) { everything(t, f.s, srv) })
	}
}

func everything(t *testing.T, s *host.Session, srv string) {
	ctx := context.Background()
	name := func(tool string) string { return client.ToolName(srv, tool) }
	res, err := s.CallTool(ctx, name("echo"), "e1", json.RawMessage(`{"message":"hello everything"}`), nil)
	if err != nil || !strings.Contains(res.Output, "hello everything") {
		t.Fatalf("echo = %+v, %v", res, err)
	}
	res, err = s.CallTool(ctx, name("get-sum"), "e2", json.RawMessage(`{"a":19,"b":23}`), nil)
	if err != nil || !strings.Contains(res.Output, "42") {
		t.Fatalf("get-sum = %+v, %v", res, err)
	}
	var mu sync.Mutex
	var progress []yep.Progress
	res, err = s.CallTool(ctx, name("trigger-long-running-operation"), "e3", json.RawMessage(`{"duration":1,"steps":2}`), func(u yep.ToolUpdateParams) {
		mu.Lock()
		defer mu.Unlock()
		if u.Progress != nil {
			progress = append(progress, *u.Progress)
		}
	})
	mu.Lock()
	if err != nil || !strings.Contains(res.Output, "completed") || len(progress) == 0 || progress[0].Total != 2 {
		t.Fatalf("long-running = %+v, %v, progress %+v", res, err, progress)
	}
	mu.Unlock()
	cctx, cancel := context.WithCancel(ctx)
	_, err = s.CallTool(cctx, name("trigger-long-running-operation"), "e4", json.RawMessage(`{"duration":600,"steps":6000}`), func(yep.ToolUpdateParams) { cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled long-running = %v", err)
	}
	if res, err := s.CallTool(ctx, name("echo"), "e5", json.RawMessage(`{"message":"still here"}`), nil); err != nil || !strings.Contains(res.Output, "still here") {
		t.Fatalf("after cancel = %+v, %v", res, err)
	}
}

// startEverythingHTTP runs server-everything's streamable HTTP transport
// on a free loopback port and returns its URL.
func startEverythingHTTP(t *testing.T, js string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command("node", js, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything did not listen on %s", addr)
		}
	}
	return "http://" + addr + "/mcp"
}
