package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/yep"
	"yolop.dev/extensions/lsp/internal/lsptest"
	"yolop.dev/extensions/lsp/internal/manager"
	"yolop.dev/internal/launchertest"
	"yolop.dev/packaging"
)

// serveEnv makes the test binary act as yolop-extension-lsp.
const serveEnv = "YOLOP_LSP_TEST_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		os.Exit(run(context.Background(), nil, nil, nil, os.Stderr))
	}
	lsptest.PutGoplsOnPath()
	done := launchertest.Use()
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		done()
		os.Exit(code)
	}))
}

// host is a test host speaking YEP to a spawned extension process.
type host struct {
	cmd  *exec.Cmd
	conn *jsonrpc.Conn

	mu     sync.Mutex
	status []string
}

func spawn(t testing.TB, root string, config string) *host {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serveEnv+"=1")
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &host{cmd: cmd}
	h.conn = jsonrpc.NewConn(stdout, stdin, jsonrpc.Options{
		Closer: stdin,
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			if req.Method == yep.MethodStatusChanged {
				var p yep.StatusChangedParams
				json.Unmarshal(req.Params, &p)
				h.mu.Lock()
				h.status = append(h.status, p.Text)
				h.mu.Unlock()
			}
			return nil, nil
		}),
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var res yep.InitializeResult
	if err := h.conn.Call(ctx, yep.MethodInitialize, yep.InitializeParams{
		ProtocolVersion: "1.0",
		WorkspaceRoot:   root,
		Config:          json.RawMessage(config),
		Capabilities:    yep.Capabilities{yep.CapStatus, yep.CapStreaming, yep.CapCancel},
	}, &res); err != nil {
		h.kill()
		t.Fatalf("initialize: %v", err)
	}
	var tools []yep.ToolDecl
	json.Unmarshal(res.CapabilityParams[yep.CapTools], &tools)
	var names []string
	for _, d := range tools {
		names = append(names, d.Name)
	}
	slices.Sort(names)
	want := []string{"lsp_code_actions", "lsp_definition", "lsp_diagnostics", "lsp_hover", "lsp_references", "lsp_rename", "lsp_symbols"}
	if !slices.Equal(names, want) {
		t.Errorf("served tools %v, want %v", names, want)
	}
	var p yep.PromptDecl
	json.Unmarshal(res.CapabilityParams[yep.CapPrompt], &p)
	if !strings.Contains(p.Static, "call the `lsp_*` tools FIRST") {
		t.Errorf("prompt %q", p.Static)
	}
	if err := h.conn.Notify(ctx, yep.MethodInitialized, struct{}{}); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *host) tool(ctx context.Context, name string, args any, onUpdate func(string)) (yep.ToolResult, error) {
	a, _ := json.Marshal(args)
	var res yep.ToolResult
	err := h.conn.CallWith(ctx, yep.MethodToolCall, yep.ToolCallParams{ToolCallID: "t", Name: name, Args: a}, &res, jsonrpc.CallOptions{
		OnNotify: func(method string, params json.RawMessage) {
			var u yep.ToolUpdateParams
			if method == yep.MethodToolUpdate && json.Unmarshal(params, &u) == nil && onUpdate != nil {
				onUpdate(u.Output)
			}
		},
	})
	return res, err
}

func (h *host) kill() {
	syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL)
	h.conn.Close()
	h.conn.Wait()
	h.cmd.Wait()
}

// stop sends shutdown and exit and waits for the process.
func (h *host) stop(t testing.TB) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.conn.Call(ctx, yep.MethodShutdown, struct{}{}, nil); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	h.conn.Notify(ctx, yep.MethodExit, struct{}{})
	done := make(chan error, 1)
	go func() { done <- h.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("extension exited with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("extension did not exit after shutdown and exit")
		syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	h.conn.Close()
	h.conn.Wait()
}

// children returns the pids of pid's child processes.
func children(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "children"))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(s); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

