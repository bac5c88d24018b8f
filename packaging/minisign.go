package packaging

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"
)

// MinisignKeyID is the key id of a minisign public key (the base64 line of
// a .pub file) as minisign prints it, 16 uppercase hex digits; the key
// itself when it does not decode.
func MinisignKeyID(key string) string {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(key))
	if err != nil || len(b) != 42 {
		return key
	}
	return fmt.Sprintf("%016X", binary.LittleEndian.Uint64(b[2:10]))
}

// describeMinisign is the consent line for a crate whose prebuilt
// artifacts must be signed by key.
func describeMinisign(key string) string {
	return "prebuilt artifacts signed by minisign key " + MinisignKeyID(key)
}

// minisignChange adds to c what changed between the minisign key pinned in
// prev (nil for a fresh install) and next ("" when the crate declares
// none): another key, or none where the approval pinned one, widens
// (re-asks) and names both key ids; a first key on an update is a note.
func minisignChange(c *Change, prev *LockEntry, next string) {
	if next != "" {
		c.Signer = describeMinisign(next)
	}
	if prev == nil {
		return
	}
	old := prev.MinisignKey
	switch {
	case old == next:
	case old == "":
		c.Notes = append(c.Notes, fmt.Sprintf("prebuilt artifacts now signed by minisign key %s (the approved version declared none)", MinisignKeyID(next)))
	case next == "":
		c.Widening = append(c.Widening, fmt.Sprintf("minisign key dropped: prebuilt artifacts are no longer signed (was key %s)", MinisignKeyID(old)))
	default:
		c.Widening = append(c.Widening, fmt.Sprintf("minisign key changed: %s → %s", MinisignKeyID(old), MinisignKeyID(next)))
	}
}
