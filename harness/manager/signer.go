package manager

import "yolop.dev/packaging"

// signerText is the line a fresh install's consent summary ends with when
// the package is signed: the key that verified it, named.
func signerText(ch packaging.Change) string {
	if ch.Signer == "" {
		return ""
	}
	return "Signature: " + ch.Signer + " (pinned: an update signed by another key asks again)\n"
}
