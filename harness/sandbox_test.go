package harness_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"yolop.dev/harness"
	"yolop.dev/harness/settings"
	"yolop.dev/transport/stdio/confine"
)

// ext info says what this machine enforces of a native server's sandbox,
// with the rules' origin, and honours the user's override.
func TestInfoShowsSandbox(t *testing.T) {
	restore := confine.SetKernelABIForTesting(0)
	defer restore()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ctx := context.Background()
	pkg, cfg := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(pkg, "plugin.json"), []byte(`{"name":"boxed","version":"1.0.0","yolop":{"protocol_version":"1.0",
		"capabilityServer":{"command":"srv"},"tools":[{"name":"a"}]}}`), 0o644)
	h, err := harness.Open(ctx, harness.Options{ConfigDir: cfg})
	if err != nil {
		t.Fatal(err)
	}
	in, err := h.Info(ctx, pkg, "")
	if err != nil {
		t.Fatal(err)
	}
	const want = "unsandboxed (kernel has no Landlock); rules from the default"
	if in.Sandbox != want || !strings.Contains(in.Text(), "\n  sandbox:  "+want+"\n") || !strings.Contains(in.Text(), "Sandbox (the default: the manifest declares none):") {
		t.Fatalf("Info.Sandbox = %q\n%s", in.Sandbox, in.Text())
	}
	b, _ := json.Marshal(in)
	if !strings.Contains(string(b), `"sandbox":"`+want+`"`) {
		t.Fatalf("JSON: %s", b)
	}
	confine.SetKernelABIForTesting(7)
	if in, _ = h.Info(ctx, pkg, ""); !strings.HasPrefix(in.Sandbox, "sandboxed (Landlock ABI 7") {
		t.Fatalf("ABI 7: %q", in.Sandbox)
	}
	os.WriteFile(filepath.Join(cfg, settings.FileName), []byte("[sandbox.extensions.boxed]\nmode = \"off\"\n"), 0o644)
	if in, _ = h.Info(ctx, pkg, ""); in.Sandbox != "unsandboxed (turned off in the user's settings)" {
		t.Fatalf("off: %q", in.Sandbox)
	}
}

// A package loaded in place (--ext) runs under the user's [sandbox]
// settings like an installed one: the override widens its rules, and
// refuse_unsandboxed keeps it from starting on a kernel without Landlock.
func TestInPlaceSessionAppliesSandboxSettings(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ctx := context.Background()
	pkg, cfg := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(pkg, "plugin.json"), []byte(`{"name":"boxed","version":"1.0.0","yolop":{"protocol_version":"1.0",
		"capabilityServer":{"command":"srv"},"tools":[{"name":"a"}]}}`), 0o644)
	os.WriteFile(filepath.Join(cfg, settings.FileName), []byte("[sandbox.extensions.boxed]\nconnect = [4318]\n"), 0o644)
	h, err := harness.Open(ctx, harness.Options{ConfigDir: cfg})
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := h.OpenSession(ctx, harness.SessionOptions{}, []string{pkg})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	g := s.InPlace()[0]
	if sb := g.Server.Sandbox; sb == nil || sb.Origin != "settings" || !slices.Contains(sb.Connect, 4318) {
		t.Fatalf("in-place sandbox = %+v; want the user's port added", sb)
	}

	restore := confine.SetKernelABIForTesting(0)
	defer restore()
	os.WriteFile(filepath.Join(cfg, settings.FileName), []byte("[sandbox]\nrefuse_unsandboxed = true\n"), 0o644)
	if _, _, err := h.OpenSession(ctx, harness.SessionOptions{}, []string{pkg}); err == nil || !strings.Contains(err.Error(), "refuse_unsandboxed") {
		t.Fatalf("OpenSession with refuse_unsandboxed on a kernel without Landlock = %v; want the refusal", err)
	}
}
