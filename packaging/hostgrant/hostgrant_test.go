package hostgrant

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"yolop.dev/core"
	"yolop.dev/core/host"
	"yolop.dev/packaging"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFromManifest(t *testing.T) {
	m, err := packaging.Load("../testdata/cargo")
	if err != nil {
		t.Fatal(err)
	}
	g, err := FromManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	if g.Name != "echo" || g.Version != "0.2.0" || g.ProtocolVersion != "1.0" || !g.Status || g.UIAsk || g.Trace {
		t.Errorf("identity/opt-ins = %+v", g)
	}
	if g.Server.Command != "yolop-extension-echo" || g.Server.PackageDir != m.Dir || g.Server.Name != "echo" ||
		len(g.Server.Args) != 1 || g.Server.Args[0] != "--stdio" {
		t.Errorf("server = %+v", g.Server)
	}
	if d := cmp.Diff([]host.HookGrant{{Event: "pre_tool_use", Matcher: "*", TimeoutMS: 500, OnError: "block"}}, g.Hooks); d != "" {
		t.Errorf("hooks (-want +got):\n%s", d)
	}
	if len(g.Tools) != 1 || g.Tools[0].Name != "echo" || g.Tools[0].Description != "Echo the text back." || !strings.Contains(string(g.Tools[0].InputSchema), `"text"`) {
		t.Errorf("tools = %+v", g.Tools)
	}
	if !strings.Contains(string(g.ConfigSchema), "ECHO_TOKEN") || g.Config != nil {
		t.Errorf("config schema %s / config %s", g.ConfigSchema, g.Config)
	}
}

func TestFromManifestPromptAndSkills(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(`{"name":"s","version":"1","yolop":{"protocol_version":"1.0",
		"capabilityServer":{"command":"srv"},"prompt":{"text":"hi","dynamic":true,"max_bytes":100},"skills":true,
		"commands":[{"name":"go","description":"Go."}],"mcpServers":[{"name":"m","type":"http","url":"http://127.0.0.1:*/mcp"}]}}`), 0o644)
	os.MkdirAll(filepath.Join(dir, "skills", "one"), 0o755)
	os.WriteFile(filepath.Join(dir, "skills", "one", "SKILL.md"), []byte("---\nname: one\ndescription: The first skill.\n---\n# one"), 0o644)
	os.MkdirAll(filepath.Join(dir, "skills", "empty"), 0o755)
	m, err := packaging.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	g, err := FromManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&host.PromptGrant{Text: "hi", Dynamic: true, MaxBytes: 100}, g.Prompt); d != "" {
		t.Errorf("prompt (-want +got):\n%s", d)
	}
	if len(g.Skills) != 1 || g.Skills[0] != filepath.Join(m.Dir, "skills", "one") {
		t.Errorf("skills = %q", g.Skills)
	}
	if len(g.Commands) != 1 || g.Commands[0].Name != "go" || len(g.MCPServers) != 1 || g.MCPServers[0].URL != "http://127.0.0.1:*/mcp" {
		t.Errorf("commands %+v mcp %+v", g.Commands, g.MCPServers)
	}
}

func TestFromManifestNeedsAServer(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(`{"name":"plain","version":"1"}`), 0o644)
	m, err := packaging.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FromManifest(m); err == nil || !strings.Contains(err.Error(), "extension plain") {
		t.Errorf("want an error naming the extension, got %v", err)
	}
}

func TestFromManifestToolTimeout(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(`{"name":"slow","version":"1","yolop":{"protocol_version":"1.0",
		"capabilityServer":{"command":"srv"},"tools":[{"name":"build","timeout_ms":1800000},{"name":"quick"}]}}`), 0o644)
	m, err := packaging.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	g, err := FromManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Tools) != 2 || g.Tools[0].TimeoutMS != 1800000 || g.Tools[1].TimeoutMS != 0 {
		t.Errorf("tools = %+v, want timeout_ms carried (0 when absent)", g.Tools)
	}
}

// TestDefaultToolTimeoutInStep keeps the default packaging renders in the
// consent diff equal to the one the host applies.
func TestDefaultToolTimeoutInStep(t *testing.T) {
	if got := time.Duration(packaging.DefaultToolTimeoutMS) * time.Millisecond; got != host.DefaultToolTimeout {
		t.Errorf("packaging.DefaultToolTimeoutMS is %s, host.DefaultToolTimeout %s", got, host.DefaultToolTimeout)
	}
}

// A wasm server's spec carries the transport, the module's absolute path
// and its sandbox; ${package} is resolved, ${workspace} is left for each
// start.
func TestFromManifestWASMServer(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "server.wasm"), []byte{0, 'a', 's', 'm', 1, 0, 0, 0}, 0o644)
	os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(`{"name":"w","version":"1.0.0","yolop":{"protocol_version":"1.0",
	  "capabilityServer":{"transport":"wasm","module":"server.wasm","fs":[{"path":"${workspace}/src","mode":"rw"},{"path":"${package}/data"}],"max_memory_mb":64},
	  "tools":[{"name":"t"}]}}`), 0o644)
	m, err := packaging.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	g, err := FromManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	s := g.Server
	if s.Transport != core.TransportWASM || s.Module != filepath.Join(m.Dir, "server.wasm") || s.Command != "" || s.MaxMemoryMB != 64 {
		t.Fatalf("spec = %+v", s)
	}
	want := []core.Mount{{Path: core.WorkspaceVar + string(filepath.Separator) + "src"}, {Path: filepath.Join(m.Dir, "data"), ReadOnly: true}}
	if d := cmp.Diff(want, s.Mounts); d != "" {
		t.Errorf("mounts (-want +got):\n%s", d)
	}
}
