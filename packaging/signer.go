package packaging

import (
	"fmt"
	"strings"
)

// Signer kinds of [Signer.Kind].
const (
	SignerSSH     = "ssh"
	SignerOpenPGP = "openpgp"
)

// A Signer is the key that signed an approved git commit (or the annotated
// tag it was resolved through), pinned in extensions.lock at approval: an
// update signed by another key, or no longer signed, needs consent again.
type Signer struct {
	// Kind is [SignerSSH] or [SignerOpenPGP].
	Kind string `json:"kind"`
	// Fingerprint is the key that verified the signature: "SHA256:…" for
	// SSH, the 40-hex primary-key fingerprint for OpenPGP. Empty for an
	// OpenPGP signature whose public key was not available.
	Fingerprint string `json:"fingerprint,omitempty"`
	// KeyID is the OpenPGP issuer key id the signature names.
	KeyID string `json:"key_id,omitempty"`
	// Principal is the user id of the OpenPGP key, when known.
	Principal string `json:"principal,omitempty"`
	// Verified is false only for an OpenPGP signature that could not be
	// checked for want of the public key.
	Verified bool `json:"verified"`
	// Object is "commit" or "tag": what carried the signature.
	Object string `json:"object,omitempty"`
}

// String names the key; it never says "signed" without naming the key that
// verified, and says when nothing verified it.
func (s *Signer) String() string {
	switch {
	case s == nil:
		return "unsigned"
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

// Describe is the consent and `ext info` line: "signed by <key>" or
// "unsigned".
func (s *Signer) Describe() string {
	if s == nil {
		return "unsigned"
	}
	what := "commit"
	if s.Object == "tag" {
		what = "tag"
	}
	return fmt.Sprintf("%s signed by %s", what, s)
}

// SameKey reports whether s and o name the same key. Two OpenPGP signers
// are compared by fingerprint when both verified, else by issuer key id
// (an unverified key id is only what the signature claims).
func (s *Signer) SameKey(o *Signer) bool {
	if s == nil || o == nil {
		return s == o
	}
	if s.Kind != o.Kind {
		return false
	}
	if s.Kind == SignerSSH || (s.Fingerprint != "" && o.Fingerprint != "") {
		return s.Fingerprint == o.Fingerprint
	}
	return strings.EqualFold(s.keyID(), o.keyID())
}

func (s *Signer) keyID() string {
	if s.KeyID != "" {
		return s.KeyID
	}
	if n := len(s.Fingerprint); n >= 16 {
		return s.Fingerprint[n-16:]
	}
	return s.Fingerprint
}

// short names the key for a "signer changed" line: the fingerprint, or the
// OpenPGP key id when unverified.
func (s *Signer) short() string {
	if s.Fingerprint != "" {
		return s.Fingerprint
	}
	return "key id " + s.KeyID + " (not verified)"
}

// signerChange adds to c what changed between the signer pinned in prev
// (nil for a fresh install) and next: a different key, or no signature
// where the approval had one, widens (re-asks); a first signature on an
// update is a note. c.Signer describes next when it is signed.
func signerChange(c *Change, prev *LockEntry, next *Signer) {
	if next != nil {
		c.Signer = next.Describe()
	}
	if prev == nil {
		return
	}
	old := prev.Signer
	switch {
	case old == nil && next == nil:
	case old == nil:
		c.Notes = append(c.Notes, fmt.Sprintf("now signed by %s (the approved version was unsigned)", next))
	case next == nil:
		c.Widening = append(c.Widening, fmt.Sprintf("no longer signed (was %s)", old.short()))
	case !old.SameKey(next):
		c.Widening = append(c.Widening, fmt.Sprintf("signer changed: %s → %s", old.short(), next.short()))
	}
}

// check reports a malformed pinned signer.
func (s *Signer) check() error {
	switch {
	case s.Kind != SignerSSH && s.Kind != SignerOpenPGP:
		return fmt.Errorf("unknown kind %q", s.Kind)
	case s.Kind == SignerSSH && (!strings.HasPrefix(s.Fingerprint, "SHA256:") || !s.Verified):
		return fmt.Errorf("an ssh signer needs a verified SHA256: fingerprint, not %q", s.Fingerprint)
	case s.Fingerprint == "" && s.KeyID == "":
		return fmt.Errorf("names no key")
	}
	return nil
}
