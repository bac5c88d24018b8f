package hostgrant

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"yolop.dev/core"
	"yolop.dev/packaging"
)

func loadSandboxed(t *testing.T, facet string) *packaging.Manifest {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "share"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(`{"name":"boxed","version":"1","yolop":{"protocol_version":"1.0",
		"capabilityServer":{"command":"srv"}`+facet+`}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := packaging.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSandboxResolvesPlaceholders(t *testing.T) {
	home, cache := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", cache)
	os.MkdirAll(filepath.Join(home, "go"), 0o755)
	m := loadSandboxed(t, `,"sandbox":{"fs":[
		{"path":"${workspace}/src","access":"rw"},{"path":"${package}/share"},{"path":"${home}/go"},
		{"path":"${home}/missing"},{"path":"${cache}","access":"rw"},{"path":"/usr"}],
		"net":{"connect":[443,80,443],"bind":[8080]},"exec":true}`)
	g, err := FromManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	want := &core.Confinement{
		Paths: []core.ConfinedPath{
			{Path: core.WorkspaceVar + "/src", Write: true},
			{Path: filepath.Join(m.Dir, "share")},
			{Path: filepath.Join(home, "go")},
			{Path: filepath.Join(cache, "yolop", "ext", "boxed"), Write: true},
			{Path: "/usr"},
		},
		Connect: []uint16{80, 443}, Bind: []uint16{8080}, Exec: true, Origin: "manifest",
	}
	if d := cmp.Diff(want, g.Server.Sandbox); d != "" {
		t.Fatalf("sandbox (-want +got):\n%s", d)
	}
	if fi, err := os.Stat(filepath.Join(cache, "yolop", "ext", "boxed")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the cache directory was not created private: %v %v", fi, err)
	}
	// At each start the workspace is filled in.
	got := core.ExpandSandbox(g.Server.Sandbox, "/w")
	if got.Paths[0].Path != "/w/src" {
		t.Fatalf("expanded = %+v", got.Paths[0])
	}
}

func TestSandboxDefault(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	m := loadSandboxed(t, "")
	g, err := FromManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	s := g.Server.Sandbox
	if s == nil || s.Origin != "default" || s.Exec || len(s.Connect)+len(s.Bind) != 0 {
		t.Fatalf("default sandbox = %+v", s)
	}
	if s.Paths[0] != (core.ConfinedPath{Path: core.WorkspaceVar, Write: true}) || s.Paths[1] != (core.ConfinedPath{Path: m.Dir}) {
		t.Fatalf("default paths = %+v", s.Paths)
	}
	for _, p := range s.Paths {
		if p.Path == "/usr" && p.Write {
			t.Fatalf("system directories are read-only: %+v", p)
		}
	}
}

// A provider facet's endpoint is on a port the kernel picks: the sandbox
// lets the server listen on port 0, and nothing more.
func TestSandboxProviderMayListen(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	m := loadSandboxed(t, `,"provider":{"name":"local","models":[{"id":"m","context_window":1000}]}`)
	g, err := FromManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	if s := g.Server.Sandbox; len(s.Bind) != 1 || s.Bind[0] != 0 || len(s.Connect) != 0 {
		t.Fatalf("provider sandbox = %+v", s)
	}
}

// An http MCP server the extension hosts at 127.0.0.1:* is on a port the
// kernel picks too.
func TestSandboxLoopbackMCPMayListen(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	m := loadSandboxed(t, `,"mcpServers":[{"name":"m","type":"http","url":"http://127.0.0.1:*/mcp"}]`)
	g, err := FromManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	if s := g.Server.Sandbox; len(s.Bind) != 1 || s.Bind[0] != 0 {
		t.Fatalf("loopback MCP sandbox = %+v", s)
	}
}
