//go:build !yep_unstable

package yep

// Unstable reports whether this build stages unstable wire structure: true
// when built with the yep_unstable tag. See "Unstable staging" in
// docs/protocol.md.
const Unstable = false

// StatusChangedUnstable holds the staged fields of status/changed; it is
// embedded in [StatusChangedParams] and empty without the yep_unstable tag.
type StatusChangedUnstable struct{}
