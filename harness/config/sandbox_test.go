package config

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"yolop.dev/core"
	"yolop.dev/harness/secrets"
	"yolop.dev/harness/settings"
	"yolop.dev/packaging"
	"yolop.dev/transport/stdio/confine"
)

// sandboxFixture is a native extension with a sandbox block and a settings
// directory; body is written as settings.toml.
func sandboxFixture(t *testing.T, body string) (*Resolver, *packaging.Manifest) {
	t.Helper()
	pkgDir, cfg := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	os.WriteFile(filepath.Join(pkgDir, "plugin.json"), []byte(`{"name":"boxed","version":"1","yolop":{"protocol_version":"1.0",
		"capabilityServer":{"command":"srv"},"sandbox":{"fs":[{"path":"${workspace}","access":"ro"}],"net":{"connect":[443]}}}}`), 0o644)
	m, err := packaging.Load(pkgDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, settings.FileName), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	set := settings.New(cfg)
	return &Resolver{Settings: set, Secrets: secrets.NewFile(cfg), SettingsPath: set.Path()}, m
}

func TestSandboxSettingsWidenTheGrant(t *testing.T) {
	extra := t.TempDir()
	r, m := sandboxFixture(t, `[sandbox.extensions.boxed]
fs = [{ path = "`+extra+`", access = "rw" }]
connect = [80, 443]
bind = [8080]
exec = true
`)
	g, _, err := r.Grant(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	s := g.Server.Sandbox
	if s == nil || s.Origin != "settings" || !s.Exec || !slices.Equal(s.Connect, []uint16{80, 443}) || !slices.Equal(s.Bind, []uint16{8080}) {
		t.Fatalf("sandbox = %+v", s)
	}
	if !slices.Contains(s.Paths, core.ConfinedPath{Path: extra, Write: true}) || !slices.Contains(s.Paths, core.ConfinedPath{Path: core.WorkspaceVar}) {
		t.Fatalf("paths = %+v", s.Paths)
	}
	if s.Required {
		t.Fatal("required without refuse_unsandboxed")
	}
}

func TestSandboxSettingsOffAndBadPath(t *testing.T) {
	r, m := sandboxFixture(t, "[sandbox.extensions.boxed]\nmode = \"off\"\n")
	g, _, err := r.Grant(context.Background(), m)
	if err != nil || g.Server.Sandbox != nil {
		t.Fatalf("mode off: sandbox %+v, err %v", g.Server.Sandbox, err)
	}
	r, m = sandboxFixture(t, "[sandbox.extensions.boxed]\nfs = [{ path = \"rel/dir\" }]\n")
	if _, _, err := r.Grant(context.Background(), m); err == nil || !strings.Contains(err.Error(), "sandbox.extensions.boxed.fs[0].path") || !strings.Contains(err.Error(), r.SettingsPath) {
		t.Fatalf("a relative path in settings: err = %v", err)
	}
	// No [sandbox] at all: the manifest's rules as they are.
	r, m = sandboxFixture(t, "")
	g, _, err = r.Grant(context.Background(), m)
	if err != nil || g.Server.Sandbox == nil || g.Server.Sandbox.Origin != "manifest" || g.Server.Sandbox.Required {
		t.Fatalf("no settings: %+v %v", g.Server.Sandbox, err)
	}
}

func TestRefuseUnsandboxed(t *testing.T) {
	r, m := sandboxFixture(t, "[sandbox]\nrefuse_unsandboxed = true\n")
	restore := confine.SetKernelABIForTesting(0)
	_, _, err := r.Grant(context.Background(), m)
	var ue *UnsandboxedError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "unsandboxed (kernel has no Landlock)") || !strings.Contains(err.Error(), "boxed is not started") {
		restore()
		t.Fatalf("no Landlock: err = %v", err)
	}
	// TCP rules need ABI 4: at 3 the rules are only partly enforced.
	confine.SetKernelABIForTesting(3)
	if _, _, err := r.Grant(context.Background(), m); !errors.As(err, &ue) || !strings.Contains(err.Error(), "partly sandboxed") {
		restore()
		t.Fatalf("ABI 3: err = %v", err)
	}
	confine.SetKernelABIForTesting(7)
	g, _, err := r.Grant(context.Background(), m)
	restore()
	if err != nil || !g.Server.Sandbox.Required {
		t.Fatalf("ABI 7: %+v %v", g.Server.Sandbox, err)
	}
	// The user's own "off" for one extension wins over the refusal.
	r, m = sandboxFixture(t, "[sandbox]\nrefuse_unsandboxed = true\n[sandbox.extensions.boxed]\nmode = \"off\"\n")
	restore = confine.SetKernelABIForTesting(0)
	defer restore()
	if g, _, err := r.Grant(context.Background(), m); err != nil || g.Server.Sandbox != nil {
		t.Fatalf("off with refuse: %+v %v", g.Server.Sandbox, err)
	}
}

func TestSandboxStatusIsHonest(t *testing.T) {
	_, m := sandboxFixture(t, "")
	restore := confine.SetKernelABIForTesting(0)
	defer restore()
	if got := SandboxStatus(m, settings.Sandbox{}, "settings.toml"); got != "unsandboxed (kernel has no Landlock); rules from the manifest" {
		t.Errorf("no Landlock: %q", got)
	}
	confine.SetKernelABIForTesting(3)
	if got := SandboxStatus(m, settings.Sandbox{}, "settings.toml"); !strings.HasPrefix(got, "partly sandboxed: ") || !strings.Contains(got, "TCP") {
		t.Errorf("ABI 3 with a TCP rule: %q", got)
	}
	confine.SetKernelABIForTesting(7)
	if got := SandboxStatus(m, settings.Sandbox{}, "settings.toml"); !strings.HasPrefix(got, "sandboxed (Landlock ABI 7") {
		t.Errorf("ABI 7: %q", got)
	}
	off := settings.Sandbox{RefuseUnsandboxed: true, Extensions: map[string]settings.SandboxOverride{"boxed": {Mode: "off"}}}
	if got := SandboxStatus(m, off, "settings.toml"); got != "unsandboxed (turned off in the user's settings)" {
		t.Errorf("off: %q", got)
	}
	confine.SetKernelABIForTesting(0)
	if got := SandboxStatus(m, settings.Sandbox{RefuseUnsandboxed: true}, "settings.toml"); !strings.HasPrefix(got, "not started: unsandboxed (kernel has no Landlock)") {
		t.Errorf("refused: %q", got)
	}
	if got := SandboxState(core.ServerSpec{Transport: core.TransportWASM, Module: "/m.wasm"}); got != "" {
		t.Errorf("wasm: %q", got)
	}
}
