package cratesio

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateName(t *testing.T) {
	good := []string{"a", "ab", "serde", "yolop-extension-echo", "foo_bar", "A1", strings.Repeat("a", 64)}
	for _, n := range good {
		if err := ValidateName(n); err != nil {
			t.Errorf("ValidateName(%q) = %v, want nil", n, err)
		}
	}
	bad := []string{"", "../x", "a/b", `a\b`, "a\x00b", "café", strings.Repeat("a", 65), "1abc", "-a", "_a", "a.b", "a b", "nul", "CON", "com1"}
	for _, n := range bad {
		if err := ValidateName(n); !errors.Is(err, ErrInvalidName) {
			t.Errorf("ValidateName(%q) = %v, want ErrInvalidName", n, err)
		}
	}
}

func TestIndexPath(t *testing.T) {
	for name, want := range map[string]string{
		"a": "1/a", "AB": "2/ab", "abc": "3/a/abc", "Abc": "3/a/abc", "cargo": "ca/rg/cargo",
		"MyCrate": "my/cr/mycrate", "yolop-extension-echo": "yo/lo/yolop-extension-echo",
	} {
		if got := IndexPath(name); got != want {
			t.Errorf("IndexPath(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestDLPrefix(t *testing.T) {
	// Cargo's unit-test vectors.
	for name, want := range map[string]string{"a": "1", "ab": "2", "Abc": "3/A", "AbCd": "Ab/Cd", "aBcDe": "aB/cD"} {
		if got := dlPrefix(name); got != want {
			t.Errorf("dlPrefix(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestExpandDL(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	tests := []struct{ tmpl, name, want string }{
		{"https://static.crates.io/crates", "serde", "https://static.crates.io/crates/serde/1.0.0/download"},
		{"https://static.crates.io/crates/", "serde", "https://static.crates.io/crates/serde/1.0.0/download"},
		{"https://x/{crate}/{version}/dl", "serde", "https://x/serde/1.0.0/dl"},
		{"https://x/{prefix}/{lowerprefix}/{crate}", "MyCrate", "https://x/My/Cr/my/cr/MyCrate"},
		{"https://x/{crate}-{crate}/{sha256-checksum}", "abc", "https://x/abc-abc/" + sum},
		{"https://x/{lowerprefix}/{crate}", "Abc", "https://x/3/a/Abc"},
	}
	for _, tt := range tests {
		if got := ExpandDL(tt.tmpl, tt.name, "1.0.0", sum); got != tt.want {
			t.Errorf("ExpandDL(%q, %q) = %q, want %q", tt.tmpl, tt.name, got, tt.want)
		}
	}
}

func TestParseRegistry(t *testing.T) {
	for in, want := range map[string]string{
		"":                                   "https://index.crates.io/",
		"sparse+https://index.crates.io/":    "https://index.crates.io/",
		"sparse+http://127.0.0.1:8080":       "http://127.0.0.1:8080/",
		"sparse+https://example.org/a/index": "https://example.org/a/index/",
	} {
		u, err := ParseRegistry(in)
		if err != nil || u.String() != want {
			t.Errorf("ParseRegistry(%q) = %v, %v; want %q", in, u, err, want)
		}
	}
	for _, in := range []string{"https://index.crates.io/", "sparse+file:///tmp/x/", "sparse+ftp://h/", "sparse+https:///x/", "sparse+https://u:p@h/", "sparse+https://h/?q=1"} {
		if _, err := ParseRegistry(in); !errors.Is(err, ErrInvalidRegistry) {
			t.Errorf("ParseRegistry(%q) = %v, want ErrInvalidRegistry", in, err)
		}
	}
}

func FuzzExpandDL(f *testing.F) {
	for _, s := range []string{"https://static.crates.io/crates", "https://x/{crate}/{version}", "{prefix}{lowerprefix}{sha256-checksum}", "{{crate}}", ""} {
		f.Add(s, "serde", "1.0.0")
	}
	f.Fuzz(func(t *testing.T, tmpl, name, version string) {
		if ValidateName(name) != nil || strings.ContainsAny(version, "{}") {
			return
		}
		out := ExpandDL(tmpl, name, version, strings.Repeat("0", 64))
		if !strings.Contains(tmpl, "{") && !strings.HasSuffix(out, "/"+name+"/"+version+"/download") {
			t.Fatalf("ExpandDL(%q) = %q lacks the default suffix", tmpl, out)
		}
		for _, m := range dlMarkers {
			if strings.Contains(out, m) && !strings.Contains(name+version, m) {
				t.Fatalf("ExpandDL(%q) = %q still holds %s", tmpl, out, m)
			}
		}
	})
}
