package skill

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, in        string
		wantName, wantD string
		wantBody        string
		wantErr         string
	}{
		{name: "plain", in: "---\nname: demo\ndescription: Does a thing.\n---\n# Body\n", wantName: "demo", wantD: "Does a thing.", wantBody: "# Body\n"},
		{name: "crlf and bom", in: "\ufeff---\r\nname: demo\r\ndescription: d\r\n---\r\nbody", wantName: "demo", wantD: "d", wantBody: "body"},
		{name: "quoted", in: "---\nname: \"demo\"\ndescription: 'it''s: quoted'\n---\n", wantName: "demo", wantD: "it's: quoted"},
		{name: "folded block", in: "---\nname: demo\ndescription: >\n  one\n  two\nlicense: MIT\n---\n", wantName: "demo", wantD: "one two"},
		{name: "plain continued", in: "---\nname: demo\ndescription: one\n  two\n---\n", wantName: "demo", wantD: "one two"},
		{name: "literal block", in: "---\nname: demo\ndescription: |\n  one\n  two\n---\n", wantName: "demo", wantD: "one\ntwo"},
		{name: "nested keys skipped", in: "---\nname: demo\nmetadata:\n  author: me\n  list:\n    - a\ndescription: d # a comment\n---\n", wantName: "demo", wantD: "d"},
		{name: "no frontmatter", in: "# just markdown\n", wantErr: "must start with a '---' line"},
		{name: "not closed", in: "---\nname: demo\n", wantErr: "not closed"},
		{name: "no name", in: "---\ndescription: d\n---\n", wantErr: "the name is empty"},
		{name: "upper case name", in: "---\nname: Demo\ndescription: d\n---\n", wantErr: "lowercase"},
		{name: "path as name", in: "---\nname: ../../etc\ndescription: d\n---\n", wantErr: "lowercase"},
		{name: "no description", in: "---\nname: demo\n---\n", wantErr: "no description"},
		{name: "long description", in: "---\nname: demo\ndescription: " + strings.Repeat("x", MaxDescriptionLen+1) + "\n---\n", wantErr: "more than 1024"},
		{name: "duplicate key", in: "---\nname: demo\nname: other\ndescription: d\n---\n", wantErr: "appears twice"},
		{name: "not key value", in: "---\nname demo\n---\n", wantErr: "is not 'key: value'"},
		{name: "open quote", in: "---\nname: \"demo\ndescription: d\n---\n", wantErr: "does not close"},
		{name: "not utf8", in: "---\nname: \xff\n---\n", wantErr: "not UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, body, err := Parse([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrInvalid) {
					t.Fatalf("Parse = %+v, %v; want an ErrInvalid with %q", m, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Name != tc.wantName || m.Description != tc.wantD || body != tc.wantBody {
				t.Fatalf("Parse = %+v, body %q; want %q %q %q", m, body, tc.wantName, tc.wantD, tc.wantBody)
			}
		})
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadChecksTheDirectoryName(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "demo", FileName), "---\nname: demo\ndescription: d\n---\n")
	write(t, filepath.Join(root, "other", FileName), "---\nname: demo\ndescription: d\n---\n")
	if m, err := Load(filepath.Join(root, "demo")); err != nil || m.Name != "demo" {
		t.Fatalf("Load = %+v, %v", m, err)
	}
	if _, err := Load(filepath.Join(root, "other")); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `the directory is "other"`) {
		t.Fatalf("a name that is not the directory's = %v", err)
	}
	if _, err := Load(filepath.Join(root, "missing")); err == nil {
		t.Fatal("a missing SKILL.md loaded")
	}
}

func TestReadFileStaysInsideThePackage(t *testing.T) {
	pkg := t.TempDir()
	outside := t.TempDir()
	write(t, filepath.Join(pkg, "skills", "ok", FileName), "---\nname: ok\ndescription: d\n---\nbody\n")
	write(t, filepath.Join(outside, "secret", FileName), "---\nname: secret\ndescription: d\n---\nsecret\n")
	// A skill directory that is a symlink out of the package, and a
	// SKILL.md that is one.
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(pkg, "skills", "secret")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(pkg, "skills", "file"), 0o755)
	if err := os.Symlink(filepath.Join(outside, "secret", FileName), filepath.Join(pkg, "skills", "file", FileName)); err != nil {
		t.Fatal(err)
	}
	// A symlink that stays inside is fine.
	if err := os.Symlink(filepath.Join(pkg, "skills", "ok"), filepath.Join(pkg, "skills", "alias")); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(pkg, filepath.Join(pkg, "skills", "ok")); err != nil || !strings.Contains(string(b), "body") {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	if _, err := ReadFile(pkg, filepath.Join(pkg, "skills", "alias")); err != nil {
		t.Fatalf("a symlink inside the package: %v", err)
	}
	for _, d := range []string{"secret", "file"} {
		if b, err := ReadFile(pkg, filepath.Join(pkg, "skills", d)); !errors.Is(err, ErrEscapes) {
			t.Fatalf("ReadFile(%s) = %q, %v; want ErrEscapes", d, b, err)
		}
	}
	big := filepath.Join(pkg, "skills", "big", FileName)
	write(t, big, strings.Repeat("x", MaxFileBytes+1))
	if _, err := ReadFile(pkg, filepath.Dir(big)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("an oversized SKILL.md = %v", err)
	}
}

func TestValidNameRefusesPaths(t *testing.T) {
	for _, n := range []string{"", "..", "../x", "a/b", `a\b`, "-a", "a-", "a--b", "A", strings.Repeat("a", MaxNameLen+1)} {
		if ValidName(n) == nil {
			t.Errorf("ValidName(%q) = nil", n)
		}
	}
	for _, n := range []string{"a", "author-extension", "x1-2y", strings.Repeat("a", MaxNameLen)} {
		if err := ValidName(n); err != nil {
			t.Errorf("ValidName(%q) = %v", n, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"---\nname: demo\ndescription: d\n---\nbody",
		"---\nname: \"x\\u0041\"\ndescription: >\n  a\n---\n",
		"---\n: \n---\n",
		"---\nname: '\n---\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, _, err := Parse(b)
		if err == nil {
			if ValidName(m.Name) != nil || m.Description == "" {
				t.Fatalf("Parse accepted %+v", m)
			}
		}
	})
}
