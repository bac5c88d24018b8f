package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// validCases are inputs whose answer from encoding/json.Valid each branch
// of Valid must match; the test asserts both agree and names the expected
// answer so that a change to either shows.
var validCases = []struct {
	in   string
	want bool
}{
	{`{}`, true}, {` [ ] `, true}, {`{"a":1}`, true}, {`{"a":[1,2,{"b":null}]}`, true},
	{`"plain string well over eight bytes long"`, true}, {`"\"\\\/\b\f\n\r\t\u00e9\uABCD"`, true},
	{`"long run then escape: aaaaaaaaaaaaaaaa\n and a quote \" here"`, true},
	{"\"bytes that are not UTF-8: \xff\xfe pass\"", true}, {`"é ünïcödé 😀"`, true},
	{`0`, true}, {`-0`, true}, {`-12.5e+3`, true}, {`1E9`, true}, {`0.0`, true}, {`true`, true}, {`false`, true}, {`null`, true},
	{"\t\r\n 1 \n", true},
	{``, false}, {` `, false}, {`{`, false}, {`}`, false}, {`[1,]`, false}, {`{"a":1,}`, false}, {`{"a"}`, false},
	{`{"a" 1}`, false}, {`{1:2}`, false}, {`[1 2]`, false}, {`1 2`, false}, {`{} {}`, false}, {`[}`, false}, {`{]`, false},
	{`01`, false}, {`-`, false}, {`1.`, false}, {`.5`, false}, {`1e`, false}, {`1e+`, false}, {`+1`, false}, {`0x10`, false},
	{`tru`, false}, {`truex`, false}, {`nul`, false}, {`True`, false}, {`NaN`, false},
	{`"unterminated`, false}, {`"unterminated and long enough for a word`, false}, {`"bad \x escape"`, false},
	{`"\u12G4"`, false}, {`"\u12"`, false}, {`"trailing backslash \`, false},
	{"\"a control byte \x01 inside a long string\"", false}, {"\"tab\tinside\"", false}, {"\"\x7f is fine\"", true},
	{"\"\x1f\"", false}, {"[\"ok\"]\x00", false}, {`{"a":1}}`, false}, {`[[]]]`, false},
}

func TestValidMatchesEncodingJSON(t *testing.T) {
	for _, c := range validCases {
		if got := json.Valid([]byte(c.in)); got != c.want {
			t.Fatalf("encoding/json.Valid(%q) = %v; the case's expectation is wrong", c.in, got)
		}
		if got := Valid([]byte(c.in)); got != c.want {
			t.Errorf("Valid(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestValidDepthLimit(t *testing.T) {
	for _, open := range []string{"[", `{"k":`} {
		closer := "]"
		if open != "[" {
			closer = "}"
		}
		for _, depth := range []int{maxDepth, maxDepth + 1} {
			in := []byte(strings.Repeat(open, depth) + "1" + strings.Repeat(closer, depth))
			if got, want := Valid(in), json.Valid(in); got != want || got != (depth <= maxDepth) {
				t.Errorf("%q nested %d deep: Valid = %v, encoding/json = %v", open, depth, got, want)
			}
		}
	}
}

// checkCompact checks ValidCompact's second answer against json.Compact.
func checkCompact(t *testing.T, b []byte) {
	t.Helper()
	valid, compact := ValidCompact(b)
	if valid != json.Valid(b) {
		t.Fatalf("ValidCompact(%q) valid = %v, encoding/json says %v", b, valid, !valid)
	}
	if !valid {
		if compact {
			t.Fatalf("ValidCompact(%q) calls invalid input compact", b)
		}
		return
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatal(err)
	}
	if want := bytes.Equal(out.Bytes(), b); compact != want {
		t.Fatalf("ValidCompact(%q) compact = %v, json.Compact gives %q", b, compact, out.Bytes())
	}
}

func TestValidCompact(t *testing.T) {
	for _, c := range validCases {
		checkCompact(t, []byte(c.in))
	}
	for in, want := range map[string]bool{`{"a":[1,"x y"]}`: true, `{"a": 1}`: false, "[1,\n2]": false, `"  "`: true, ` 1`: false} {
		if _, got := ValidCompact([]byte(in)); got != want {
			t.Errorf("ValidCompact(%q) compact = %v, want %v", in, got, want)
		}
	}
}

// FuzzValid checks Valid against encoding/json.Valid on every input.
func FuzzValid(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json.Valid = %v", b, got, want)
		}
		checkCompact(t, b)
	})
}

// BenchmarkValid compares Valid with encoding/json.Valid on a tool/call
// line carrying 1 KiB of text, alternating the two in each iteration.
func BenchmarkValid(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":42,"method":"tool/call","params":{"name":"echo","session_id":"s-1","args":{"text":"` +
		strings.Repeat("lorem ipsum ", 85) + `"}}}`)
	if !Valid(line) || !json.Valid(line) || !bytes.HasSuffix(line, []byte("}}}")) {
		b.Fatal("the benchmark's line is not valid JSON")
	}
	for _, side := range []struct {
		name  string
		valid func([]byte) bool
	}{{"jsonscan", Valid}, {"encoding-json", json.Valid}} {
		b.Run(side.name, func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				if !side.valid(line) {
					b.Fatal("invalid")
				}
			}
		})
	}
}
