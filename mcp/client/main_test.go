package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/host"
	"yolop.dev/mcp/client"
	"yolop.dev/packaging"
	"yolop.dev/packaging/hostgrant"
	"yolop.dev/transport/stdio"
)

// bins holds the binaries TestMain builds: mcptestserver and testext.
var bins string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcp-client-test-")
	if err != nil {
		panic(err)
	}
	bins = dir
	for _, pkg := range []string{"yolop.dev/mcp/internal/testserver/mcptestserver", "yolop.dev/mcp/internal/testext"} {
		out := filepath.Join(dir, filepath.Base(pkg))
		if runtime.GOOS == "windows" {
			out += ".exe"
		}
		if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", pkg, err, b)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func bin(name string) string { return filepath.Join(bins, name) }

// everythingJS is server-everything's entry point, installed by
// `npm ci --prefix mcp/testdata/node`; tests that need it skip without it
// (and fail in CI).
func everythingJS(t *testing.T) string {
	t.Helper()
	js, _ := filepath.Abs("../testdata/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if _, err := os.Stat(js); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("server-everything is not installed (npm ci --prefix mcp/testdata/node): %v", err)
		}
		t.Skipf("server-everything is not installed; run npm ci --prefix mcp/testdata/node")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH")
	}
	return js
}

// writePackage writes the testext package: its manifest (with mcpServers)
// and its binaries in bin/, and returns its grant.
func writePackage(t *testing.T, env map[string]string, servers []map[string]any) host.Grant {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"testext", "mcptestserver"} {
		data, err := os.ReadFile(bin(b))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "bin", b), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m := map[string]any{
		"name": "testext", "version": "0.1.0", "description": "contributes MCP servers",
		"yolop": map[string]any{
			"protocol_version": "1.0",
			"capabilityServer": map[string]any{"command": "testext", "env": env},
			"tools":            []any{map[string]any{"name": "ping", "description": "pong", "input_schema": map[string]any{"type": "object"}}},
			"mcpServers":       servers,
		},
	}
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

type fixture struct {
	s   *host.Session
	mcp *client.Client
}

// newSession runs a session over grants with an MCP client over servers.
func newSession(t *testing.T, o client.Options, grants ...host.Grant) fixture {
	t.Helper()
	tr := stdio.New(stdio.Options{Logger: hclog.NewNullLogger()})
	o.Transport = tr
	c := client.New(o)
	s := host.NewSession(host.SessionOptions{Grants: grants, Transport: tr, Contributed: []host.ContributedTools{c}})
	t.Cleanup(s.Close)
	if err := s.Start(context.Background()); err != nil {
		t.Logf("start: %v", err)
	}
	return fixture{s, c}
}

func toolNames(s *host.Session) map[string]host.ToolInfo {
	out := map[string]host.ToolInfo{}
	for _, t := range s.Tools() {
		out[t.Name] = t
	}
	return out
}
