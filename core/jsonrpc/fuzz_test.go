package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
)

var envelopeSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tool/call","params":{"name":"x"}}`,
	`{"jsonrpc":"2.0","id":"a","result":{"output":"ok"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"message":"bare"}}`,
	`{"method":"a","METHOD":"b"}`,
	`{"id":1,"id":2,"result":1}`,
	`{"jsonrpc":"2.0","id":1,"result":"` + "\\\"}" + `"}`,
	`[{"jsonrpc":"2.0"}]`,
	`{"a":[{"b":"}"}],"id":3,"result":null}`,
	`{"jsonrpc":"2.0","id":1.5,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"paramſ":{},"method":"x"}`,
	`{"jsonrpc":"2.0","id": 1 ,"result": {"a" : 1} }`,
}

// FuzzParseEnvelope checks the envelope parser against encoding/json: it
// never panics, every member it returns is itself valid JSON, and a
// message it accepts has the members encoding/json decodes from it (so
// refusing duplicates and case variants is all it adds).
func FuzzParseEnvelope(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		env, err := parseEnvelope(b) // never panics, whatever the input
		if err != nil || !bytesValid(b) {
			return
		}
		for _, m := range [][]byte{env.JSONRPC, env.ID, env.Method, env.Params, env.Result, env.Error} {
			if m != nil && !bytesValid(m) {
				t.Fatalf("member %q of %q is not valid JSON", m, b)
			}
		}
		var want envelope
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("parseEnvelope accepted %q, which encoding/json refuses: %v", b, err)
		}
		got := [][]byte{env.JSONRPC, env.ID, env.Method, env.Params, env.Result, env.Error}
		for i, w := range [][]byte{want.JSONRPC, want.ID, want.Method, want.Params, want.Result, want.Error} {
			if !bytes.Equal(got[i], w) || (got[i] == nil) != (w == nil) {
				t.Fatalf("member %s of %q = %q, encoding/json decodes %q", envelopeKeys[i], b, got[i], w)
			}
		}
	})
}

// FuzzNDJSONReader checks that the line reader never returns a message over
// its limit, never panics, and keeps reading after an oversized line.
func FuzzNDJSONReader(f *testing.F) {
	f.Add([]byte("{}\n\n{\"a\":1}\r\n"), 8)
	f.Add(bytes.Repeat([]byte("x"), 100), 10)
	f.Add([]byte("aaaaaaaaaaaaaaaaaaaa\nb\n"), 4)
	f.Fuzz(func(t *testing.T, in []byte, limit int) {
		if limit <= 0 || limit > 1<<20 {
			return
		}
		r := NDJSON.NewReader(bytes.NewReader(in), limit)
		for i := 0; i < len(in)+2; i++ {
			msg, err := r.Read()
			var tl *TooLargeError
			if errors.As(err, &tl) {
				continue
			}
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if len(msg) > limit {
				t.Fatalf("message of %d bytes over limit %d", len(msg), limit)
			}
		}
	})
}

func bytesValid(b []byte) bool { return json.Valid(b) }
