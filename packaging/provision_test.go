package packaging

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Provision runs only after consent, its files join the approved content
// hash, and a reinstall that provisions the same content writes nothing.
func TestProvisionRunsAfterConsent(t *testing.T) {
	s := NewStore(t.TempDir())
	src := version(t, "1.0.0", "echo")
	var order []string
	opts := gitInstall(src)
	fetch := opts.Fetch
	opts.Source = Source{Kind: SourceCrate, Crate: "yolop-extension-x", Raw: "crates.io:yolop-extension-x"}
	opts.Name = filepathBaseName(t, src)
	opts.Fetch = func(ctx context.Context, dir string) (FetchResult, error) {
		order = append(order, "fetch")
		fr, err := fetch(ctx, dir)
		fr.CrateChecksum = strings.Repeat("a", 64)
		return fr, err
	}
	opts.Provision = func(ctx context.Context, dir string, m *Manifest) (FetchResult, error) {
		order = append(order, "provision")
		return FetchResult{ArtifactDigest: "sha256:" + strings.Repeat("b", 64)}, os.WriteFile(filepath.Join(dir, "bin", "server"), []byte("binary"), 0o755)
	}

	declined := opts
	declined.Approve = func(next, prev *Manifest, ch Change) error {
		order = append(order, "approve")
		return ErrNotApproved
	}
	before := snapshot(t, s)
	if _, err := s.Install(context.Background(), declined); !errors.Is(err, ErrNotApproved) {
		t.Fatalf("declined install = %v", err)
	}
	if got := strings.Join(order, ","); got != "fetch,approve" {
		t.Fatalf("declined install ran %s; provisioning must wait for consent", got)
	}
	if snapshot(t, s) != before {
		t.Fatal("a declined install changed the store")
	}

	order = nil
	opts.Approve = func(next, prev *Manifest, ch Change) error {
		order = append(order, "approve")
		return nil
	}
	res, err := s.Install(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order, ","); got != "fetch,approve,provision" {
		t.Fatalf("order = %s", got)
	}
	if res.Entry.ArtifactDigest == "" || res.Entry.CrateChecksum == "" {
		t.Fatalf("lock entry lacks the provisioned digest or checksum: %+v", res.Entry)
	}
	found := false
	for _, f := range res.Entry.Files {
		found = found || f.Path == "bin/server"
	}
	if !found {
		t.Fatal("the provisioned binary is not in the approved content listing")
	}
	if _, err := s.VerifyInstalled(context.Background(), res.Entry.Name); err != nil {
		t.Fatalf("verify after provisioning: %v", err)
	}

	lockBefore, _ := os.ReadFile(s.LockPath())
	again, err := s.Install(context.Background(), opts)
	if err != nil || !again.Unchanged {
		t.Fatalf("same crate again = %+v, %v; want unchanged", again, err)
	}
	if lockAfter, _ := os.ReadFile(s.LockPath()); string(lockAfter) != string(lockBefore) {
		t.Fatal("an unchanged reinstall rewrote the lock")
	}
}

func filepathBaseName(t *testing.T, dir string) string {
	t.Helper()
	m, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m.Name
}

// Repair swaps a damaged store copy for the fetched package; without it an
// identical fetch is a no-op that leaves the damage in place.
func TestRepairReplacesADamagedCopy(t *testing.T) {
	s := NewStore(t.TempDir())
	src := version(t, "1.0.0", "echo")
	opts := gitInstall(src)
	res, err := s.Install(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	name := res.Entry.Name
	stored := filepath.Join(s.ExtensionsDir(), name, "README.md")
	if err := os.WriteFile(stored, []byte("tampered\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VerifyInstalled(context.Background(), name); !errors.Is(err, ErrTampered) {
		t.Fatalf("verify after tampering = %v", err)
	}
	again, err := s.Install(context.Background(), opts)
	if err != nil || !again.Unchanged {
		t.Fatalf("plain reinstall = %+v, %v; want a no-op", again, err)
	}
	if _, err := s.VerifyInstalled(context.Background(), name); !errors.Is(err, ErrTampered) {
		t.Fatal("a plain reinstall repaired the copy; only Repair may")
	}
	opts.Repair = true
	if _, err := s.Install(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VerifyInstalled(context.Background(), name); err != nil {
		t.Fatalf("after repair: %v", err)
	}
	assertNoLeftovers(t, s)
}
