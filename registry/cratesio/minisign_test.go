package cratesio

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jedisct1/go-minisign"
)

// testMinisignKey derives a minisign key pair from seed (tests only; the
// secret key never leaves the test). It returns the public key line as a
// crate declares it and the secret key.
func testMinisignKey(t testing.TB, seed byte, keyID [8]byte) (string, *minisign.PrivateKey) {
	t.Helper()
	priv := ed25519.NewKeyFromSeed(bytesOf(seed, ed25519.SeedSize))
	sk := &minisign.PrivateKey{SignatureAlgorithm: [2]byte{'E', 'd'}, KeyId: keyID}
	copy(sk.SecretKey[:], priv)
	pk := sk.PublicKey()
	line := base64.StdEncoding.EncodeToString(append(append(pk.SignatureAlgorithm[:], pk.KeyId[:]...), pk.PublicKey[:]...))
	return line, sk
}

func bytesOf(b byte, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}

func minisig(t testing.TB, sk *minisign.PrivateKey, data []byte) []byte {
	t.Helper()
	s, err := sk.Sign(data, minisign.SignOptions{Hashed: true, TrustedComment: "file:echo-server"})
	if err != nil {
		t.Fatal(err)
	}
	return s.Encode()
}

func TestCrateMinisignKey(t *testing.T) {
	key, _ := testMinisignKey(t, 1, [8]byte{1, 2, 3, 4, 5, 6, 7, 8})
	got, err := CrateMinisignKey([]byte("[package]\nname = \"x\"\n[package.metadata.yolop]\nminisign_key = \"" + key + "\"\n"))
	if err != nil || got != key {
		t.Fatalf("key = %q, %v", got, err)
	}
	if id, err := MinisignKeyID(key); err != nil || id != "0807060504030201" {
		t.Fatalf("key id = %q, %v", id, err)
	}
	if got, err := CrateMinisignKey([]byte("[package]\nname = \"x\"\n")); err != nil || got != "" {
		t.Fatalf("no key: %q, %v", got, err)
	}
	if _, err := CrateMinisignKey([]byte("[package.metadata.yolop]\nminisign_key = \"not a key\"\n")); err == nil {
		t.Fatal("a malformed key was accepted")
	}
}

// An artifact of a crate that pins a minisign key is installed only when
// <url>.minisig verifies with that key; a signature by another key, a
// tampered signature and a missing one are refused with ErrSignature and
// leave the package directory as it was.
func TestProvisionArtifactVerifiesTheMinisignSignature(t *testing.T) {
	binary := []byte("#!/bin/sh\necho signed\n")
	key, sk := testMinisignKey(t, 7, [8]byte{0xAA, 1, 2, 3, 4, 5, 6, 0x77})
	_, other := testMinisignKey(t, 9, [8]byte{0xAA, 1, 2, 3, 4, 5, 6, 0x77}) // same id, other key
	_, otherID := testMinisignKey(t, 9, [8]byte{9, 9, 9, 9, 9, 9, 9, 9})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "echo-server"), binary, 0o644); err != nil {
		t.Fatal(err)
	}
	_, srv := serve(t, http.FileServer(http.Dir(dir)))
	sum := sha256.Sum256(binary)
	a := Artifact{Target: "x86_64-unknown-linux-gnu", URL: srv.URL + "/echo-server", SHA256: hex.EncodeToString(sum[:]), Format: "bin", Bin: "echo-server", MinisignKey: key}
	c := NewClient(fastOptions(""))
	ctx := context.Background()
	sigPath := filepath.Join(dir, "echo-server.minisig")

	bad := map[string][]byte{
		"missing":      nil,
		"other key":    minisig(t, other, binary),
		"other key id": minisig(t, otherID, binary),
		"tampered":     []byte(strings.Replace(string(minisig(t, sk, binary)), "file:echo-server", "file:other", 1)),
		"another file": minisig(t, sk, []byte("something else")),
	}
	for name, sig := range bad {
		os.Remove(sigPath)
		if sig != nil {
			if err := os.WriteFile(sigPath, sig, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		pkg := t.TempDir()
		before := snapshot(t, pkg)
		_, err := c.ProvisionArtifact(ctx, a, pkg, nil)
		if !errors.Is(err, ErrSignature) || !strings.Contains(err.Error(), "nothing was installed") {
			t.Errorf("%s: err = %v, want ErrSignature", name, err)
		}
		assertUnchanged(t, pkg, before)
	}

	if err := os.WriteFile(sigPath, minisig(t, sk, binary), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg := t.TempDir()
	if _, err := c.ProvisionArtifact(ctx, a, pkg, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(pkg, "bin", "echo-server")); err != nil || string(got) != string(binary) {
		t.Fatalf("bin/echo-server = %q, %v", got, err)
	}
}
