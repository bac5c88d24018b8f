package manager

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/packaging"
)

// TestInstallWithEnable: Enable enables the extension after an approved
// install and returns the grant a session runs; a declined install
// enables nothing.
func TestInstallWithEnable(t *testing.T) {
	ctx := context.Background()
	m, cfg, pkg := setup(t)
	_, err := m.Install(ctx, InstallRequest{Source: pkg, Enable: true, Consent: func(context.Context, Proposal) error { return packaging.ErrNotApproved }})
	if !errors.Is(err, packaging.ErrNotApproved) {
		t.Fatalf("declined install = %v", err)
	}
	if _, err := os.Stat(filepath.Join(cfg, "settings.toml")); !os.IsNotExist(err) {
		t.Fatal("a declined install with Enable wrote settings.toml")
	}
	out, err := m.Install(ctx, InstallRequest{Source: pkg, Enable: true, Consent: accept})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Enabled || out.Grant == nil || out.Grant.Name != "demo" || len(out.Grant.Tools) != 2 || out.Grant.Verify == nil {
		t.Fatalf("outcome = %+v", out)
	}
	if e, ok, err := m.Settings().Entry(ctx, "demo"); err != nil || !ok || !e.Enabled {
		t.Fatalf("settings entry = %+v %v %v", e, ok, err)
	}
}

// TestRefreshRepinsANarrowedPathSource: Refresh applies a path source's
// manifest change that widens nothing, without asking, and refuses one
// that widens, matching ErrManifestChanged, naming update and leaving the
// lock alone. Other sources are not touched.
func TestRefreshRepinsANarrowedPathSource(t *testing.T) {
	ctx := context.Background()
	m, cfg, pkg := setup(t)
	if _, err := m.Install(ctx, InstallRequest{Source: pkg, Consent: accept}); err != nil {
		t.Fatal(err)
	}
	out, err := m.Refresh(ctx, "demo")
	if err != nil || out == nil || !out.Unchanged {
		t.Fatalf("refresh of an unchanged package = %+v, %v", out, err)
	}
	write(t, pkg, narrow)
	out, err = m.Refresh(ctx, "demo")
	if err != nil || out.Unchanged || out.Entry.Version != "0.2.0" || len(out.Change.Narrowing) == 0 {
		t.Fatalf("refresh of a narrowed package = %+v, %v", out, err)
	}
	lockPath := filepath.Join(cfg, packaging.LockFileName)
	before, _ := os.ReadFile(lockPath)
	write(t, pkg, wide)
	_, err = m.Refresh(ctx, "demo")
	if !errors.Is(err, packaging.ErrManifestChanged) || !strings.Contains(err.Error(), "update_extension demo") || !strings.Contains(err.Error(), "tool b") {
		t.Fatalf("refresh of a widened package = %v", err)
	}
	if after, _ := os.ReadFile(lockPath); !bytes.Equal(before, after) {
		t.Fatal("a refused refresh changed extensions.lock")
	}
	if _, err := m.Refresh(ctx, "ghost"); !errors.Is(err, packaging.ErrNotInstalled) {
		t.Fatalf("refresh of an unknown name = %v", err)
	}
}
