package cratesio

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var sumA = strings.Repeat("a", 64)

func line(name, vers string, extra string) string {
	return `{"name":"` + name + `","vers":"` + vers + `","deps":[],"cksum":"` + sumA + `","features":{},"yanked":false` + extra + `}`
}

func TestParseIndexFile(t *testing.T) {
	body := strings.Join([]string{
		line("foo", "0.1.0", ""),
		`{not json`,
		line("foo", "0.2.0", `,"v":3`),
		line("foo", "0.1.1", `,"features2":{"x":["dep:y"]},"features":{"x":["a"]},"v":1,"unknown":{"k":1}`),
		`{"name":"foo","vers":"0.1.2","deps":[{"name":"d","req":"^1","kind":null}],"cksum":"` + strings.ToUpper(sumA) + `","features":{}}`,
		line("foo", "0.1.3", `,"deps":[{"name":"d","req":"^1","kind":null,"target":"cfg(windows)"}],"rust_version":"1.70","pubtime":"2026-01-02T03:04:05Z"`),
		line("foo", "not-semver", ""),
		"",
	}, "\n")
	f, err := ParseIndexFile("foo", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var vers []string
	for _, e := range f.Entries {
		vers = append(vers, e.Vers)
	}
	if diff := cmp.Diff([]string{"0.1.0", "0.1.1", "0.1.3"}, vers); diff != "" {
		t.Errorf("usable versions (-want +got):\n%s", diff)
	}
	if len(f.Skipped) != 4 { // bad JSON, v3, uppercase cksum, bad vers
		t.Errorf("skipped %d lines, want 4: %q", len(f.Skipped), f.Skipped)
	}
	if got := f.Entries[1].Features["x"]; !cmp.Equal(got, []string{"a", "dep:y"}) {
		t.Errorf("features2 not merged: %v", got)
	}
	if k := f.Entries[2].Deps[0].Kind; k != "normal" {
		t.Errorf("null kind read as %q, want normal", k)
	}
	// v3 must not count as the newest.
	r, _ := ParseRequirement("*")
	e, err := f.Select(r, "")
	if err != nil || e.Vers != "0.1.3" {
		t.Errorf("Select(*) = %v, %v; want 0.1.3", e, err)
	}
}

func TestParseIndexFileCorrupt(t *testing.T) {
	for name, body := range map[string]string{
		"duplicate vers": line("foo", "1.0.0", "") + "\n" + line("foo", "1.0.0", `,"yanked":true`),
		"other crate":    line("foo", "1.0.0", "") + "\n" + line("bar", "1.0.0", ""),
	} {
		if _, err := ParseIndexFile("foo", []byte(body)); !errors.Is(err, ErrIndexCorrupt) {
			t.Errorf("%s: err = %v, want ErrIndexCorrupt", name, err)
		}
	}
	f, err := ParseIndexFile("foo", nil)
	if err != nil || len(f.Entries) != 0 {
		t.Errorf("empty body: %v, %v; want no versions", f, err)
	}
	// Case: a line for "Foo" is a candidate, not a match and not corruption.
	f, err = ParseIndexFile("foo", []byte(line("Foo", "1.0.0", "")))
	if err != nil || len(f.Entries) != 0 || !cmp.Equal(f.CaseVariants, []string{"Foo"}) {
		t.Errorf("case variant: %+v, %v", f, err)
	}
}

func TestSelect(t *testing.T) {
	body := strings.Join([]string{
		line("foo", "1.0.0", ""),
		line("foo", "1.2.0", ""),
		line("foo", "1.3.0", `,"yanked":true`),
		line("foo", "2.0.0-rc.1", ""),
		line("foo", "0.9.0", ""),
	}, "\n")
	f, err := ParseIndexFile("foo", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		req, locked, want string
	}{
		{"", "", "1.2.0"},
		{"^1", "", "1.2.0"},
		{"1.3", "", ""}, // only a yanked version matches
		{"1.3", "1.3.0", "1.3.0"},
		{"^2.0.0-rc.1", "", "2.0.0-rc.1"},
		{">=1.0.0", "", "1.2.0"}, // the pre-release is not named
		{"=1.0.0", "", "1.0.0"},
		{"^0.9", "", "0.9.0"},
		{"^3", "", ""},
		{"^1", "1.0.0", "1.0.0"},
		{"^2", "1.0.0", ""}, // lock no longer satisfies the requirement
		{"", "1.9.9", ""},   // lock names a version the index lacks
	}
	for _, tt := range tests {
		r, err := ParseRequirement(tt.req)
		if err != nil {
			t.Fatal(err)
		}
		e, err := f.Select(r, tt.locked)
		got := ""
		if err == nil {
			got = e.Vers
		} else if !errors.Is(err, ErrNoMatch) {
			t.Errorf("Select(%q, %q) error %v is not ErrNoMatch", tt.req, tt.locked, err)
		}
		if got != tt.want {
			t.Errorf("Select(%q, %q) = %q, want %q", tt.req, tt.locked, got, tt.want)
		}
	}
}

func FuzzParseIndexLine(f *testing.F) {
	for _, s := range []string{
		line("foo", "0.1.0", ""),
		line("foo", "1.0.0-alpha.1+b", `,"v":2,"features2":{"a":["b"]}`),
		`{"name":"x","vers":"1.0.0","deps":[{"kind":null,"package":"y","registry":null}],"cksum":"` + sumA + `"}`,
		`{}`, `[]`, `null`, `{"vers":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := ParseIndexLine(b)
		if err != nil {
			return
		}
		if e.Version() == nil || !isLowerHex64(e.Cksum) || e.V == 0 {
			t.Fatalf("accepted an invalid entry: %+v", e)
		}
		if _, err := ParseIndexFile(e.Name, b); err != nil {
			t.Fatalf("a valid line makes its own file corrupt: %v", err)
		}
	})
}
