package packaging

import (
	"context"
	"errors"
	"strings"
	"testing"
)

var (
	keyA = &Signer{Kind: SignerSSH, Fingerprint: "SHA256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", Verified: true, Object: "commit"}
	keyB = &Signer{Kind: SignerSSH, Fingerprint: "SHA256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", Verified: true, Object: "commit"}
)

// signedInstall is gitInstall of src whose fetch reports signer.
func signedInstall(src string, signer *Signer) InstallOptions {
	o := gitInstall(src)
	fetch := o.Fetch
	o.Fetch = func(ctx context.Context, dir string) (FetchResult, error) {
		fr, err := fetch(ctx, dir)
		fr.Signer = signer
		return fr, err
	}
	return o
}

// The signer of an approved git commit is pinned in the lock; an update by
// the same key changes nothing about consent, another key or no signature
// widens (re-asks) and names both keys, and a refusal leaves the store as
// it was.
func TestSignerPinnedAndChangeWidens(t *testing.T) {
	t.Parallel()
	s := NewStore(t.TempDir())
	ctx := context.Background()
	o := signedInstall(version(t, "1.0.0", "a"), keyA)
	var fresh Change
	o.Approve = func(next, prev *Manifest, c Change) error { fresh = c; return nil }
	res, err := s.Install(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Entry.Signer == nil || res.Entry.Signer.Fingerprint != keyA.Fingerprint {
		t.Fatalf("lock entry signer = %+v, want %s", res.Entry.Signer, keyA.Fingerprint)
	}
	if fresh.Signer != "commit signed by ssh key "+keyA.Fingerprint {
		t.Errorf("fresh install Change.Signer = %q", fresh.Signer)
	}
	lock, err := s.ReadLock(ctx)
	if err != nil || lock.Entry("demo").Signer == nil || !lock.Entry("demo").Signer.SameKey(keyA) {
		t.Fatalf("signer not read back from extensions.lock: %v", err)
	}

	// Same key, new content: no widening from the signer.
	o = signedInstall(version(t, "1.0.1", "a"), keyA)
	o.Approve = func(next, prev *Manifest, c Change) error {
		if c.Widens() {
			t.Errorf("same signer widens: %v", c.Widening)
		}
		return nil
	}
	if _, err := s.Install(ctx, o); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name   string
		signer *Signer
		want   string
	}{
		{"another key", keyB, "signer changed: " + keyA.Fingerprint + " → " + keyB.Fingerprint},
		{"unsigned", nil, "no longer signed (was " + keyA.Fingerprint + ")"},
	} {
		before := snapshot(t, s)
		o = signedInstall(version(t, "1.0.2", "a"), tc.signer)
		var got Change
		o.Approve = func(next, prev *Manifest, c Change) error { got = c; return ErrNotApproved }
		if _, err := s.Install(ctx, o); !errors.Is(err, ErrNotApproved) {
			t.Fatalf("%s: %v, want the refusal", tc.name, err)
		}
		if len(got.Widening) != 1 || got.Widening[0] != tc.want {
			t.Errorf("%s: widening %q, want [%q]", tc.name, got.Widening, tc.want)
		}
		if !strings.Contains(got.String(), "+ "+tc.want) {
			t.Errorf("%s: diff text lacks the signer line:\n%s", tc.name, got)
		}
		if after := snapshot(t, s); after != before {
			t.Errorf("%s: a refused update changed the store", tc.name)
		}
	}

	// Approved: the new key is pinned.
	o = signedInstall(version(t, "1.0.3", "a"), keyB)
	if res, err = s.Install(ctx, o); err != nil || !res.Entry.Signer.SameKey(keyB) {
		t.Fatalf("approved update to key B: %+v, %v", res, err)
	}
}

func TestSignerSameKeyAndText(t *testing.T) {
	t.Parallel()
	fp := "0123456789ABCDEF0123456789ABCDEF01234567"
	verified := &Signer{Kind: SignerOpenPGP, Fingerprint: fp, KeyID: "89ABCDEF01234567", Verified: true, Principal: "A <a@example.com>"}
	unverified := &Signer{Kind: SignerOpenPGP, KeyID: "89abcdef01234567"}
	other := &Signer{Kind: SignerOpenPGP, KeyID: "1111111111111111"}
	switch {
	case !verified.SameKey(unverified), !unverified.SameKey(verified):
		t.Error("a verified key and the same key id unverified differ")
	case unverified.SameKey(other), keyA.SameKey(keyB), keyA.SameKey(nil), (*Signer)(nil).SameKey(keyA):
		t.Error("different keys compare equal")
	case !(*Signer)(nil).SameKey(nil):
		t.Error("two unsigned differ")
	}
	if got := unverified.String(); got != "OpenPGP key 89abcdef01234567 (not verified: no public key)" {
		t.Errorf("unverified: %q", got)
	}
	if got := verified.String(); got != "OpenPGP key "+fp+" (A <a@example.com>)" {
		t.Errorf("verified: %q", got)
	}
	if got := (&Signer{Kind: SignerSSH, Fingerprint: "SHA256:x", Verified: true, Object: "tag"}).Describe(); got != "tag signed by ssh key SHA256:x" {
		t.Errorf("tag: %q", got)
	}
	if got := (*Signer)(nil).Describe(); got != "unsigned" {
		t.Errorf("nil: %q", got)
	}
	var c Change
	signerChange(&c, &LockEntry{}, keyA)
	if c.Widens() || len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "now signed by ssh key "+keyA.Fingerprint) {
		t.Errorf("first signature on an update: %+v", c)
	}
}

func TestParseLockRefusesMalformedSigner(t *testing.T) {
	t.Parallel()
	s := NewStore(t.TempDir())
	if _, err := s.Install(context.Background(), signedInstall(version(t, "1.0.0", "a"), keyA)); err != nil {
		t.Fatal(err)
	}
	lock, err := s.ReadLock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lock.Extensions[0].Signer = &Signer{Kind: "x509", Fingerprint: "f"}
	b, _ := lock.Marshal()
	if _, err := ParseLock(b); !errors.Is(err, ErrLockCorrupt) || !strings.Contains(err.Error(), "signer") {
		t.Fatalf("ParseLock with a bad signer: %v", err)
	}
}