func TestEndToEnd(t *testing.T) {
	lsptest.RequireGopls(t)
	root := lsptest.Fixture(t, "gomod")
	h := spawn(t, root, `{"request_timeout_ms": 60000}`)
	ctx := context.Background()

	res, err := h.tool(ctx, "lsp_definition", map[string]any{"file": "cmd/app/main.go", "line": 12, "symbol": "Hello"}, nil)
	if err != nil || res.IsError || res.Output != "greet/greet.go:7:6: func Hello(name string) string {" {
		t.Fatalf("lsp_definition = %+v, %v", res, err)
	}
	kids := children(h.cmd.Process.Pid)
	if len(kids) != 1 {
		t.Fatalf("extension children %v, want one gopls", kids)
	}

	var updates []string
	res, err = h.tool(ctx, "lsp_rename", map[string]any{"file": "greet/greet.go", "line": 7, "symbol": "Hello", "new_name": "Hi"}, func(s string) { updates = append(updates, s) })
	if err != nil || res.IsError || !strings.HasPrefix(res.Output, "Renamed `Hello` to `Hi`") {
		t.Fatalf("lsp_rename = %+v, %v", res, err)
	}
	if len(updates) != 3 || !strings.HasPrefix(updates[0], "1/3 files patched: ") {
		t.Fatalf("tool/update stream %q", updates)
	}

	res, err = h.tool(ctx, "lsp_hover", map[string]any{"file": "cmd/app/main.go", "line": 99, "column": 1}, nil)
	if err != nil || !res.IsError || !strings.Contains(res.Output, "line 99 is past the end") {
		t.Fatalf("a bad position must be a tool error the agent reads: %+v, %v", res, err)
	}

	// A cancelled call resolves as cancelled.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := h.tool(cctx, "lsp_references", map[string]any{"file": "greet/greet.go", "line": 7, "symbol": "Hi"}, nil); err == nil {
		t.Fatal("cancelled call succeeded")
	}

	var cres yep.ConfigChangedResult
	if err := h.conn.Call(ctx, yep.MethodConfigChanged, yep.ConfigChangedParams{Config: json.RawMessage(`{"request_timeout_ms": 5000}`)}, &cres); err != nil || cres.Status == yep.ConfigRestartRequired {
		t.Fatalf("timeout change: %+v %v", cres, err)
	}
	if err := h.conn.Call(ctx, yep.MethodConfigChanged, yep.ConfigChangedParams{Config: json.RawMessage(`{"servers": {"go": {"command": "gopls", "args": ["-remote=auto"]}}}`)}, &cres); err != nil || cres.Status != yep.ConfigRestartRequired {
		t.Fatalf("servers change: %+v %v", cres, err)
	}

	// workspace/changed re-roots: the next call runs against the new root.
	other := lsptest.Fixture(t, "gomod")
	h.conn.Notify(ctx, yep.MethodWorkspaceChanged, yep.WorkspaceChangedParams{WorkspaceRoot: other})
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err = h.tool(ctx, "lsp_definition", map[string]any{"file": "cmd/app/main.go", "line": 12, "symbol": "Hello"}, nil)
		if err == nil && res.Output == "greet/greet.go:7:6: func Hello(name string) string {" {
			break // the fresh copy still has Hello: the new root is in use
		}
		if time.Now().After(deadline) {
			t.Fatalf("after workspace/changed: %+v %v", res, err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	kids = children(h.cmd.Process.Pid)
	h.stop(t)
	for _, pid := range kids {
		deadline := time.Now().Add(5 * time.Second)
		for syscall.Kill(pid, 0) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("language server %d outlived the extension", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func TestMissingServerStatus(t *testing.T) {
	root := lsptest.Fixture(t, "gomod")
	h := spawn(t, root, `{"servers": {"go": {"command": "gopls-missing-e2e", "install": "go install golang.org/x/tools/gopls@latest"}}}`)
	defer h.stop(t)
	res, err := h.tool(context.Background(), "lsp_definition", map[string]any{"file": "cmd/app/main.go", "line": 12, "symbol": "Hello"}, nil)
	want := "gopls-missing-e2e not found — install with `go install golang.org/x/tools/gopls@latest`"
	if err != nil || !res.IsError || res.Output != want {
		t.Fatalf("lsp_definition = %+v, %v; want the install guidance", res, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		h.mu.Lock()
		got := slices.Clone(h.status)
		h.mu.Unlock()
		if len(got) == 1 && got[0] == "degraded: "+want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("status/changed %q", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestBadConfigFailsInitialize(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serveEnv+"=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	conn := jsonrpc.NewConn(stdout, stdin, jsonrpc.Options{Closer: stdin})
	err := conn.Call(context.Background(), yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: "1.0", Config: json.RawMessage(`{"servers": {"zig": {"extensions": [".zig"]}}}`)}, nil)
	conn.Close()
	conn.Wait()
	cmd.Wait()
	if err == nil || !strings.Contains(err.Error(), "servers.zig has no command") {
		t.Fatalf("initialize with a bad config: %v", err)
	}
}

func TestManifest(t *testing.T) {
	m, err := packaging.Load(filepath.Join(lsptest.ModuleDir(), "package"))
	if err != nil {
		t.Fatalf("package/plugin.json: %v", err)
	}
	if len(m.Warnings) > 0 {
		t.Errorf("manifest warnings: %v", m.Warnings)
	}
	var names []string
	for _, tl := range m.Yolop.Tools {
		names = append(names, tl.Name)
		if !tl.NeverDefer || len(tl.InputSchema) == 0 || tl.Description == "" {
			t.Errorf("tool %s: never_defer=%v, input_schema %d bytes, description %q", tl.Name, tl.NeverDefer, len(tl.InputSchema), tl.Description)
		}
		if tl.Streaming != (tl.Name == "lsp_rename") {
			t.Errorf("tool %s: streaming=%v", tl.Name, tl.Streaming)
		}
	}
	want := []string{"lsp_definition", "lsp_references", "lsp_hover", "lsp_diagnostics", "lsp_rename", "lsp_symbols", "lsp_code_actions"}
	if !slices.Equal(names, want) {
		t.Errorf("manifest tools %v, want %v", names, want)
	}
	if m.Yolop.Prompt == nil || strings.TrimSpace(m.Yolop.Prompt.Text) != prompt {
		t.Errorf("package/prompt.md and the server's prompt differ:\n%q\n%q", m.Yolop.Prompt.Text, prompt)
	}
	if !m.Yolop.Status || m.Yolop.CapabilityServer.Command != "yolop-extension-lsp" {
		t.Errorf("facet %+v", m.Yolop)
	}
	if !strings.Contains(string(m.Yolop.ConfigSchema), `"servers"`) {
		t.Errorf("config schema not resolved: %s", m.Yolop.ConfigSchema)
	}

	// The config schema and the server agree on what a config is.
	for _, valid := range []string{
		`{}`,
		`{"servers": {"go": {"command": "/opt/go/bin/gopls", "settings": {"gopls": {"staticcheck": true}}}, "python": {"extensions": [".py"]},
		  "zig": {"command": "zls", "extensions": [".zig"]}, "rust": {"disabled": true}},
		  "request_timeout_ms": 30000, "startup_timeout_ms": 60000, "diagnostics_wait_ms": 3000, "max_results": 100}`,
	} {
		var cfg any
		json.Unmarshal([]byte(valid), &cfg)
		if err := m.ValidateConfig(cfg); err != nil {
			t.Errorf("schema refuses %s: %v", valid, err)
		}
		if _, err := manager.ParseConfig(json.RawMessage(valid)); err != nil {
			t.Errorf("server refuses %s: %v", valid, err)
		}
	}
	for _, invalid := range []string{
		`{"request_timeout_ms": 10}`,
		`{"servers": {"go": {"command": 5}}}`,
		`{"servers": {"go": {"comand": "gopls"}}}`,
		`{"timeout": 5}`,
	} {
		var cfg any
		json.Unmarshal([]byte(invalid), &cfg)
		if err := m.ValidateConfig(cfg); err == nil {
			t.Errorf("schema accepts %s", invalid)
		}
	}
}

func TestVersionFlag(t *testing.T) {
	var out, errb strings.Builder
	if code := run(context.Background(), []string{"--version"}, nil, &out, &errb); code != 0 || out.String() != "yolop-extension-lsp "+version+"\n" {
		t.Fatalf("--version: %d %q", code, out.String())
	}
	if code := run(context.Background(), []string{"--bogus"}, nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "unknown argument") {
		t.Fatalf("--bogus: %d %q", code, errb.String())
	}
}

// TestKilledExtensionLeavesNoServer kills the extension with SIGKILL (no
// chance to clean up): its language servers die with it (parent-death
// signal), so nothing is orphaned.
func TestKilledExtensionLeavesNoServer(t *testing.T) {
	lsptest.RequireGopls(t)
	root := lsptest.Fixture(t, "gomod")
	h := spawn(t, root, `{}`)
	res, err := h.tool(context.Background(), "lsp_hover", map[string]any{"file": "cmd/app/main.go", "line": 12, "symbol": "Hello"}, nil)
	if err != nil || res.IsError {
		t.Fatalf("lsp_hover = %+v, %v", res, err)
	}
	kids := children(h.cmd.Process.Pid)
	if len(kids) != 1 {
		t.Fatalf("extension children %v, want one gopls", kids)
	}
	h.cmd.Process.Kill()
	h.cmd.Wait()
	h.conn.Close()
	h.conn.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(kids[0], 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(-kids[0], syscall.SIGKILL)
			t.Fatalf("gopls (pid %d) outlived the killed extension", kids[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
