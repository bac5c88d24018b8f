package git

import (
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/go-git/go-git/v5/plumbing"
)

// checkDetached verifies the armored detached signature sig over payload
// with the armored key ring, as go-git's Commit.Verify does.
func checkDetached(ring string, payload *plumbing.MemoryObject, sig string) (*openpgp.Entity, error) {
	keyring, err := openpgp.ReadArmoredKeyRing(strings.NewReader(ring))
	if err != nil {
		return nil, err
	}
	r, err := payload.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return openpgp.CheckArmoredDetachedSignature(keyring, r, strings.NewReader(sig), nil)
}
