package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
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
