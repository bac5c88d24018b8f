package cratesio

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/jedisct1/go-minisign"
	"github.com/pelletier/go-toml/v2"
)

// A crate may declare the minisign public key its prebuilt artifacts are
// signed with, in Cargo.toml:
//
//	[package.metadata.yolop]
//	minisign_key = "RWQf6LRCGA9i53mlYecO4IzT51TGPpvWucNSCh1CBM0QTaLn73Y7GFO3"
//
// (the second line of a minisign .pub file). Each artifact then has its
// signature at the artifact's URL with ".minisig" appended, as `minisign
// -Sm <file>` writes it. The key is pinned in extensions.lock at approval;
// an artifact whose signature does not verify with it is refused.

// ErrSignature is wrapped by every artifact signature failure.
var ErrSignature = errors.New("artifact signature does not verify")

// CrateMinisignKey returns the minisign public key a crate's Cargo.toml
// declares under [package.metadata.yolop] minisign_key, "" when none. A
// key that does not parse is an error.
func CrateMinisignKey(cargoToml []byte) (string, error) {
	var doc struct {
		Package struct {
			Metadata struct {
				Yolop struct {
					MinisignKey string `toml:"minisign_key"`
				} `toml:"yolop"`
			} `toml:"metadata"`
		} `toml:"package"`
	}
	if err := toml.Unmarshal(cargoToml, &doc); err != nil {
		return "", fmt.Errorf("Cargo.toml: %w", err)
	}
	k := strings.TrimSpace(doc.Package.Metadata.Yolop.MinisignKey)
	if k == "" {
		return "", nil
	}
	if _, err := MinisignKeyID(k); err != nil {
		return "", fmt.Errorf("Cargo.toml: [package.metadata.yolop] minisign_key: %w", err)
	}
	return k, nil
}

// MinisignKeyID returns the key id of a minisign public key (the base64
// line) as minisign prints it: 16 uppercase hex digits.
func MinisignKeyID(key string) (string, error) {
	pk, err := minisign.NewPublicKey(strings.TrimSpace(key))
	if err != nil {
		return "", fmt.Errorf("%q is not a minisign public key (want the base64 line of a minisign .pub file)", key)
	}
	if pk.SignatureAlgorithm != [2]byte{'E', 'd'} {
		return "", fmt.Errorf("minisign key %q: unsupported algorithm", key)
	}
	return fmt.Sprintf("%016X", binary.LittleEndian.Uint64(pk.KeyId[:])), nil
}

// VerifyMinisign checks that sig (a .minisig file's content) is a
// signature of data by key.
func VerifyMinisign(key string, data, sig []byte) error {
	pk, err := minisign.NewPublicKey(strings.TrimSpace(key))
	if err != nil {
		return fmt.Errorf("%w: the pinned key is not a minisign public key", ErrSignature)
	}
	s, err := minisign.DecodeSignature(string(sig))
	if err != nil {
		return fmt.Errorf("%w: the .minisig file is malformed: %v", ErrSignature, err)
	}
	if s.KeyId != pk.KeyId {
		return fmt.Errorf("%w: signed by key %016X, not the pinned key %016X", ErrSignature, binary.LittleEndian.Uint64(s.KeyId[:]), binary.LittleEndian.Uint64(pk.KeyId[:]))
	}
	if ok, err := pk.Verify(data, s); !ok || err != nil {
		return fmt.Errorf("%w: %v (key %016X)", ErrSignature, err, binary.LittleEndian.Uint64(pk.KeyId[:]))
	}
	return nil
}

// verifyArtifactSignature downloads <a.URL>.minisig and checks the
// downloaded artifact file against a.MinisignKey. Nothing to do when the
// artifact has no key.
func (c *Client) verifyArtifactSignature(ctx context.Context, a Artifact, file, tmpDir string) error {
	if a.MinisignKey == "" {
		return nil
	}
	id, _ := MinisignKeyID(a.MinisignKey)
	sigURL := a.URL + ".minisig"
	what := fmt.Sprintf("signature %s", sigURL)
	f, _, _, err := c.download(ctx, what, sigURL, false, tmpDir, nil)
	if err != nil {
		return fmt.Errorf("%w: artifact %s for %s: the crate pins minisign key %s but its signature could not be fetched: %w; nothing was installed", ErrSignature, a.URL, a.Target, id, err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	sig, err := readCapped(f, 64<<10, sigURL)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrSignature, sigURL, err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if err := VerifyMinisign(a.MinisignKey, data, sig); err != nil {
		return fmt.Errorf("artifact %s for %s: %w; nothing was installed", a.URL, a.Target, err)
	}
	return nil
}
