package config

import (
	"strings"
	"testing"

	"yolop.dev/core"
	"yolop.dev/harness/secrets"
)

// FuzzExpandServer feeds manifest-controlled strings (a package's server
// args and env are untrusted) through ${VAR} expansion: it never panics,
// text without "${" is unchanged, and an unset variable with no default is
// left exactly as written.
func FuzzExpandServer(f *testing.F) {
	for _, s := range []string{"", "plain", "${HOME}", "${UNSET}", "${UNSET:-d}", "${", "${}", "$${HOME}", "${A:-${B}}", "${HOME}${HOME}", "${9BAD}", "x${HOME:-}y", "${é}"} {
		f.Add(s)
	}
	lookup := func(k string) (string, bool) {
		if k == "HOME" {
			return "/home/u", true
		}
		return "", false
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec := core.ServerSpec{Args: []string{s}, Env: map[string]string{"K": s}}
		ExpandServer("e", &spec, lookup)
		if !strings.Contains(s, "${") && (spec.Args[0] != s || spec.Env["K"] != s) {
			t.Fatalf("%q changed to %q / %q", s, spec.Args[0], spec.Env["K"])
		}
		if spec.Args[0] != spec.Env["K"] {
			t.Fatalf("args and env expand differently: %q vs %q", spec.Args[0], spec.Env["K"])
		}
		only := core.ServerSpec{Args: []string{"${UNSET_ONLY}"}}
		if ExpandServer("e", &only, lookup); only.Args[0] != "${UNSET_ONLY}" {
			t.Fatalf("unset placeholder rewritten: %q", only.Args[0])
		}
	})
}

// FuzzScrub checks that text holding a stored secret never comes out with
// it, whatever surrounds it.
func FuzzScrub(f *testing.F) {
	for _, tc := range [][2]string{
		{"tok-123456", "before tok-123456 after"},
		{`a"b\c`, `{"v":"a\"b\\c"}`},
		{"<&>", `"\u003c\u0026\u003e"`},
		{"xx", "xxxxx"},
		{"secret", ""},
	} {
		f.Add(tc[0], tc[1])
	}
	f.Fuzz(func(t *testing.T, secret, text string) {
		if secret == "" || strings.Contains("[redacted:e.f]", secret) {
			return
		}
		s := NewScrubber()
		s.Add("e", "f", secrets.New(secret))
		out := s.Scrub(text + secret + text)
		// A label next to text may spell the secret across the seam
		// ("]x" in "[redacted:e.f]x"); only the text between labels counts.
		for _, piece := range strings.Split(out, Label("e", "f")) {
			if strings.Contains(piece, secret) {
				t.Fatalf("Scrub(%q) = %q still holds the secret", text+secret+text, out)
			}
		}
	})
}
