package packaging

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseSource(t *testing.T) {
	home, _ := os.UserHomeDir()
	cwd, _ := os.Getwd()
	cases := []struct {
		in   string
		want Source
	}{
		{".", Source{Kind: SourcePath, Path: cwd}},
		{"./testdata/lsp", Source{Kind: SourcePath, Path: filepath.Join(cwd, "testdata/lsp")}},
		{"/opt/ext", Source{Kind: SourcePath, Path: "/opt/ext"}},
		{"~/ext", Source{Kind: SourcePath, Path: filepath.Join(home, "ext")}},
		{"testdata", Source{Kind: SourcePath, Path: filepath.Join(cwd, "testdata")}},
		{"https://github.com/o/r.git", Source{Kind: SourceGit, URL: "https://github.com/o/r.git"}},
		{"https://github.com/o/r@v1.2.0", Source{Kind: SourceGit, URL: "https://github.com/o/r", Rev: "v1.2.0"}},
		{"https://user@host.example/o/r@main", Source{Kind: SourceGit, URL: "https://user@host.example/o/r", Rev: "main"}},
		{"https://user@host.example/o/r", Source{Kind: SourceGit, URL: "https://user@host.example/o/r"}},
		{"ssh://git@host.example/o/r@abc123", Source{Kind: SourceGit, URL: "ssh://git@host.example/o/r", Rev: "abc123"}},
		{"git@github.com:o/r.git@feature/x", Source{Kind: SourceGit, URL: "git@github.com:o/r.git", Rev: "feature/x"}},
		{"git@github.com:r@v1", Source{Kind: SourceGit, URL: "git@github.com:r", Rev: "v1"}},
		{"crates.io:yolop-extension-lsp", Source{Kind: SourceCrate, Crate: "yolop-extension-lsp"}},
		{"crates.io:yolop-extension-lsp@0.3.1", Source{Kind: SourceCrate, Crate: "yolop-extension-lsp", Rev: "0.3.1"}},
		{"lsp", Source{Kind: SourceCrate, Crate: "yolop-extension-lsp"}},
		{"lsp@^0.2", Source{Kind: SourceCrate, Crate: "yolop-extension-lsp", Rev: "^0.2"}},
		{"yolop-extension-lsp@0.3", Source{Kind: SourceCrate, Crate: "yolop-extension-lsp", Rev: "0.3"}}, // no doubled prefix
		{"sparse+http://127.0.0.1:8080/#yolop-extension-echo@0.1", Source{Kind: SourceCrate, Crate: "yolop-extension-echo", Rev: "0.1", Registry: "sparse+http://127.0.0.1:8080/"}},
		{"sparse+https://index.example.com/reg#yolop-extension-echo", Source{Kind: SourceCrate, Crate: "yolop-extension-echo", Registry: "sparse+https://index.example.com/reg/"}},
		{"sparse+http://[::1]:8080/#x", Source{Kind: SourceCrate, Crate: "x", Registry: "sparse+http://[::1]:8080/"}},
	}
	for _, tc := range cases {
		got, err := ParseSource(tc.in)
		if err != nil {
			t.Errorf("ParseSource(%q): %v", tc.in, err)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Source{}, "Raw")); d != "" {
			t.Errorf("ParseSource(%q) (-want +got):\n%s", tc.in, d)
		}
		if got.Raw != tc.in {
			t.Errorf("Raw = %q", got.Raw)
		}
		// String round-trips through ParseSource.
		again, err := ParseSource(got.String())
		if err != nil || again.Kind != got.Kind || again.String() != got.String() {
			t.Errorf("round trip of %q via %q: %+v, %v", tc.in, got.String(), again, err)
		}
	}
	// The label names the registry, except crates.io's own.
	for src, want := range map[Source]string{
		{Kind: SourceCrate, Crate: "c", Rev: "1", Registry: "sparse+http://127.0.0.1:1/"}: "sparse+http://127.0.0.1:1/#c@1",
		{Kind: SourceCrate, Crate: "c", Registry: "sparse+http://127.0.0.1:1"}:            "sparse+http://127.0.0.1:1/#c",
		{Kind: SourceCrate, Crate: "c", Registry: CratesIORegistry}:                       "crates.io:c",
		{Kind: SourceCrate, Crate: "c"}:                                                   "crates.io:c",
	} {
		if got := src.String(); got != want {
			t.Errorf("%+v.String() = %q, want %q", src, got, want)
		}
	}
	if n := (Source{Kind: SourceCrate, Crate: "yolop-extension-lsp"}).ExtensionName(); n != "lsp" {
		t.Errorf("ExtensionName = %q", n)
	}
}

