package yep

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestVersionNegotiation(t *testing.T) {
	for _, tc := range []struct {
		theirs  string
		want    string
		wantErr bool
	}{
		{"1.0", "1.0", false},
		{"1.7", "1.0", false}, // minors additive: we speak the lower one
		{"1", "1.0", false},
		{"2.0", "", true},
		{"0.9", "", true},
		{"one", "", true},
		{"1.x", "", true},
		{"", "", true},
	} {
		got, err := Negotiate(Version{1, 0}, tc.theirs)
		if (err != nil) != tc.wantErr {
			t.Errorf("Negotiate(%q) err = %v, wantErr %v", tc.theirs, err, tc.wantErr)
			continue
		}
		if err == nil && got.String() != tc.want {
			t.Errorf("Negotiate(%q) = %s, want %s", tc.theirs, got, tc.want)
		}
	}
	_, err := Negotiate(Version{1, 0}, "2.3")
	var ve *VersionError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "majors must match") {
		t.Fatalf("major mismatch error = %v", err)
	}
	if got, _ := Negotiate(Version{1, 4}, "1.2"); got != (Version{1, 2}) {
		t.Fatalf("Negotiate(1.4 vs 1.2) = %v, want 1.2", got)
	}
}

// TestVersionConstants: ProtocolVersion, its parts and Current agree.
func TestVersionConstants(t *testing.T) {
	v, err := ParseVersion(ProtocolVersion)
	if err != nil || v != Current || v != (Version{ProtocolMajor, ProtocolMinor}) || v.String() != ProtocolVersion {
		t.Errorf("ProtocolVersion %q parses as %v (%v); Current is %v, ProtocolMajor.ProtocolMinor %d.%d", ProtocolVersion, v, err, Current, ProtocolMajor, ProtocolMinor)
	}
}

func TestBareErrorParses(t *testing.T) {
	var e Error
	if err := json.Unmarshal([]byte(`{"message":"boom"}`), &e); err != nil {
		t.Fatal(err)
	}
	if e.Code != CodeUnclassified || e.Message != "boom" || e.Retryable || e.Data != nil {
		t.Fatalf("bare error = %+v", e)
	}
	if e.Error() != "boom" {
		t.Fatalf("Error() = %q", e.Error())
	}
	if !errors.Is(&Error{Code: CodeCancelled, Message: "x"}, ErrCancelled) {
		t.Fatal("errors match by code")
	}
}

// Every payload type ignores unknown fields and defaults missing ones.
func TestUnknownFieldsIgnoredMissingDefaulted(t *testing.T) {
	for _, m := range Methods {
		for _, typ := range []reflect.Type{m.Params, m.Result} {
			if typ == nil {
				continue
			}
			v := reflect.New(typ).Interface()
			if err := json.Unmarshal([]byte(`{"future_field":{"nested":[1,2]},"another":true}`), v); err != nil {
				t.Errorf("%s %s: unknown fields rejected: %v", m.Name, typ, err)
			}
			if !reflect.DeepEqual(reflect.ValueOf(v).Elem().Interface(), reflect.Zero(typ).Interface()) {
				t.Errorf("%s %s: missing fields not defaulted to zero: %+v", m.Name, typ, v)
			}
		}
	}
}

func TestInitializeCarriesUnknownCapabilitiesVerbatim(t *testing.T) {
	in := `{"protocol_version":"1.3","name":"x","capabilities":["tools","teleport"],` +
		`"capability_params":{"tools":[{"name":"a","future":1}],"teleport":{"range":"far","k":[1,{"z":null}]}},"extra":1}`
	var r InitializeResult
	if err := json.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	if !r.Capabilities.Has("teleport") || !r.Capabilities.Has(CapTools) {
		t.Fatalf("capabilities = %v", r.Capabilities)
	}
	if string(r.CapabilityParams["teleport"]) != `{"range":"far","k":[1,{"z":null}]}` {
		t.Fatalf("unknown params not verbatim: %s", r.CapabilityParams["teleport"])
	}
	var tools []ToolDecl
	if ok, err := r.CapabilityParams.Decode(CapTools, &tools); !ok || err != nil || len(tools) != 1 || tools[0].Name != "a" {
		t.Fatalf("tools = %v, %v, %v", tools, ok, err)
	}
	out, _ := json.Marshal(r)
	if !strings.Contains(string(out), `"teleport":{"range":"far","k":[1,{"z":null}]}`) {
		t.Fatalf("re-encoding lost the unknown params: %s", out)
	}
	if ok, _ := r.CapabilityParams.Decode(CapHooks, &tools); ok {
		t.Fatal("absent params reported present")
	}
}

// Encoding omits what is unset, so an old peer sees no fields it would not
// know, and the wire stays small.
func TestEncodingOmitsUnset(t *testing.T) {
	b, _ := json.Marshal(ToolResult{Output: "x"})
	if string(b) != `{"output":"x"}` {
		t.Fatalf("ToolResult = %s", b)
	}
	b, _ = json.Marshal(HookFireResult{Decision: DecisionAllow})
	if string(b) != `{"decision":"allow"}` {
		t.Fatalf("HookFireResult = %s", b)
	}
}

func TestIDs(t *testing.T) {
	var id ID
	for _, ok := range []string{`1`, `-5`, `"abc"`, `123456789012345678901234`} {
		if err := json.Unmarshal([]byte(ok), &id); err != nil || string(id) != ok {
			t.Errorf("ID %s: %v (%s)", ok, err, id)
		}
	}
	for _, bad := range []string{`1.5`, `true`, `{}`, `[1]`, `1e3`} {
		if err := json.Unmarshal([]byte(bad), &id); err == nil {
			t.Errorf("ID %s accepted", bad)
		}
	}
	if n, ok := IntID(42).Int64(); !ok || n != 42 {
		t.Fatal("IntID round trip")
	}
	b, _ := json.Marshal(CancelParams{ID: ID(`"x"`)})
	if string(b) != `{"id":"x"}` {
		t.Fatalf("CancelParams = %s", b)
	}
}

func TestMethodTable(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range Methods {
		if seen[m.Name] {
			t.Errorf("method %s listed twice", m.Name)
		}
		seen[m.Name] = true
		if (m.Kind == Notification) != (m.Result == nil) {
			t.Errorf("%s: kind %s but result %v", m.Name, m.Kind, m.Result)
		}
	}
	if len(seen) != 16 {
		t.Fatalf("%d methods, want the 16 of the spec", len(seen))
	}
}
