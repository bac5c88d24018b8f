package packaging

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func sampleLock(t *testing.T) *Lockfile {
	t.Helper()
	l, err := ListDir("testdata/lsp")
	if err != nil {
		t.Fatal(err)
	}
	lf := &Lockfile{Version: LockVersion}
	lf.Put(LockEntry{Name: "lsp", Source: "https://example.com/o/lsp@v1", Kind: SourceGit, Commit: strings.Repeat("a", 40),
		Version: "0.1.0", ContentHash: l.Hash(), Files: l, Manifest: []byte(`{"name":"lsp","version":"0.1.0"}`),
		InstalledAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	lf.Put(LockEntry{Name: "echo", Source: "crates.io:yolop-extension-echo@0.2.0", Kind: SourceCrate,
		ContentHash: FileListing{}.Hash(), CrateChecksum: strings.Repeat("b", 64), Registry: "sparse+https://index.crates.io/",
		InstalledAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	return lf
}

func TestLockRoundTrip(t *testing.T) {
	lf := sampleLock(t)
	if lf.Extensions[0].Name != "echo" {
		t.Error("entries are not sorted by name")
	}
	b, err := lf.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseLock(b)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := got.Marshal()
	if d := cmp.Diff(string(b), string(again)); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if d := cmp.Diff(lf.Extensions[1].Files, got.Extensions[1].Files); d != "" || got.Extensions[1].InstalledAt != lf.Extensions[1].InstalledAt {
		t.Errorf("entry fields lost (-want +got):\n%s", d)
	}
	m, err := got.Entry("lsp").ApprovedManifest()
	if err != nil || m.Name != "lsp" {
		t.Errorf("ApprovedManifest = %+v, %v", m, err)
	}
}

func TestParseLockRefuses(t *testing.T) {
	good, _ := sampleLock(t).Marshal()
	s := string(good)
	cases := map[string]struct {
		data string
		want string
	}{
		"empty":            {"", "empty"},
		"truncated":        {s[:len(s)/2], "unexpected end"},
		"unknown version":  {strings.Replace(s, `"version": 1`, `"version": 2`, 1), "unknown version 2"},
		"no version":       {strings.Replace(s, `"version": 1,`, ``, 1), `no "version"`},
		"duplicate":        {strings.Replace(s, `"name": "echo"`, `"name": "lsp"`, 1), `duplicate entry for "lsp"`},
		"bad content hash": {strings.Replace(s, `"content_hash": "sha256:`, `"content_hash": "md5:`, 1), "content_hash"},
		"hand-edited hash": {strings.Replace(s, `"sha256": "`, `"sha256": "0`, 1)[:0] + editFirstFileHash(s), "hand-edited"},
		"unknown kind":     {strings.Replace(s, `"kind": "git"`, `"kind": "svn"`, 1), `unknown kind "svn"`},
		"trailing garbage": {s + "{}", "after top-level value"},
		"not an object":    {"[1,2]", "cannot unmarshal"},
		"case-variant key": {strings.Replace(s, `"kind": "git"`, `"Kind": "git"`, 1), `unknown kind ""`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseLock([]byte(tc.data))
			if !errors.Is(err, ErrLockCorrupt) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want ErrLockCorrupt mentioning %q, got %v", tc.want, err)
			}
		})
	}
}

// editFirstFileHash flips one digit of the first file's sha256 in the lock
// text, leaving content_hash as it was.
func editFirstFileHash(s string) string {
	i := strings.Index(s, `"sha256": "`) + len(`"sha256": "`)
	c := byte('0')
	if s[i] == '0' {
		c = '1'
	}
	return s[:i] + string(c) + s[i+1:]
}

func TestReadLockFileNamesTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "extensions.lock")
	l, err := ReadLockFile(p)
	if err != nil || len(l.Extensions) != 0 {
		t.Fatalf("missing lock should be empty: %+v, %v", l, err)
	}
	os.WriteFile(p, []byte(`{"version": 1, "extensions": [`), 0o644)
	_, err = ReadLockFile(p)
	if !errors.Is(err, ErrLockCorrupt) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "never resets") {
		t.Errorf("want an error naming %s, got %v", p, err)
	}
	if b, _ := os.ReadFile(p); string(b) != `{"version": 1, "extensions": [` {
		t.Error("a corrupt lock was rewritten")
	}
}