func TestParseSourceRefuses(t *testing.T) {
	for _, in := range []string{
		"",
		"-oProxyCommand=touch /tmp/x",
		"--upload-pack=evil",
		"ext::sh -c touch% /tmp/pwned",
		"fd::17",
		"file:///tmp/repo",
		"http://example.com/o/r",
		"ftp://example.com/o/r",
		"https://-evil.example/o/r",
		"https://example.com",
		"https://example.com/o/r@-x",
		"https://example.com/o/r@a..b",
		"crates.io:",
		"crates.io:bad/name",
		"Not A Name",
		"a\nb",
		"sparse+https://index.example.com/",
		"sparse+https://index.example.com/#",
		"sparse+https://index.example.com/#bad/name",
		"sparse+https://index.example.com/#a#b",
		"sparse+https://index.example.com/#a@not a req!",
		"sparse+ftp://index.example.com/#a",
		"sparse+https:///#a",
		"sparse+https://u:p@index.example.com/#a",
		"sparse+https://index.example.com/?q=1#a",
	} {
		if s, err := ParseSource(in); err == nil || !errors.Is(err, ErrInvalidSource) {
			t.Errorf("ParseSource(%q) = %+v, %v; want ErrInvalidSource", in, s, err)
		}
	}
	// file:// only when the caller allows it (tests serving local repos).
	s, err := SourceOptions{AllowFileURL: true}.Parse("file:///tmp/repo@main")
	if err != nil || s.Kind != SourceGit || s.URL != "file:///tmp/repo" || s.Rev != "main" {
		t.Errorf("allowed file URL = %+v, %v", s, err)
	}
}

// TestSameSource: a lock entry matches the source it was installed from,
// including an entry written before crate sources named their registry.
func TestSameSource(t *testing.T) {
	reg := "sparse+http://127.0.0.1:8080/"
	src := Source{Kind: SourceCrate, Crate: "yolop-extension-echo", Registry: reg}
	for _, tc := range []struct {
		e    LockEntry
		want bool
	}{
		{LockEntry{Kind: SourceCrate, Source: reg + "#yolop-extension-echo", Registry: reg}, true},
		{LockEntry{Kind: SourceCrate, Source: "crates.io:yolop-extension-echo", Registry: reg}, true},
		{LockEntry{Kind: SourceCrate, Source: "crates.io:yolop-extension-echo", Registry: "sparse+http://127.0.0.1:9090/"}, false},
		{LockEntry{Kind: SourceCrate, Source: "crates.io:yolop-extension-echo"}, false},
		{LockEntry{Kind: SourceCrate, Source: "crates.io:yolop-extension-echo@0.1", Registry: reg}, false},
		{LockEntry{Kind: SourceCrate, Source: "crates.io:yolop-extension-other", Registry: reg}, false},
		{LockEntry{Kind: SourceGit, Source: "https://example.com/o/r", Registry: reg}, false},
	} {
		if got := tc.e.SameSource(src); got != tc.want {
			t.Errorf("%+v.SameSource(%s) = %v, want %v", tc.e, src, got, tc.want)
		}
	}
}
