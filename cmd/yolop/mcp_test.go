package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// yolopScript writes an executable that runs this test binary as the
// yolop CLI with an empty config directory, for clients that spawn yolop
// themselves (and pass it no environment of ours).
func yolopScript(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the wrapper is a shell script")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "yolop")
	script := "#!/bin/sh\nYOLOP_TEST_CLI=1 YOLOP_CONFIG_DIR='" + filepath.Join(dir, "config") + "' exec '" + exe + "' \"$@\"\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func mcpText(r *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCPServeWithGoSDKClient drives `yolop mcp serve` over stdio with the
// go-sdk client: the echo extension's tools listed with their manifest
// schemas, a call, count's updates as progress, and its hook's block as a
// tool error.
func TestMCPServeWithGoSDKClient(t *testing.T) {
	yolop := yolopScript(t)
	pkg := echoPackage(t)
	var mu sync.Mutex
	var progress []float64
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
		mu.Lock()
		progress = append(progress, r.Params.Progress)
		mu.Unlock()
	}})
	cmd := exec.Command(yolop, "mcp", "serve", "--ext", pkg)
	cmd.Stderr = os.Stderr
	cs, err := c.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ctx := context.Background()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if strings.Join(names, ",") != "count,echo,reverse" {
		t.Fatalf("tools = %v", names)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "via yolop mcp serve"}})
	if err != nil || mcpText(res) != "via yolop mcp serve" {
		t.Fatalf("echo = %+v, %v", res, err)
	}
	p := &sdk.CallToolParams{Name: "count", Arguments: map[string]any{"n": 4, "delay_ms": 1}}
	p.SetProgressToken("p1")
	res, err = cs.CallTool(ctx, p)
	if err != nil || mcpText(res) != "counted to 4" {
		t.Fatalf("count = %+v, %v", res, err)
	}
	// Progress is delivered concurrently with the result: wait for it (the
	// deadline only catches none ever coming).
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := len(progress)
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no progress notifications")
		}
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "forbidden"}})
	if err != nil || !res.IsError || !strings.Contains(mcpText(res), "blocked") {
		t.Fatalf("hook block = %q, %v", mcpText(res), err)
	}
	// Arguments are validated against the manifest schema first.
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(mcpText(res), "text") {
		t.Fatalf("missing text = %q, %v", mcpText(res), err)
	}
}

