package record

import (
	"strings"
	"testing"

	"yolop.dev/core/tap"
)

// A recording keeps no secret: the answer to a ui/ask that asked for a
// secret is masked, and every line passes the session's scrubber. Other
// answers are kept as they were, so replay still works.
func TestRecorderKeepsNoSecret(t *testing.T) {
	r := &Recorder{Scrub: func(s string) string { return strings.ReplaceAll(s, "tok-123", "[redacted:ext.token]") }}
	lines := []tap.Line{
		{Dir: tap.ToHost, Data: []byte(`{"jsonrpc":"2.0","id":"a1","method":"ui/ask","params":{"prompt":"API key?","secret":true}}`)},
		{Dir: tap.ToServer, Data: []byte(`{"jsonrpc":"2.0","id":"a1","result":{"answer":"hunter2"}}`)},
		{Dir: tap.ToHost, Data: []byte(`{"jsonrpc":"2.0","id":"a2","method":"ui/ask","params":{"prompt":"Colour?","options":["red","blue"]}}`)},
		{Dir: tap.ToServer, Data: []byte(`{"jsonrpc":"2.0","id":"a2","result":{"answer":"blue"}}`)},
		{Dir: tap.ToHost, Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{"output":"token is tok-123"}}`)},
		// Another instance reusing the id is not taken for the secret ask.
		{Instance: 1, Name: "other", Dir: tap.ToServer, Data: []byte(`{"jsonrpc":"2.0","id":"a1","result":{"answer":"visible"}}`)},
	}
	for _, l := range lines {
		if l.Name == "" {
			l.Name = "ext"
		}
		r.Observe(l)
	}
	out := string(r.File("test").Format())
	for _, secret := range []string{"hunter2", "tok-123"} {
		if strings.Contains(out, secret) {
			t.Errorf("the recording holds %q:\n%s", secret, out)
		}
	}
	for _, want := range []string{SecretAnswer, `"answer":"blue"`, "[redacted:ext.token]", `"answer":"visible"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the recording lacks %q:\n%s", want, out)
		}
	}
}
