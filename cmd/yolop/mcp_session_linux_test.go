package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSessionMCPContributedProgressAndCancel runs `yolop session` as a
// process over a test extension that contributes server-everything (over
// stdio, and over streamable HTTP from a process it owns) and a .mcp.json
// naming it too: the contributed tools are called, the long-running tool's
// progress streams, and Ctrl-C cancels the running MCP call, not the
// session.
func TestSessionMCPContributedProgressAndCancel(t *testing.T) {
	js, _ := filepath.Abs("../../mcp/testdata/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if _, err := os.Stat(js); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("server-everything is not installed: %v", err)
		}
		t.Skip("server-everything is not installed; run npm ci --prefix mcp/testdata/node")
	}
	pkg := t.TempDir()
	os.MkdirAll(filepath.Join(pkg, "bin"), 0o755)
	if out, err := exec.Command("go", "build", "-o", filepath.Join(pkg, "bin", "testext"), "yolop.dev/mcp/internal/testext").CombinedOutput(); err != nil {
		t.Fatalf("building testext: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	manifest, _ := json.Marshal(map[string]any{"name": "testext", "version": "0.1.0", "description": "contributes server-everything",
		"yolop": map[string]any{
			"protocol_version": "1.0",
			"capabilityServer": map[string]any{"command": "testext", "env": map[string]string{"MCPTEST_EVERYTHING": js, "MCPTEST_EVERYTHING_PORT": strconv.Itoa(port)}},
			// It runs node (server-everything over HTTP, on port) and
			// connects to it.
			"sandbox": map[string]any{"exec": true,
				"fs":  []any{map[string]any{"path": filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(js))))}},
				"net": map[string]any{"connect": []int{port}, "bind": []int{port}}},
			"tools": []any{map[string]any{"name": "ping", "description": "pong", "input_schema": map[string]any{"type": "object"}}},
			"mcpServers": []any{
				map[string]any{"name": "everything", "type": "stdio", "command": "node", "args": []string{js, "stdio"}},
				map[string]any{"name": "everything-http", "type": "http", "url": "http://127.0.0.1:*/mcp"},
			},
		}})
	os.WriteFile(filepath.Join(pkg, "plugin.json"), manifest, 0o644)
	ws := t.TempDir()
	mcpJSON, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"everything": map[string]any{"command": "node", "args": []string{js, "stdio"}}}})
	os.WriteFile(filepath.Join(ws, ".mcp.json"), mcpJSON, 0o644)

	exe, _ := os.Executable()
	cmd := exec.Command(exe, "session", "--ext", pkg, "--no-enabled", "--workspace", ws, "--yes")
	cmd.Env = append(os.Environ(), "YOLOP_TEST_CLI=1", "YOLOP_CONFIG_DIR="+t.TempDir())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var seen []string
	wait := func(want string) {
		t.Helper()
		deadline := time.After(90 * time.Second) // only catches a hang
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("output ended before %q:\n%s", want, strings.Join(seen, "\n"))
				}
				seen = append(seen, l)
				if strings.Contains(l, want) {
					return
				}
			case <-deadline:
				t.Fatalf("no %q:\n%s", want, strings.Join(seen, "\n"))
			}
		}
	}
	wait("yolop session:")
	io.WriteString(stdin, `/call mcp__testext__everything__echo {"message":"contributed stdio"}`+"\n")
	wait("contributed stdio")
	io.WriteString(stdin, `/call mcp__testext__everything-http__get-sum {"a":40,"b":2}`+"\n")
	wait("42")
	io.WriteString(stdin, `/call mcp__everything__echo {"message":"from .mcp.json"}`+"\n")
	wait("from .mcp.json")
	io.WriteString(stdin, `/call mcp__testext__everything-http__trigger-long-running-operation {"duration":600,"steps":3000}`+"\n")
	wait("1/3000")
	cmd.Process.Signal(syscall.SIGINT)
	wait("cancelled")
	io.WriteString(stdin, `/call mcp__testext__everything__echo {"message":"still here"}`+"\n")
	wait("still here")
	io.WriteString(stdin, "/quit\n")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("session exited with %v", err)
	}
}
