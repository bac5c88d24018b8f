package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteReplacesWithMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := Write(p, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "one" {
		t.Fatalf("content = %q", b)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %v, want 0600", fi.Mode().Perm())
	}
	// KeepMode keeps the replaced file's mode.
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("two"), KeepMode); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
		t.Fatalf("KeepMode gave %v, want 0640", fi.Mode().Perm())
	}
	if err := Write(filepath.Join(dir, "new"), nil, KeepMode); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "new")); fi.Mode().Perm() != 0o644 {
		t.Fatalf("KeepMode of a new file gave %v, want 0644", fi.Mode().Perm())
	}
	onlyFiles(t, dir, "f", "new")
}

// A failed fill leaves the old file as it was and no temporary file.
func TestFailedWriteLeavesTheOldFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := Write(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteFunc(p, 0o644, func(w io.Writer) error {
		w.Write([]byte("half"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the fill error", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Fatalf("content after a failed write = %q", b)
	}
	onlyFiles(t, dir, "f")
	if err := Write(filepath.Join(dir, "missing", "f"), nil, 0o644); err == nil {
		t.Fatal("a write into a missing directory succeeded")
	}
}

func onlyFiles(t *testing.T, dir string, want ...string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	if len(ents) != len(want) {
		var got []string
		for _, e := range ents {
			got = append(got, e.Name())
		}
		t.Fatalf("dir holds %v, want %v", got, want)
	}
}

// TestFollowLinksKeepsTheLink writes through real symlinks — absolute,
// relative, a chain, a dangling one — and checks each link is still a
// link and its target holds the data; Write alone replaces a link.
func TestFollowLinksKeepsTheLink(t *testing.T) {
	links, targets := t.TempDir(), t.TempDir()
	mustLink := func(dest, link string) {
		t.Helper()
		if err := os.Symlink(dest, link); err != nil {
			t.Fatal(err)
		}
	}
	abs := filepath.Join(targets, "abs")
	os.WriteFile(abs, []byte("old"), 0o644)
	mustLink(abs, filepath.Join(links, "abs"))
	rel := filepath.Join(links, "sub", "rel")
	os.MkdirAll(filepath.Dir(rel), 0o755)
	os.WriteFile(rel, []byte("old"), 0o644)
	mustLink(filepath.Join("sub", "rel"), filepath.Join(links, "rel"))
	mustLink(filepath.Join(links, "abs"), filepath.Join(links, "chain"))
	dangling := filepath.Join(targets, "not-yet")
	mustLink(dangling, filepath.Join(links, "dangling"))
	for _, tc := range []struct{ link, target string }{
		{"abs", abs}, {"rel", rel}, {"chain", abs}, {"dangling", dangling},
	} {
		link := filepath.Join(links, tc.link)
		dst, err := FollowLinks(link)
		if err != nil {
			t.Fatalf("%s: %v", tc.link, err)
		}
		if dst != tc.target {
			t.Errorf("FollowLinks(%s) = %s, want %s", tc.link, dst, tc.target)
		}
		if err := Write(dst, []byte("new "+tc.link), KeepMode); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symlink (%v)", tc.link, err)
		}
		if b, _ := os.ReadFile(link); string(b) != "new "+tc.link {
			t.Errorf("through %s: content = %q", tc.link, b)
		}
	}
	// A loop is an error naming the link, not a hang.
	mustLink(filepath.Join(links, "loop2"), filepath.Join(links, "loop1"))
	mustLink(filepath.Join(links, "loop1"), filepath.Join(links, "loop2"))
	if _, err := FollowLinks(filepath.Join(links, "loop1")); err == nil || !strings.Contains(err.Error(), "loop1") {
		t.Errorf("a link loop: %v", err)
	}
	// Not a link, or not there: the path itself.
	for _, p := range []string{abs, filepath.Join(targets, "none")} {
		if got, err := FollowLinks(p); err != nil || got != p {
			t.Errorf("FollowLinks(%s) = %s, %v", p, got, err)
		}
	}
	// Write itself never follows a link: the link is replaced.
	plain := filepath.Join(links, "replaced")
	mustLink(abs, plain)
	if err := Write(plain, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(plain); !fi.Mode().IsRegular() {
		t.Errorf("Write followed a link: %v", fi.Mode())
	}
	if b, _ := os.ReadFile(abs); string(b) != "new chain" {
		t.Errorf("Write changed the link's target: %q", b)
	}
}
