package cratesio

import (
	"errors"
	"testing"

	"github.com/Masterminds/semver/v3"
)

// cargoReqTable is taken from the cargo book (specifying-dependencies.md)
// and the semver crate's documented behaviour: requirement, version,
// whether cargo matches it.
var cargoReqTable = []struct {
	req, ver string
	want     bool
}{
	// Caret (a bare requirement is caret).
	{"1.2.3", "1.2.3", true}, {"1.2.3", "1.9.0", true}, {"1.2.3", "2.0.0", false}, {"1.2.3", "1.2.2", false},
	{"1.2", "1.2.0", true}, {"1.2", "1.9.9", true}, {"1.2", "2.0.0", false}, {"1.2", "1.1.9", false},
	{"1", "1.0.0", true}, {"1", "1.99.0", true}, {"1", "2.0.0", false}, {"1", "0.9.0", false},
	{"0.2.3", "0.2.3", true}, {"0.2.3", "0.2.9", true}, {"0.2.3", "0.3.0", false}, {"0.2.3", "0.2.2", false},
	{"0.2", "0.2.0", true}, {"0.2", "0.2.9", true}, {"0.2", "0.3.0", false},
	{"0.0.3", "0.0.3", true}, {"0.0.3", "0.0.4", false},
	{"0.0", "0.0.7", true}, {"0.0", "0.1.0", false},
	{"0", "0.9.9", true}, {"0", "1.0.0", false},
	{"^1.2.3", "1.5.0", true}, {"^0.1", "0.1.7", true}, {"^0.1", "0.2.0", false},
	// Tilde.
	{"~1.2.3", "1.2.3", true}, {"~1.2.3", "1.2.9", true}, {"~1.2.3", "1.3.0", false},
	{"~1.2", "1.2.0", true}, {"~1.2", "1.3.0", false},
	{"~1", "1.9.0", true}, {"~1", "2.0.0", false},
	// Wildcard.
	{"*", "0.0.1", true}, {"*", "9.9.9", true}, {"", "3.0.0", true},
	{"1.*", "1.0.0", true}, {"1.*", "1.9.9", true}, {"1.*", "2.0.0", false},
	{"1.2.*", "1.2.7", true}, {"1.2.*", "1.3.0", false},
	// Comparison and comma AND.
	{">= 1.2.0", "1.2.0", true}, {">=1.2.0", "1.1.0", false}, {"> 1", "2.0.0", true}, {">1", "1.9.0", false},
	{"< 2", "1.9.9", true}, {"<2", "2.0.0", false}, {"<=1.2", "1.2.9", true}, {"<=1.2", "1.3.0", false},
	{"=1.2.3", "1.2.3", true}, {"=1.2.3", "1.2.4", false}, {"=1.2", "1.2.8", true},
	{">= 1.2, < 1.5", "1.4.9", true}, {">= 1.2, < 1.5", "1.5.0", false},
	// Pre-releases: only with a comparator naming one on the same x.y.z.
	{"1.0.0-alpha", "1.0.0-alpha", true}, {"1.0.0-alpha", "1.0.0-beta", true},
	{"1.0.0-alpha", "1.0.0", true}, {"1.0.0-alpha", "1.2.0", true}, {"1.0.0-alpha", "1.0.1-alpha", false},
	{"1.0.0", "1.0.1-alpha", false}, {"*", "1.0.0-alpha", false}, {">=0.1.0", "0.2.0-rc.1", false},
	{"^0.1.0-rc.1", "0.1.0-rc.2", true}, {"^0.1.0-rc.2", "0.1.0-rc.1", false},
	{"=1.0.0-alpha", "1.0.0-alpha", true}, {"=1.0.0-alpha", "1.0.0-beta", false},
	{">1.0.0-alpha, <1.0.0", "1.0.0-beta", true},
}

func TestRequirementCargoTable(t *testing.T) {
	for _, tt := range cargoReqTable {
		r, err := ParseRequirement(tt.req)
		if err != nil {
			t.Fatalf("ParseRequirement(%q): %v", tt.req, err)
		}
		if got := r.Matches(semver.MustParse(tt.ver)); got != tt.want {
			t.Errorf("%q matches %s = %v, cargo says %v", tt.req, tt.ver, got, tt.want)
		}
	}
}

// TestMastermindsDiffers pins why requirements are not handed to
// Masterminds' Constraints: on these cases it disagrees with cargo.
func TestMastermindsDiffers(t *testing.T) {
	cases := []struct{ req, ver string }{
		{"^1.0.0-alpha", "1.0.1-alpha"}, // cargo: no (pre-release on another x.y.z)
		{"1.2.3", "1.2.4"},              // Masterminds: bare = exact; cargo: caret
	}
	for _, c := range cases {
		ours, _ := ParseRequirement(c.req)
		mc, err := semver.NewConstraint(c.req)
		if err != nil {
			t.Fatal(err)
		}
		v := semver.MustParse(c.ver)
		if ours.Matches(v) == mc.Check(v) {
			t.Errorf("%q vs %s: expected cargo and Masterminds to disagree (both %v); revisit the custom matcher", c.req, c.ver, mc.Check(v))
		}
	}
}

func TestParseRequirementErrors(t *testing.T) {
	for _, s := range []string{"abc", "1.2.3.4", ">=", "1.x.3", "01.2", "1.2-alpha", ",", "1.0.0-", "1.0.0-a..b", "*.1"} {
		if _, err := ParseRequirement(s); !errors.Is(err, ErrInvalidRequirement) {
			t.Errorf("ParseRequirement(%q) = %v, want ErrInvalidRequirement", s, err)
		}
	}
}

func FuzzRequirement(f *testing.F) {
	for _, tt := range cargoReqTable {
		f.Add(tt.req, tt.ver)
	}
	f.Fuzz(func(t *testing.T, req, ver string) {
		r, err := ParseRequirement(req)
		if err != nil {
			return
		}
		v, err := semver.StrictNewVersion(ver)
		if err != nil {
			return
		}
		a := r.Matches(v)
		r2, err := ParseRequirement(r.String())
		if err != nil {
			t.Fatalf("re-parsing %q: %v", r.String(), err)
		}
		if r2.Matches(v) != a {
			t.Fatalf("%q is not stable under re-parsing", req)
		}
	})
}