// TestMCPServeWithInspectorCLI: the MCP Inspector CLI (npm
// @modelcontextprotocol/inspector, pinned in mcp/testdata/node) lists and
// calls the echo extension's tools through `yolop mcp serve`.
func TestMCPServeWithInspectorCLI(t *testing.T) {
	cli, _ := filepath.Abs("../../mcp/testdata/node/node_modules/@modelcontextprotocol/inspector-cli/build/index.js")
	if _, err := os.Stat(cli); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the inspector is not installed (npm ci --prefix mcp/testdata/node): %v", err)
		}
		t.Skip("the inspector is not installed; run npm ci --prefix mcp/testdata/node")
	}
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is not on PATH; .ci/run installs nodejs")
		}
		t.Skip("node is not on PATH")
	}
	yolop := yolopScript(t)
	pkg := echoPackage(t)
	inspect := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("node", append([]string{cli, yolop, "mcp", "serve", "--ext", pkg}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("inspector %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	out := inspect("--method", "tools/list")
	var list struct {
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Tools) != 3 {
		t.Fatalf("tools/list: %v\n%s", err, out)
	}
	out = inspect("--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=hello inspector")
	if !strings.Contains(out, "hello inspector") || strings.Contains(out, `"isError": true`) {
		t.Fatalf("echo: %s", out)
	}
	out = inspect("--method", "tools/call", "--tool-name", "count", "--tool-arg", "n=3", "delay_ms=1")
	if !strings.Contains(out, "counted to 3") {
		t.Fatalf("count: %s", out)
	}
}

// TestSessionMCPJSON: `yolop session` connects the workspace's .mcp.json
// (server-everything over stdio), calls its tools, and /status shows it
// with a broken server beside it degraded.
func TestSessionMCPJSON(t *testing.T) {
	js, _ := filepath.Abs("../../mcp/testdata/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if _, err := os.Stat(js); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("server-everything is not installed: %v", err)
		}
		t.Skip("server-everything is not installed; run npm ci --prefix mcp/testdata/node")
	}
	ws := t.TempDir()
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": "node", "args": []string{js, "stdio"}},
		"broken":     map[string]any{"command": "no-such-mcp-server"},
	}})
	os.WriteFile(filepath.Join(ws, ".mcp.json"), b, 0o644)
	cfg := t.TempDir()
	t.Setenv("YOLOP_CONFIG_DIR", cfg)
	os.WriteFile(filepath.Join(cfg, "settings.toml"), []byte("[mcp]\nnever_defer = [\"mcp__everything__echo\"]\n"), 0o600)
	script := strings.Join([]string{
		"/tools",
		`/call mcp__everything__echo {"message":"from the session"}`,
		`/call mcp__everything__get-sum {"a":1,"b":2}`,
		`/call mcp__everything__trigger-long-running-operation {"duration":1,"steps":2}`,
		"/status",
		"/quit",
	}, "\n")
	out, errOut, code := cli(t, script, "session", "--workspace", ws, "--no-enabled", "--json", "--yes")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var sawEcho, sawSum, sawProgress, sawDone, sawBroken, sawReady bool
	deferred := map[string]bool{}
	for _, ev := range events(t, out) {
		s, _ := json.Marshal(ev)
		line := string(s)
		switch ev["event"] {
		case "result":
			sawEcho = sawEcho || strings.Contains(line, "from the session")
			sawSum = sawSum || strings.Contains(line, "3")
			sawDone = sawDone || strings.Contains(line, "Long running operation completed")
		case "tool.update":
			d, _ := ev["data"].(map[string]any)
			sawProgress = sawProgress || d["progress"] != nil
		case "warning":
			sawBroken = sawBroken || strings.Contains(line, "broken")
		case "status":
			sawReady = sawReady || (ev["mcp_server"] == "everything" && ev["state"] == "ready")
		case "tool":
			n, _ := ev["name"].(string)
			d, _ := ev["deferred"].(bool)
			deferred[n] = d
		}
	}
	if d, ok := deferred["mcp__everything__echo"]; !ok || d || !deferred["mcp__everything__get-sum"] {
		t.Errorf("deferral (never_defer echo in settings.toml): %v", deferred)
	}
	if !sawEcho || !sawSum || !sawProgress || !sawDone || !sawBroken || !sawReady {
		t.Fatalf("echo %v sum %v progress %v done %v broken %v ready %v:\n%s", sawEcho, sawSum, sawProgress, sawDone, sawBroken, sawReady, out)
	}
}

// TestMCPServeHTTPStaysOnLoopback: a non-loopback --http address is refused
// without --allow-remote.
func TestMCPServeHTTPStaysOnLoopback(t *testing.T) {
	_, errOut, code := cli(t, "", "mcp", "serve", "--http", "0.0.0.0:0")
	if code == 0 || !strings.Contains(errOut, "--allow-remote") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// TestMCPServeCollisionWarnedOnce: two packages serving tools of the same
// names (echo and echo2, copies of the echo example) make one collision
// warning per tool, and `yolop mcp serve` prints each once — not once per
// rebuild of the session's tool registry as well.
func TestMCPServeCollisionWarnedOnce(t *testing.T) {
	yolop := yolopScript(t)
	a := echoPackage(t)
	b := echoPackage(t)
	var m map[string]any
	raw, err := os.ReadFile(filepath.Join(b, "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	m["name"] = "echo2"
	raw, _ = json.Marshal(m)
	if err := os.WriteFile(filepath.Join(b, "plugin.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(yolop, "mcp", "serve", "--ext", a, "--ext", b)
	cmd.Stdin = strings.NewReader("") // the client leaves at once
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("yolop mcp serve: %v\n%s", err, stderr.String())
	}
	out := stderr.String()
	for _, tool := range []string{"echo", "count"} {
		if n := strings.Count(out, `"echo2__`+tool+`"`) + strings.Count(out, "=echo2__"+tool); n != 1 {
			t.Errorf("the collision of %s is printed %d times, want once:\n%s", tool, n, out)
		}
	}
}
