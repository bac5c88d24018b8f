package json

import (
	stdjson "encoding/json"
	"reflect"
	"strings"
	"testing"
)

type inner struct {
	Name string `json:"name"`
}

type Embedded struct {
	Kind string `json:"kind"`
}

type outer struct {
	Embedded
	ID      string           `json:"id"`
	Inner   inner            `json:"inner"`
	List    []inner          `json:"list"`
	ByKey   map[string]inner `json:"by_key"`
	Ptr     *inner           `json:"ptr,omitempty"`
	Untaged string
	Skipped string     `json:"-"`
	Raw     RawMessage `json:"raw,omitempty"`
}

func TestUnmarshalCaseSensitive(t *testing.T) {
	tests := []struct {
		name, in string
		bad      string // the key named in the error, or "" for success
		want     outer
	}{
		{name: "exact keys", in: `{"id":"1","inner":{"name":"a"},"kind":"k","Untaged":"u"}`,
			want: outer{ID: "1", Inner: inner{Name: "a"}, Embedded: Embedded{Kind: "k"}, Untaged: "u"}},
		{name: "top level", in: `{"ID":"1"}`, bad: `"ID"`},
		{name: "nested struct", in: `{"inner":{"Name":"a"}}`, bad: `"Name"`},
		{name: "pointer", in: `{"ptr":{"NAME":"a"}}`, bad: `"NAME"`},
		{name: "slice element", in: `{"list":[{"name":"a"},{"nAme":"b"}]}`, bad: `"nAme"`},
		{name: "map value", in: `{"by_key":{"x":{"Name":"a"}}}`, bad: `"Name"`},
		{name: "embedded field", in: `{"Kind":"k"}`, bad: `"Kind"`},
		{name: "untagged field", in: `{"untaged":"u"}`, bad: `"untaged"`},
		{name: "duplicate in other case", in: `{"id":"1","Id":"2"}`, bad: `"Id"`},
		{name: "map keys untouched", in: `{"by_key":{"Name":{"name":"a"},"name":{"name":"b"}}}`,
			want: outer{ByKey: map[string]inner{"Name": {Name: "a"}, "name": {Name: "b"}}}},
		{name: "unknown keys ignored", in: `{"id":"1","other":{"Name":1},"Skipped":"x"}`, want: outer{ID: "1"}},
		{name: "raw message untouched", in: `{"raw":{"ID":1}}`, want: outer{Raw: RawMessage(`{"ID":1}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got outer
			err := Unmarshal([]byte(tt.in), &got)
			if tt.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tt.bad) {
					t.Fatalf("Unmarshal(%s) = %v, want an error naming key %s", tt.in, err, tt.bad)
				}
				if !reflect.DeepEqual(got, outer{}) {
					t.Errorf("Unmarshal(%s) failed but changed v to %+v", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Unmarshal(%s): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Unmarshal(%s) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

// TestUnmarshalErrorsStayEncodingJSONs checks that malformed input gets
// encoding/json's own error.
func TestUnmarshalErrorsStayEncodingJSONs(t *testing.T) {
	for _, in := range []string{`{"id":`, `{"inner":{"name":1}}`, `{"list":{}}`, `[1]`, `{"inner":{"name":"a"} "x"}`} {
		var got, want outer
		err, wantErr := Unmarshal([]byte(in), &got), stdjson.Unmarshal([]byte(in), &want)
		if err == nil || wantErr == nil || err.Error() != wantErr.Error() {
			t.Errorf("Unmarshal(%s) = %v, encoding/json says %v", in, err, wantErr)
		}
	}
}

func TestMarshalNoHTMLEscape(t *testing.T) {
	b, err := Marshal(map[string]string{"a": "<&>"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"a":"<&>"}`; got != want {
		t.Errorf("Marshal = %s, want %s", got, want)
	}
}

// FuzzUnmarshal checks Unmarshal against encoding/json: it decodes what
// encoding/json decodes, the same way, except that it refuses a key
// matching a field only when case is ignored, and then names that key.
func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{
		`{"id":"1","inner":{"name":"a"},"kind":"k","Untaged":"u"}`,
		`{"ID":"1"}`, `{"list":[{"name":"a"},{"nAme":"b"}]}`,
		`{"by_key":{"Name":{"name":"a"}}}`, `{"raw":{"ID":1}}`, `{"ptr":null}`,
		`{"id":"\u0049"}`, `{"\u0069d":"x"}`, `{"ſ":1}`, `{"id":1}`, `[]`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var got, want outer
		err, wantErr := Unmarshal(in, &got), stdjson.Unmarshal(in, &want)
		switch {
		case err == nil && wantErr != nil:
			t.Fatalf("Unmarshal(%q) succeeded, encoding/json says %v", in, wantErr)
		case err == nil && !reflect.DeepEqual(got, want):
			t.Fatalf("Unmarshal(%q) = %+v, encoding/json gives %+v", in, got, want)
		case err != nil && wantErr == nil && !strings.Contains(err.Error(), "keys are case-sensitive"):
			t.Fatalf("Unmarshal(%q) = %v, encoding/json accepts it", in, err)
		}
	})
}
