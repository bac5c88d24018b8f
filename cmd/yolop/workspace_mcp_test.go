package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	mcpTestServerOnce sync.Once
	mcpTestServer     string
	mcpTestServerErr  error
)

// buildMCPTestServer builds the mcp module's go-sdk test server (tools
// echo, sum, env, …) once per test run.
func buildMCPTestServer(t *testing.T) string {
	t.Helper()
	mcpTestServerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "yolop-mcptestserver-")
		if err != nil {
			mcpTestServerErr = err
			return
		}
		mcpTestServer = filepath.Join(dir, "mcptestserver")
		if out, err := exec.Command("go", "build", "-o", mcpTestServer, "yolop.dev/mcp/internal/testserver/mcptestserver").CombinedOutput(); err != nil {
			mcpTestServerErr = &buildError{err, out}
		}
	})
	if mcpTestServerErr != nil {
		t.Fatalf("building mcptestserver: %v", mcpTestServerErr)
	}
	return mcpTestServer
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + string(e.out) }

func writeWorkspaceMCP(t *testing.T, ws string, servers map[string]any) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.WriteFile(filepath.Join(ws, ".mcp.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A workspace's .mcp.json starts nothing until the user approves it: a
// session on a pipe says why and how, `yolop mcp approve` shows the
// command and the host variables the file reads and pins the answer, and
// a changed file is off again until approved, with what changed.
func TestWorkspaceMCPApproval(t *testing.T) {
	isolate(t)
	srv := buildMCPTestServer(t)
	ws := t.TempDir()
	t.Setenv("YOLOP_TEST_MCP_TOKEN", "s3cret")
	writeWorkspaceMCP(t, ws, map[string]any{"repo": map[string]any{"command": srv, "env": map[string]string{"REPO_TOKEN": "${YOLOP_TEST_MCP_TOKEN}"}}})
	call := `/call mcp__repo__echo {"text":"the repo server ran"}` + "\n/quit\n"

	out, errOut, code := cli(t, call, "session", "--workspace", ws, "--no-enabled")
	if code != 0 {
		t.Fatalf("session exit %d: %s", code, errOut)
	}
	mustContain(t, "unapproved session", out, ".mcp.json is not approved", "(repo) were not started", "yolop mcp approve")
	if strings.Contains(out, "the repo server ran") {
		t.Fatalf("an unapproved workspace server ran:\n%s", out)
	}

	// Without a terminal, approve shows what it would approve and changes
	// nothing.
	out, errOut, code = cli(t, "", "mcp", "approve", "--workspace", ws)
	if code == 0 {
		t.Fatalf("mcp approve without a terminal or --yes succeeded:\n%s", out)
	}
	mustContain(t, "approve summary", out, "repo: runs "+srv, "env REPO_TOKEN=${YOLOP_TEST_MCP_TOKEN}", "$YOLOP_TEST_MCP_TOKEN")
	mustContain(t, "approve refusal", errOut, "no terminal", "--yes")
	out, _, _ = cli(t, call, "session", "--workspace", ws, "--no-enabled")
	if strings.Contains(out, "the repo server ran") {
		t.Fatalf("a refused approval started the server:\n%s", out)
	}

	out, errOut, code = cli(t, "", "mcp", "approve", "--workspace", ws, "--yes")
	if code != 0 {
		t.Fatalf("mcp approve --yes exit %d: %s", code, errOut)
	}
	mustContain(t, "approve --yes", out, "approved ", "sha256:")
	out, errOut, _ = cli(t, call, "session", "--workspace", ws, "--no-enabled")
	mustContain(t, "approved session", out, "the repo server ran")
	if strings.Contains(out, "not approved") {
		t.Errorf("an approved workspace was reported unapproved:\n%s", out)
	}

	// The file changes (as a pull might change it): off again.
	writeWorkspaceMCP(t, ws, map[string]any{"repo": map[string]any{"command": srv, "args": []string{"-mode", "x"}, "env": map[string]string{"REPO_TOKEN": "${YOLOP_TEST_MCP_TOKEN}", "HOME_DIR": "${HOME}"}}})
	out, _, _ = cli(t, call, "session", "--workspace", ws, "--no-enabled")
	mustContain(t, "changed session", out, ".mcp.json changed since you approved it", "yolop mcp approve")
	if strings.Contains(out, "the repo server ran") {
		t.Fatalf("a changed workspace file started its server:\n%s", out)
	}
	// --yes approves it, saying what changed.
	out, _, _ = cli(t, call, "session", "--workspace", ws, "--no-enabled", "--yes")
	mustContain(t, "session --yes", out, "changed since you approved it", "~ changed server", "-mode x", "+ now reads $HOME", "approved with --yes")
}

// A WASM guest whose workspace mount is writable can write .mcp.json, but
// what it writes never runs: the next session does not start an
// unapproved server (before approval existed, this turned the sandbox
// into code execution on the host).
func TestWASMGuestCannotPlantWorkspaceMCP(t *testing.T) {
	isolate(t)
	srv := buildMCPTestServer(t)
	guest := filepath.Join(t.TempDir(), "guest.wasm")
	build := exec.Command("go", "build", "-o", guest, "yolop.dev/transport/wasm/internal/testguest")
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the test guest: %v\n%s", err, out)
	}
	pkg := t.TempDir()
	b, _ := os.ReadFile(guest)
	os.WriteFile(filepath.Join(pkg, "guest.wasm"), b, 0o644)
	manifest, _ := json.Marshal(map[string]any{"name": "guest", "version": "0.1.0", "description": "writes files in the workspace",
		"yolop": map[string]any{
			"protocol_version": "1.0",
			"capabilityServer": map[string]any{"transport": "wasm", "module": "guest.wasm", "fs": []any{map[string]any{"path": "${workspace}", "mode": "rw"}}},
			"tools": []any{map[string]any{"name": "write", "description": "write a file", "example": map[string]any{"path": "x", "data": "y"},
				"input_schema": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}, "data": map[string]any{"type": "string"}}}}},
		}})
	os.WriteFile(filepath.Join(pkg, "plugin.json"), manifest, 0o644)
	ws := t.TempDir()
	planted, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"pwn": map[string]any{"command": srv}}})
	args, _ := json.Marshal(map[string]string{"path": filepath.Join(ws, ".mcp.json"), "data": string(planted)})

	out, errOut, code := cli(t, "/call write "+string(args)+"\n/quit\n", "session", "--ext", pkg, "--no-enabled", "--no-mcp", "--workspace", ws)
	if code != 0 {
		t.Fatalf("guest session exit %d: %s\n%s", code, out, errOut)
	}
	if got, err := os.ReadFile(filepath.Join(ws, ".mcp.json")); err != nil || string(got) != string(planted) {
		t.Fatalf("the guest did not write .mcp.json (the test needs it to): %q, %v\n%s", got, err, out)
	}

	out, _, _ = cli(t, `/call mcp__pwn__echo {"text":"planted server ran"}`+"\n/quit\n", "session", "--workspace", ws, "--no-enabled")
	mustContain(t, "next session", out, ".mcp.json is not approved", "(pwn) were not started")
	if strings.Contains(out, "planted server ran") {
		t.Fatalf("a server a WASM guest planted in .mcp.json ran on the host:\n%s", out)
	}
}
