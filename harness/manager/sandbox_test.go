package manager

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/harness/settings"
	"yolop.dev/packaging"
	"yolop.dev/transport/stdio/confine"
)

const boxed = `{"name":"demo","version":"0.1.0","yolop":{"protocol_version":"1.0",
 "capabilityServer":{"command":"demo-server"},
 "sandbox":{"fs":[{"path":"${workspace}","access":"ro"}]%s},
 "tools":[{"name":"a"}]}}`

// A path source whose live manifest widens its sandbox is kept off until
// the update is approved; the consent prompt shows the diff and what this
// machine enforces.
func TestSandboxWideningReasks(t *testing.T) {
	restore := confine.SetKernelABIForTesting(0)
	defer restore()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ctx := context.Background()
	cfg, pkg := t.TempDir(), t.TempDir()
	write(t, pkg, strings.Replace(boxed, "%s", "", 1))
	m := New(Options{Store: packaging.NewStore(cfg), Settings: settings.New(cfg)})
	var asked []Proposal
	consent := func(_ context.Context, p Proposal) error { asked = append(asked, p); return nil }
	if _, err := m.Install(ctx, InstallRequest{Source: pkg, Enable: true, Consent: consent}); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || !strings.Contains(asked[0].Text, "Sandbox (declared by the manifest):") ||
		!strings.Contains(asked[0].Text, "Sandbox on this machine: unsandboxed (kernel has no Landlock); rules from the manifest") {
		t.Fatalf("fresh install proposal:\n%v", asked)
	}
	gs, _, _ := m.Grants(ctx)
	if len(gs) != 1 || gs[0].Server.Sandbox == nil || gs[0].Server.Sandbox.Exec {
		t.Fatalf("grants = %+v", gs)
	}

	write(t, pkg, strings.Replace(boxed, "%s", `,"exec":true,"net":{"connect":[22]}`, 1))
	gs, warns, _ := m.Grants(ctx)
	if len(gs) != 0 || len(warns) != 1 || !strings.Contains(warns[0], "sandbox: may run other programs") {
		t.Fatalf("a widened live manifest must keep the extension off: %v %v", gs, warns)
	}
	_, err := m.Update(ctx, "demo", func(_ context.Context, p Proposal) error {
		asked = append(asked, p)
		return packaging.ErrNotApproved
	})
	if !errors.Is(err, packaging.ErrNotApproved) || len(asked) != 2 ||
		!strings.Contains(asked[1].Text, "+ sandbox: may connect to TCP port 22") || !strings.Contains(asked[1].Text, "+ sandbox: may run other programs") {
		t.Fatalf("update: %v\n%v", err, asked)
	}
	if _, err := m.Update(ctx, "demo", consent); err != nil {
		t.Fatal(err)
	}
	gs, _, _ = m.Grants(ctx)
	if len(gs) != 1 || !gs[0].Server.Sandbox.Exec || len(gs[0].Server.Sandbox.Connect) != 1 {
		t.Fatalf("after re-consent: %+v", gs)
	}
	// Narrowing back needs no consent.
	write(t, pkg, strings.Replace(boxed, "%s", "", 1))
	n := len(asked)
	if _, err := m.Update(ctx, "demo", consent); err != nil || len(asked) != n {
		t.Fatalf("narrowing asked: %v %d", err, len(asked)-n)
	}

	// refuse_unsandboxed keeps it off on a machine without Landlock.
	os.WriteFile(filepath.Join(cfg, settings.FileName), append(mustRead(t, filepath.Join(cfg, settings.FileName)), []byte("\n[sandbox]\nrefuse_unsandboxed = true\n")...), 0o644)
	gs, warns, _ = m.Grants(ctx)
	if len(gs) != 0 || len(warns) != 1 || !strings.Contains(warns[0], "demo is not started: its sandbox would be unsandboxed (kernel has no Landlock)") {
		t.Fatalf("refuse_unsandboxed: %v %v", gs, warns)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
