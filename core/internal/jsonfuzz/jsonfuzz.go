// Package jsonfuzz is the fuzz harness of core's hand-written JSON
// decoders, each checked against encoding/json: they run only on bytes a
// connection has already validated, so the fuzzer feeds them valid JSON
// only.
package jsonfuzz

import (
	"encoding/json"
	"testing"
)

// Valid seeds f and runs check on every valid JSON input the fuzzer makes
// (and on each seed, as go test does without -fuzz).
func Valid(f *testing.F, seeds []string, check func(t *testing.T, b []byte)) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return // the connection drops invalid messages before decoding
		}
		check(t, b)
	})
}
