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
