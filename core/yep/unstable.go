//go:build yep_unstable

package yep

// Unstable reports whether this build stages unstable wire structure: true
// when built with the yep_unstable tag. Staged structure is not part of
// the protocol: the published schema (schema/yep/v1/schema.json) never
// describes it, a peer built without the tag ignores it as an unknown
// field, and it may change or vanish in any release. See "Unstable
// staging" in docs/protocol.md.
const Unstable = true

// StatusChangedUnstable holds the staged fields of status/changed; it is
// embedded in [StatusChangedParams].
type StatusChangedUnstable struct {
	// Degraded says the server runs with reduced function (e.g. the
	// language server it drives is not installed) and the status text says
	// why, so the host can show the extension as degraded without parsing
	// the text. Missing or false says nothing about health.
	Degraded bool `json:"degraded,omitempty"`
}
