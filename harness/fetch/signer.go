package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"yolop.dev/packaging"
	"yolop.dev/registry/git"
)

// gitSigner converts the signer git verified into the one the lock pins.
func gitSigner(s *git.Signer) *packaging.Signer {
	if s == nil {
		return nil
	}
	return &packaging.Signer{Kind: s.Kind, Fingerprint: s.Fingerprint, KeyID: s.KeyID, Principal: s.Principal, Verified: s.Verified, Object: s.Object}
}

// gpgExportTimeout bounds one `gpg --export`.
const gpgExportTimeout = 10 * time.Second

// GPGKeys is the default source of OpenPGP public keys for verifying a
// signed git commit or tag: the user's own GnuPG keyring, read with
// `gpg --batch --armor --export <key id>` (GNUPGHOME is honoured). Without
// gpg on PATH, or without the key in the keyring, no key is available and
// the signer is recorded by key id as not verified. Nothing is fetched
// from a key server.
func GPGKeys(keyID string) (string, error) {
	path, err := exec.LookPath("gpg")
	if errors.Is(err, exec.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), gpgExportTimeout)
	defer cancel()
	var out, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, "--batch", "--no-tty", "--armor", "--export", "0x"+keyID)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("gpg --export %s: %w: %s", keyID, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out.String(), nil
}

// openPGPKeys is g's key source: g.OpenPGPKeys, else [GPGKeys].
func (g Git) openPGPKeys() git.OpenPGPKeys {
	if g.OpenPGPKeys != nil {
		return g.OpenPGPKeys
	}
	return GPGKeys
}

// signerOf is the signer to pin for r, fetched for src. When the commit is
// unsigned and was fetched by its id although the source names a branch
// or tag (the update cooldown resolves the ref first, then fetches the
// commit it saw), the annotated tag's signature is looked up through the
// ref, and counts if the ref still resolves to the same commit.
func signerOf(ctx context.Context, src packaging.Source, r git.Result, opts git.Options) (*packaging.Signer, error) {
	if r.Signer != nil || r.Ref != r.Commit || src.Rev == "" || strings.EqualFold(src.Rev, r.Commit) {
		return gitSigner(r.Signer), nil
	}
	via, err := git.ResolveOnly(ctx, src.URL, src.Rev, opts)
	if err != nil {
		return nil, err
	}
	if via.Commit != r.Commit {
		return nil, nil // the ref moved on: only the commit's own signature counts
	}
	return gitSigner(via.Signer), nil
}
