package git

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp/armor"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// ErrBadSignature reports a commit or tag whose signature does not verify
// over its content: the object was altered after signing, or the signature
// is malformed. Such a revision is refused outright.
var ErrBadSignature = errors.New("git signature does not verify")

// Signature kinds of [Signer.Kind].
const (
	SignerSSH     = "ssh"
	SignerOpenPGP = "openpgp"
)

// A Signer is the key that signed the resolved commit or, when the commit
// itself is unsigned, the annotated tag it was resolved through.
type Signer struct {
	// Kind is [SignerSSH] or [SignerOpenPGP].
	Kind string
	// Fingerprint names the key that verified the signature: "SHA256:…"
	// for an SSH key (the key is embedded in the signature), the 40-hex
	// primary-key fingerprint for OpenPGP. Empty for an OpenPGP signature
	// that could not be checked for want of the public key.
	Fingerprint string
	// KeyID is the OpenPGP issuer key id (16 hex) the signature names.
	KeyID string
	// Principal is the user id of the OpenPGP key that verified, if any.
	Principal string
	// Verified is true when the signature was checked with the key named
	// by Fingerprint. Only an OpenPGP signature without an available
	// public key is unverified.
	Verified bool
	// Object is "commit" or "tag": what carried the signature.
	Object string
}

// String names the key, never just "signed": "ssh key SHA256:…",
// "OpenPGP key <fingerprint> (<uid>)", or "OpenPGP key <id> (not verified:
// no public key)".
func (s *Signer) String() string {
	if s == nil {
		return "unsigned"
	}
	switch {
	case s.Kind == SignerSSH:
		return "ssh key " + s.Fingerprint
	case s.Verified && s.Principal != "":
		return fmt.Sprintf("OpenPGP key %s (%s)", s.Fingerprint, s.Principal)
	case s.Verified:
		return "OpenPGP key " + s.Fingerprint
	default:
		return fmt.Sprintf("OpenPGP key %s (not verified: no public key)", s.KeyID)
	}
}

// An OpenPGPKeys returns the armored public key ring that may verify a
// signature by the OpenPGP key keyID (16 hex, upper case). An empty ring
// and a nil error mean no key is available: the signature is recorded as
// unverified, naming the key id.
type OpenPGPKeys func(keyID string) (armoredKeyRing string, err error)

const sshArmorHeader = "-----BEGIN SSH SIGNATURE-----"

// signer verifies the signature of c or, when c is unsigned, of the
// annotated tag it was resolved through. Nil, nil means neither is signed.
func (s *session) signer(c *object.Commit) (*Signer, error) {
	what := fmt.Sprintf("commit %s from %s", c.Hash, s.shown)
	if c.PGPSignature != "" {
		return verifyObject(c.PGPSignature, c.EncodeWithoutSignature, "commit", what, s.opts.OpenPGPKeys)
	}
	if t := s.tag; t != nil && t.PGPSignature != "" {
		return verifyObject(t.PGPSignature, t.EncodeWithoutSignature, "tag", fmt.Sprintf("tag %s (%s) from %s", t.Name, t.Hash, s.shown), s.opts.OpenPGPKeys)
	}
	return nil, nil
}

func verifyObject(sig string, encode func(plumbing.EncodedObject) error, kind, what string, keys OpenPGPKeys) (*Signer, error) {
	payload := &plumbing.MemoryObject{}
	if err := encode(payload); err != nil {
		return nil, fmt.Errorf("git: %s: encode the signed payload: %w", what, err)
	}
	if strings.HasPrefix(strings.TrimSpace(sig), sshArmorHeader) {
		return verifySSH(sig, payload, kind, what)
	}
	return verifyOpenPGP(sig, payload, kind, what, keys)
}

// verifySSH checks an SSH signature (git's gpg.format=ssh) over payload in
// the "git" namespace with the key the signature embeds.
func verifySSH(sig string, payload *plumbing.MemoryObject, kind, what string) (*Signer, error) {
	parsed, err := sshsig.Unarmor([]byte(sig))
	if err != nil {
		return nil, fmt.Errorf("%w: %s carries a malformed SSH signature: %v", ErrBadSignature, what, err)
	}
	fp := ssh.FingerprintSHA256(parsed.PublicKey)
	r, err := payload.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if err := sshsig.Verify(r, parsed, parsed.PublicKey, parsed.HashAlgorithm, "git"); err != nil {
		return nil, fmt.Errorf("%w: the SSH signature of %s by key %s does not verify (%v); the object was altered after signing or the signature is forged", ErrBadSignature, what, fp, err)
	}
	return &Signer{Kind: SignerSSH, Fingerprint: fp, Verified: true, Object: kind}, nil
}

// verifyOpenPGP checks an OpenPGP signature with the key ring keys returns
// for its issuer. Without a key the signer is recorded by key id,
// unverified.
func verifyOpenPGP(sig string, payload *plumbing.MemoryObject, kind, what string, keys OpenPGPKeys) (*Signer, error) {
	block, err := armor.Decode(strings.NewReader(sig))
	if err != nil {
		return nil, fmt.Errorf("%w: %s carries a signature that is neither SSH nor armored OpenPGP: %v", ErrBadSignature, what, err)
	}
	p, err := packet.Read(block.Body)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: malformed OpenPGP signature: %v", ErrBadSignature, what, err)
	}
	ps, ok := p.(*packet.Signature)
	if !ok {
		return nil, fmt.Errorf("%w: %s: the OpenPGP armor holds no signature packet", ErrBadSignature, what)
	}
	var keyID string
	switch {
	case ps.IssuerKeyId != nil:
		keyID = fmt.Sprintf("%016X", *ps.IssuerKeyId)
	case len(ps.IssuerFingerprint) >= 8:
		keyID = fmt.Sprintf("%X", ps.IssuerFingerprint[len(ps.IssuerFingerprint)-8:])
	default:
		return nil, fmt.Errorf("%w: %s: the OpenPGP signature names no issuer key", ErrBadSignature, what)
	}
	unverified := &Signer{Kind: SignerOpenPGP, KeyID: keyID, Object: kind}
	if keys == nil {
		return unverified, nil
	}
	ring, err := keys(keyID)
	if err != nil {
		return nil, fmt.Errorf("git: %s: look up OpenPGP key %s: %w", what, keyID, err)
	}
	if strings.TrimSpace(ring) == "" {
		return unverified, nil
	}
	e, err := checkDetached(ring, payload, sig)
	if errors.Is(err, pgperrors.ErrUnknownIssuer) {
		return unverified, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: the OpenPGP signature of %s by key %s does not verify (%v); the object was altered after signing or the signature is forged", ErrBadSignature, what, keyID, err)
	}
	out := &Signer{Kind: SignerOpenPGP, KeyID: keyID, Fingerprint: fmt.Sprintf("%X", e.PrimaryKey.Fingerprint), Verified: true, Object: kind}
	for name := range e.Identities {
		if out.Principal == "" || name < out.Principal {
			out.Principal = name
		}
	}
	return out, nil
}
