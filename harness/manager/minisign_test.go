package manager

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jedisct1/go-minisign"

	"yolop.dev/packaging"
	"yolop.dev/registry/cratesio"
)

// signingKey derives a minisign key pair from seed for the test.
func signingKey(seed byte) (string, *minisign.PrivateKey) {
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
	sk := &minisign.PrivateKey{SignatureAlgorithm: [2]byte{'E', 'd'}, KeyId: [8]byte{seed, 1, 2, 3, 4, 5, 6, 7}}
	copy(sk.SecretKey[:], priv)
	pk := sk.PublicKey()
	return base64.StdEncoding.EncodeToString(append(append(pk.SignatureAlgorithm[:], pk.KeyId[:]...), pk.PublicKey[:]...)), sk
}

// publishSigned publishes yolop-extension-echo at version with a prebuilt
// server for this host, its Cargo.toml declaring key (none when ""), and
// the artifact's .minisig made by signer (none when nil).
func publishSigned(t *testing.T, index, version, key string, signer *minisign.PrivateKey) {
	t.Helper()
	triple := cratesio.HostTargets()[0]
	bin := []byte("#!/bin/sh\necho " + version + "\n")
	sum := sha256.Sum256(bin)
	src, art := t.TempDir(), t.TempDir()
	cargo := fmt.Sprintf("[package]\nname = \"yolop-extension-echo\"\nversion = %q\n", version)
	if key != "" {
		cargo += fmt.Sprintf("\n[package.metadata.yolop]\nminisign_key = %q\n", key)
	}
	cargo += fmt.Sprintf("\n[package.metadata.yolop.artifacts.%s]\nurl = \"echo-server\"\nsha256 = %q\nformat = \"bin\"\n", triple, hex.EncodeToString(sum[:]))
	files := map[string]string{
		"Cargo.toml":  cargo,
		"plugin.json": `{"name":"echo","version":"` + version + `","yolop":{"protocol_version":"1.0","capabilityServer":{"command":"echo-server"},"tools":[{"name":"echo"}]}}`,
	}
	for n, body := range files {
		if err := os.WriteFile(filepath.Join(src, n), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	artifacts := []string{filepath.Join(art, "echo-server")}
	if err := os.WriteFile(artifacts[0], bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if signer != nil {
		s, err := signer.Sign(bin, minisign.SignOptions{Hashed: true, TrustedComment: "file:echo-server"})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(artifacts[0]+".minisig", s.Encode(), 0o644); err != nil {
			t.Fatal(err)
		}
		artifacts = append(artifacts, artifacts[0]+".minisig")
	}
	var buf bytes.Buffer
	if err := cratesio.WriteCrate(&buf, "yolop-extension-echo", version, src); err != nil {
		t.Fatal(err)
	}
	crate := filepath.Join(t.TempDir(), "echo.crate")
	if err := os.WriteFile(crate, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := cratesio.Publish(context.Background(), index, crate, cratesio.PublishOptions{Artifacts: artifacts})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 0 {
		t.Fatalf("publish warned: %v", res.Warnings)
	}
}

// A crate's minisign key is shown at consent and pinned in the lock; its
// artifact is installed only with a signature by that key; an update that
// changes the key, or drops it, asks again naming both key ids, and a
// refusal changes nothing.
func TestMinisignKeyIsPinnedAndItsChangeReasks(t *testing.T) {
	if len(cratesio.HostTargets()) == 0 {
		t.Skip("no target triple for this host")
	}
	ctx := context.Background()
	index := filepath.Join(t.TempDir(), "index")
	k1, s1 := signingKey(1)
	k2, s2 := signingKey(2)
	id1, id2 := packaging.MinisignKeyID(k1), packaging.MinisignKeyID(k2)
	publishSigned(t, index, "0.1.0", k1, s1)
	srv := httptest.NewServer(cratesio.ServeIndex(index))
	t.Cleanup(srv.Close)
	reg := "sparse+" + srv.URL + "/"
	cfg := t.TempDir()
	m := advisoryManager(cfg)
	var asked []Proposal
	consent := func(_ context.Context, p Proposal) error { asked = append(asked, p); return nil }
	refuse := func(_ context.Context, p Proposal) error {
		asked = append(asked, p)
		return packaging.ErrNotApproved
	}

	out, err := m.Install(ctx, InstallRequest{Source: reg + "#yolop-extension-echo", Consent: consent})
	if err != nil {
		t.Fatal(err)
	}
	if out.Entry.MinisignKey != k1 || len(asked) != 1 || !strings.Contains(asked[0].Text, "minisign key "+id1) {
		t.Fatalf("fresh install: key %q, proposals %+v", out.Entry.MinisignKey, asked)
	}
	lockPath := filepath.Join(cfg, "extensions.lock")
	lockBytes := func() []byte { b, _ := os.ReadFile(lockPath); return b }

	// 0.2.0 is signed with another key: the update asks, naming both.
	publishSigned(t, index, "0.2.0", k2, s2)
	before := lockBytes()
	asked = nil
	if _, err := m.Update(ctx, "echo", refuse); !errors.Is(err, packaging.ErrNotApproved) {
		t.Fatalf("refused key change: %v", err)
	}
	if len(asked) != 1 || !strings.Contains(asked[0].Text, "minisign key changed: "+id1+" → "+id2) {
		t.Fatalf("key change proposal: %+v", asked)
	}
	if !bytes.Equal(before, lockBytes()) {
		t.Fatal("a refused key change changed the lock")
	}
	asked = nil
	out, err = m.Update(ctx, "echo", consent)
	if err != nil || out.Entry.MinisignKey != k2 || out.Entry.Version != "0.2.0" || len(asked) != 1 {
		t.Fatalf("accepted key change: %+v, %v, %d asks", out, err, len(asked))
	}

	// 0.3.0 claims key 2 but its artifact is signed with key 1: refused.
	publishSigned(t, index, "0.3.0", k2, s1)
	before = lockBytes()
	if _, err := m.Update(ctx, "echo", consent); !errors.Is(err, cratesio.ErrSignature) || !strings.Contains(err.Error(), "not the pinned key "+id2) {
		t.Fatalf("bad signature: %v", err)
	}
	if !bytes.Equal(before, lockBytes()) {
		t.Fatal("a refused artifact changed the lock")
	}

	// 0.4.0 drops the key: asks again, naming the key that was pinned.
	publishSigned(t, index, "0.4.0", "", nil)
	asked = nil
	if _, err := m.Update(ctx, "echo", refuse); !errors.Is(err, packaging.ErrNotApproved) || len(asked) != 1 ||
		!strings.Contains(asked[0].Text, "minisign key dropped") || !strings.Contains(asked[0].Text, id2) {
		t.Fatalf("dropped key: %v, %+v", err, asked)
	}
}
