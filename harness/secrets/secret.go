// Package secrets is yolop's credential store: the values of extension
// config fields marked `secret: true`.
//
// A [Store] holds them by extension and field. [File] is the store used
// today: connections.toml in the config directory, one table per extension
// keyed "ext:<name>", mode 0600. It is created so (a temporary file opened
// with O_CREATE|O_EXCL and mode 0600, fsynced, then renamed over the old
// one), so no other user can ever read it, and it is re-checked on every
// read: a symlink, a file owned by someone else, or one that the group or
// others can read is refused with a message saying how to fix it. Writers
// serialise on a file lock. A keychain can later replace [File] behind the
// same interface without touching callers.
//
// Values travel as [Secret], which prints as "[redacted]" through every
// formatting path (fmt verbs, JSON, text marshalling, hclog fields), so a
// value that slips into a log line or an error message shows nothing. Only
// [Secret.Reveal] returns the value; its callers are the server environment
// builder and the scrubber.
package secrets

import (
	"encoding/json"
	"fmt"
	"log/slog"
)

// Redacted is what a [Secret] prints as.
const Redacted = "[redacted]"

// A Secret is a credential value that never prints. The zero value is the
// empty secret.
type Secret struct{ v string }

// New wraps a value.
func New(v string) Secret { return Secret{v: v} }

// Reveal returns the value. Call it only to hand the value to the place it
// is meant for (a server's environment, the scrubber's replacement table).
func (s Secret) Reveal() string { return s.v }

// IsZero reports whether the secret is empty.
func (s Secret) IsZero() bool { return s.v == "" }

// Equal reports whether two secrets hold the same value.
func (s Secret) Equal(o Secret) bool { return s.v == o.v }

// String implements fmt.Stringer: "[redacted]".
func (Secret) String() string { return Redacted }

// GoString implements fmt.GoStringer (%#v): "[redacted]".
func (Secret) GoString() string { return Redacted }

// Format implements fmt.Formatter, so every verb, flag and width — %v,
// %+v, %#v, %s, %q, %x, %d — prints "[redacted]" (quoted for %q), never the
// value.
func (Secret) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		fmt.Fprintf(f, "%q", Redacted)
		return
	}
	_, _ = f.Write([]byte(Redacted))
}

// MarshalJSON implements json.Marshaler: the JSON string "[redacted]".
func (Secret) MarshalJSON() ([]byte, error) { return json.Marshal(Redacted) }

// MarshalText implements encoding.TextMarshaler: "[redacted]". Encoders
// that prefer text (TOML, YAML, hclog's JSON format for errors) print that.
func (Secret) MarshalText() ([]byte, error) { return []byte(Redacted), nil }

// LogValue implements slog.LogValuer: "[redacted]".
func (Secret) LogValue() slog.Value { return slog.StringValue(Redacted) }
