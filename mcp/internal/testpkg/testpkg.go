// Package testpkg builds the mcp module's test binaries (the go-sdk test
// server, the testext extension, the echo example) and writes installed-
// style packages of them, for the client and gateway tests.
package testpkg

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"yolop.dev/core/host"
	"yolop.dev/packaging"
	"yolop.dev/packaging/hostgrant"
)

// Bins is where Build put the binaries.
var Bins string

// Packages are the commands Build builds, by binary name.
var Packages = map[string]string{
	"mcptestserver":        "yolop.dev/mcp/internal/testserver/mcptestserver",
	"testext":              "yolop.dev/mcp/internal/testext",
	"yolop-extension-echo": "yolop.dev/core/examples/echo",
	"gatewaycmd":           "yolop.dev/mcp/internal/gatewaycmd",
}

// Build builds every package into a temporary directory and returns a
// function that removes it. Call it from TestMain.
func Build() (func(), error) {
	dir, err := os.MkdirTemp("", "mcp-test-bins-")
	if err != nil {
		return nil, err
	}
	Bins = dir
	for name, pkg := range Packages {
		if b, err := exec.Command("go", "build", "-o", Bin(name), pkg).CombinedOutput(); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("building %s: %v\n%s", pkg, err, b)
		}
	}
	return func() { os.RemoveAll(dir) }, nil
}

// Bin is the path of a built binary.
func Bin(name string) string {
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	return filepath.Join(Bins, name)
}

// EverythingJS is server-everything's entry point, installed by `npm ci
// --prefix mcp/testdata/node`, relative to a package directory of the mcp
// module. Without it (or node) the test is skipped, or failed in CI.
func EverythingJS(t *testing.T) string {
	t.Helper()
	js, _ := filepath.Abs("../testdata/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	return npmFile(t, js)
}

// InspectorCLI is the MCP Inspector CLI's entry point, like EverythingJS.
func InspectorCLI(t *testing.T) string {
	t.Helper()
	js, _ := filepath.Abs("../testdata/node/node_modules/@modelcontextprotocol/inspector-cli/build/cli.js")
	return npmFile(t, js)
}

func npmFile(t *testing.T, p string) string {
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (npm ci --prefix mcp/testdata/node): %v", p, err)
		}
		t.Skipf("%s is not installed; run npm ci --prefix mcp/testdata/node", p)
	}
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is not on PATH; .ci/run installs nodejs")
		}
		t.Skip("node is not on PATH")
	}
	return p
}

// WritePackage writes a package named name with the given yolop facet and
// the named binaries in bin/, loads its manifest and returns its grant.
func WritePackage(t testing.TB, name string, facet map[string]any, bins ...string) host.Grant {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range bins {
		data, err := os.ReadFile(Bin(b))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "bin", filepath.Base(Bin(b))), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m := map[string]any{"name": name, "version": "0.1.0", "description": "a test package", "yolop": facet}
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	man, err := packaging.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	g, err := hostgrant.FromManifest(man)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestExt is the testext package with env and MCP servers.
func TestExt(t testing.TB, env map[string]string, servers []map[string]any) host.Grant {
	if env == nil {
		env = map[string]string{}
	}
	if servers == nil {
		servers = []map[string]any{}
	}
	facet := map[string]any{
		"protocol_version": "1.0",
		"capabilityServer": map[string]any{"command": "testext", "env": env},
		"ui_ask":           true,
		"tools": []any{
			map[string]any{"name": "ping", "description": "pong", "input_schema": map[string]any{"type": "object"}},
			map[string]any{"name": "ask", "description": "Ask the user their name.", "input_schema": map[string]any{"type": "object"}},
		},
		"mcpServers": servers,
	}
	if js := env["MCPTEST_EVERYTHING"]; js != "" {
		// It runs server-everything under node itself (over HTTP, on a
		// port picked here): its sandbox says so, names the package node
		// loads, and the port it listens on and connects to.
		port := EverythingPort(t, env)
		facet["sandbox"] = map[string]any{"exec": true,
			"fs":  []any{map[string]any{"path": filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(js))))}},
			"net": map[string]any{"connect": []int{port}, "bind": []int{port}}}
	}
	return WritePackage(t, "testext", facet, "testext", "mcptestserver")
}

// EverythingPort picks a free loopback port for testext's
// server-everything over HTTP and sets it in env as
// MCPTEST_EVERYTHING_PORT, so a sandbox can name it.
func EverythingPort(t testing.TB, env map[string]string) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	env["MCPTEST_EVERYTHING_PORT"] = strconv.Itoa(port)
	return port
}

// Echo is the echo example's package, from its own plugin.json.
func Echo(t testing.TB) host.Grant {
	t.Helper()
	g, _ := EchoDir(t)
	return g
}

// EchoDir is Echo and the package directory.
func EchoDir(t testing.TB) (host.Grant, string) {
	t.Helper()
	b, err := os.ReadFile("../../core/examples/echo/plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Yolop map[string]any `json:"yolop"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	g := WritePackage(t, "echo", m.Yolop, "yolop-extension-echo")
	return g, g.Server.PackageDir
}
