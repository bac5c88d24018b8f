package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestMembers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		err  error
	}{
		{`{"a":1,"b":"x\"}","c":{"d":[1,{"e":"}"}]},"f":null}`, `a=1;b="x\"}";c={"d":[1,{"e":"}"}]};f=null;`, nil},
		{` { } `, ``, nil},
		{`{"a":1,"b":`, `a=1;`, ErrTruncated},
		{`{"a":1,"b":12`, `a=1;`, ErrTruncated},
		{`{"a":"unterminated`, ``, ErrTruncated},
		{`[1,2]`, ``, ErrNotObject},
		{`{1:2}`, ``, ErrNotObject},
		{`{"a" 1}`, ``, ErrNotObject},
	} {
		var got strings.Builder
		err := Members([]byte(tc.in), func(k, v []byte) bool {
			got.WriteString(string(k) + "=" + string(v) + ";")
			return true
		})
		if !errors.Is(err, tc.err) || got.String() != tc.want {
			t.Errorf("Members(%s) = %q, %v; want %q, %v", tc.in, got.String(), err, tc.want, tc.err)
		}
	}
	n := 0
	Members([]byte(`{"a":1,"b":2}`), func(k, v []byte) bool { n++; return false })
	if n != 1 {
		t.Fatalf("Members did not stop when fn returned false: %d calls", n)
	}
}

func TestElements(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		err  error
	}{
		{`[1,"a]",{"b":[2,"]"]},null,[]]`, `1;"a]";{"b":[2,"]"]};null;[];`, nil},
		{` [ ] `, ``, nil},
		{` [ 1 , 2 ] `, `1;2;`, nil},
		{`[1,2`, `1;`, ErrTruncated},
		{`[1,`, `1;`, ErrTruncated},
		{`[`, ``, ErrTruncated},
		{`["unterminated`, ``, ErrTruncated},
		{`{"a":1}`, ``, ErrNotArray},
		{`[1 2]`, `1;`, ErrNotArray},
	} {
		var got strings.Builder
		err := Elements([]byte(tc.in), func(v []byte) bool {
			got.WriteString(string(v) + ";")
			return true
		})
		if !errors.Is(err, tc.err) || got.String() != tc.want {
			t.Errorf("Elements(%s) = %q, %v; want %q, %v", tc.in, got.String(), err, tc.want, tc.err)
		}
	}
	n := 0
	Elements([]byte(`[1,2]`), func(v []byte) bool { n++; return false })
	if n != 1 {
		t.Fatalf("Elements did not stop when fn returned false: %d calls", n)
	}
}

// FuzzElements checks the array walker against encoding/json: on a valid
// array it yields every element, each valid JSON, and it never panics on
// any input.
func FuzzElements(f *testing.F) {
	for _, s := range []string{`[1,"]",{"a":[2]}]`, `[]`, `[true , null]`, `[1,`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		valid := json.Valid(b)
		var got []json.RawMessage
		err := Elements(b, func(v []byte) bool {
			if valid && !json.Valid(v) {
				t.Fatalf("element %q of %q is not valid JSON", v, b)
			}
			got = append(got, v)
			return true
		})
		var want []json.RawMessage
		if valid && bytes.HasPrefix(bytes.TrimSpace(b), []byte("[")) && json.Unmarshal(b, &want) == nil {
			if err != nil || len(got) != len(want) {
				t.Fatalf("valid array %q: %d elements, %v; want %d", b, len(got), err, len(want))
			}
			for k := range want {
				if string(got[k]) != string(want[k]) {
					t.Fatalf("valid array %q: element %d is %q, want %q", b, k, got[k], want[k])
				}
			}
		}
	})
}

// FuzzMembers checks the scanner against encoding/json: on a valid object
// every member value it yields is valid JSON, and it never panics on any
// prefix.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{"a":[1,"]"],"b":{"c":"\\"}}`, `{}`, `{"x":true}`, `{"a":`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		valid := json.Valid(b)
		err := Members(b, func(k, v []byte) bool {
			if valid && !json.Valid(v) {
				t.Fatalf("member value %q of %q is not valid JSON", v, b)
			}
			return true
		})
		var m map[string]json.RawMessage
		if valid && json.Unmarshal(b, &m) == nil && err != nil {
			t.Fatalf("valid object %q: %v", b, err)
		}
	})
}
