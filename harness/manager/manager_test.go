package manager

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"yolop.dev/harness/config"
	"yolop.dev/harness/secrets"
	"yolop.dev/harness/settings"
	"yolop.dev/packaging"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const wide = `{"name":"demo","version":"0.1.0","yolop":{"protocol_version":"1.0",
 "capabilityServer":{"command":"demo-server"},
 "config_schema":{"type":"object","properties":{"level":{"type":"integer"}}},
 "tools":[{"name":"a"},{"name":"b"}]}}`

const narrow = `{"name":"demo","version":"0.2.0","yolop":{"protocol_version":"1.0",
 "capabilityServer":{"command":"demo-server"},
 "config_schema":{"type":"object","properties":{"level":{"type":"integer"}}},
 "tools":[{"name":"a"}]}}`

func setup(t *testing.T) (*Manager, string, string) {
	t.Helper()
	cfg, pkg := t.TempDir(), t.TempDir()
	write(t, pkg, wide)
	return New(Options{Store: packaging.NewStore(cfg), Settings: settings.New(cfg)}), cfg, pkg
}

func write(t *testing.T, pkg, manifest string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(pkg, "plugin.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
}

func accept(context.Context, Proposal) error { return nil }

func TestNarrowingUpdateNeedsNoConsent(t *testing.T) {
	ctx := context.Background()
	m, cfg, pkg := setup(t)
	var asked []Proposal
	consent := func(_ context.Context, p Proposal) error { asked = append(asked, p); return nil }
	if _, err := m.Install(ctx, InstallRequest{Source: pkg, Consent: consent}); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || !asked[0].Fresh || !strings.Contains(asked[0].Text, "Extension demo 0.1.0") {
		t.Fatalf("fresh install proposals = %+v", asked)
	}
	write(t, pkg, narrow)
	out, err := m.Update(ctx, "demo", consent)
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 {
		t.Fatal("a narrowing update asked for consent")
	}
	if out.Change.Widens() || len(out.Change.Narrowing) == 0 || out.Entry.Version != "0.2.0" {
		t.Fatalf("outcome = %+v", out)
	}
	l, _ := packaging.ReadLockFile(filepath.Join(cfg, packaging.LockFileName))
	if l.Entry("demo").Version != "0.2.0" {
		t.Fatal("narrowing update not recorded")
	}
	// Widening back needs consent; declining leaves the lock as it was.
	write(t, pkg, wide)
	before, _ := os.ReadFile(filepath.Join(cfg, packaging.LockFileName))
	_, err = m.Update(ctx, "demo", func(_ context.Context, p Proposal) error {
		if p.Fresh || !p.Change.Widens() || !strings.Contains(p.Text, "Contribution diff for demo") {
			t.Errorf("widening proposal = %+v", p)
		}
		return packaging.ErrNotApproved
	})
	if !errors.Is(err, packaging.ErrNotApproved) {
		t.Fatalf("declined update = %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(cfg, packaging.LockFileName))
	if !bytes.Equal(before, after) {
		t.Fatal("a declined update changed extensions.lock")
	}
	// A nil consent declines a widening update too.
	if _, err := m.Update(ctx, "demo", nil); !errors.Is(err, packaging.ErrNotApproved) {
		t.Fatalf("update with nil consent = %v", err)
	}
}

func TestGrantsSkipWithWarnings(t *testing.T) {
	ctx := context.Background()
	m, cfg, pkg := setup(t)
	if _, err := m.Install(ctx, InstallRequest{Source: pkg, Consent: accept}); err != nil {
		t.Fatal(err)
	}
	s := settings.New(cfg)
	s.Enable(ctx, "ghost")
	if _, err := m.Enable(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	gs, warns, kept := m.Grants(ctx)
	if len(gs) != 1 || gs[0].Name != "demo" || gs[0].Config != nil {
		t.Fatalf("grants = %+v", gs)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "ghost") || !strings.Contains(warns[0], "not installed") {
		t.Fatalf("warnings = %q", warns)
	}
	if len(kept) != 1 || kept[0].Name != "ghost" || kept[0].State != "off" || !strings.Contains(kept[0].Reason, "not installed") {
		t.Fatalf("kept off = %+v, want ghost off: not installed", kept)
	}
	// Config from settings reaches the grant, validated.
	s.SetCapabilityConfig(ctx, "demo", map[string]any{"level": int64(3)})
	gs, _, _ = m.Grants(ctx)
	if len(gs) != 1 || string(gs[0].Config) != `{"level":3}` {
		t.Fatalf("grant config = %s", gs[0].Config)
	}
	s.SetCapabilityConfig(ctx, "demo", map[string]any{"level": "high"})
	gs, warns, _ = m.Grants(ctx)
	if len(gs) != 0 || !strings.Contains(strings.Join(warns, "\n"), "invalid config: level: got string, want integer") || !strings.Contains(strings.Join(warns, "\n"), "settings.toml is fixed") {
		t.Fatalf("invalid config: grants %+v, warnings %q", gs, warns)
	}
	// Disable keeps the config; enable brings it back.
	if changed, err := m.Disable(ctx, "demo"); err != nil || !changed {
		t.Fatalf("disable = %v %v", changed, err)
	}
	if cfgv, _ := s.CapabilityConfig(ctx, "demo"); cfgv["level"] != "high" {
		t.Fatalf("config after disable = %v", cfgv)
	}
	if _, err := m.Disable(ctx, "never-installed"); err == nil {
		t.Fatal("disabling an unknown name succeeded")
	}
}

func TestCrateSourcesWithoutAFetcher(t *testing.T) {
	m, _, _ := setup(t)
	_, err := m.Install(context.Background(), InstallRequest{Source: "crates.io:yolop-extension-x", Consent: accept})
	if err == nil || !strings.Contains(err.Error(), "not available") {
		t.Fatalf("crate install without a fetcher = %v", err)
	}
}

// Every grant goes through the config resolver: config from settings.toml,
// a secret from the credential store as the server's env (never in the
// config), set/unset per field in List, and setup on enable and remove
// tell SecretsChanged.
func TestGrantsGoThroughTheResolver(t *testing.T) {
	ctx := context.Background()
	cfg, pkg := t.TempDir(), t.TempDir()
	write(t, pkg, `{"name":"demo","version":"0.1.0","yolop":{"protocol_version":"1.0",
 "capabilityServer":{"command":"demo-server"},
 "config_schema":{"type":"object","properties":{"level":{"type":"integer"},"token":{"type":"string","secret":true,"env":"DEMO_TOKEN"}}},
 "tools":[{"name":"a"}]}}`)
	st := settings.New(cfg)
	store := secrets.NewFile(cfg)
	changed := 0
	m := New(Options{Store: packaging.NewStore(cfg), Settings: st,
		Resolver:       &config.Resolver{Settings: st, Secrets: store},
		SecretsChanged: func(context.Context) { changed++ }})
	if _, err := m.Install(ctx, InstallRequest{Source: pkg, Consent: accept}); err != nil {
		t.Fatal(err)
	}
	if err := store.Set(ctx, "demo", "token", secrets.New("t0k")); err != nil {
		t.Fatal(err)
	}
	if err := st.SetCapabilityConfig(ctx, "demo", map[string]any{"level": int64(7)}); err != nil {
		t.Fatal(err)
	}
	g, err := m.Enable(ctx, "demo")
	if err != nil || string(g.Config) != `{"level":7}` || g.Server.Env["DEMO_TOKEN"] != "t0k" || g.Verify == nil {
		t.Fatalf("enable grant = %+v, %v", g, err)
	}
	gs, warns, _ := m.Grants(ctx)
	if len(gs) != 1 || len(warns) != 0 || strings.Contains(string(gs[0].Config), "t0k") {
		t.Fatalf("grants %+v, warnings %q", gs, warns)
	}
	list, err := m.List(ctx)
	if err != nil || len(list) != 1 || len(list[0].Config) != 2 || !list[0].Config[0].Set || !list[0].Config[1].Set || !list[0].Config[1].Secret {
		t.Fatalf("list = %+v, %v", list, err)
	}
	if err := m.Remove(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := store.Get(ctx, "demo", "token"); ok || changed != 1 {
		t.Fatalf("after remove: secret kept %v, SecretsChanged called %d times", ok, changed)
	}
}

// engines.yolop is enforced: an install that needs a newer yolop is
// refused before consent and writes nothing; one installed by another
// build is skipped at session start and refused on enable.
func TestEnginesAreEnforced(t *testing.T) {
	ctx := context.Background()
	cfg, pkg := t.TempDir(), t.TempDir()
	write(t, pkg, `{"name":"demo","version":"0.1.0","engines":{"yolop":">=9.0"},"yolop":{"protocol_version":"1.0",
 "capabilityServer":{"command":"demo-server"},"tools":[{"name":"a"}]}}`)
	newer := New(Options{Store: packaging.NewStore(cfg), Settings: settings.New(cfg), HostVersion: "0.1.0-dev"})
	asked := false
	_, err := newer.Install(ctx, InstallRequest{Source: pkg, Consent: func(context.Context, Proposal) error { asked = true; return nil }})
	if !errors.Is(err, packaging.ErrEngine) || !strings.Contains(err.Error(), "needs yolop >=9.0, this is 0.1.0-dev") || asked {
		t.Fatalf("install = %v (asked %v); want ErrEngine before consent", err, asked)
	}
	if _, err := os.Stat(filepath.Join(cfg, packaging.LockFileName)); err == nil {
		t.Fatal("a refused install wrote extensions.lock")
	}
	// Installed by a build that does not check (a newer yolop, say).
	other := New(Options{Store: packaging.NewStore(cfg), Settings: settings.New(cfg)})
	if _, err := other.Install(ctx, InstallRequest{Source: pkg, Consent: accept}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Enable(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	gs, warns, _ := newer.Grants(ctx)
	if len(gs) != 0 || len(warns) != 1 || !strings.Contains(warns[0], "needs yolop >=9.0") {
		t.Fatalf("grants %d, warnings %q", len(gs), warns)
	}
	if _, err := newer.Enable(ctx, "demo"); !errors.Is(err, packaging.ErrEngine) {
		t.Fatalf("enable = %v; want ErrEngine", err)
	}
}
