package packaging

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func write(t *testing.T, p, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func TestHashDir(t *testing.T) {
	d := t.TempDir()
	write(t, filepath.Join(d, "plugin.json"), "{}", 0o644)
	write(t, filepath.Join(d, "bin/srv"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(d, ".git/HEAD"), "ref: x", 0o644)
	write(t, filepath.Join(d, "sub/.git"), "gitdir: x", 0o644)
	os.Symlink("bin/srv", filepath.Join(d, "link"))

	l, err := ListDir(d)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range l {
		paths = append(paths, e.Path+" "+e.Mode)
	}
	if diff := cmp.Diff([]string{"bin/srv exec", "link symlink", "plugin.json file"}, paths); diff != "" {
		t.Errorf("listing (-want +got):\n%s", diff)
	}
	h1, _ := HashDir(d)
	if !hashRE.MatchString(h1) {
		t.Fatalf("hash %q is not sha256:<hex>", h1)
	}
	// .git content does not count.
	write(t, filepath.Join(d, ".git/HEAD"), "ref: y", 0o644)
	if h, _ := HashDir(d); h != h1 {
		t.Error(".git changed the hash")
	}
	// Mode, content and symlink target all count.
	os.Chmod(filepath.Join(d, "plugin.json"), 0o755)
	h2, _ := HashDir(d)
	os.Chmod(filepath.Join(d, "plugin.json"), 0o644)
	os.Remove(filepath.Join(d, "link"))
	os.Symlink("plugin.json", filepath.Join(d, "link"))
	h3, _ := HashDir(d)
	if h2 == h1 || h3 == h1 || h2 == h3 {
		t.Errorf("mode or link change not detected: %s %s %s", h1, h2, h3)
	}
}

func TestDiffDirNamesFiles(t *testing.T) {
	d := t.TempDir()
	write(t, filepath.Join(d, "a"), "1", 0o644)
	write(t, filepath.Join(d, "b"), "2", 0o644)
	write(t, filepath.Join(d, "c"), "3", 0o644)
	before, _ := ListDir(d)
	write(t, filepath.Join(d, "a"), "changed", 0o644)
	os.Chmod(filepath.Join(d, "b"), 0o755)
	os.Remove(filepath.Join(d, "c"))
	write(t, filepath.Join(d, "new"), "x", 0o644)
	got, err := DiffDir(d, before)
	if err != nil {
		t.Fatal(err)
	}
	want := FileDiff{Changed: []string{"a", "b"}, Added: []string{"new"}, Removed: []string{"c"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if s := got.String(); s != "changed: a, b; added: new; removed: c" {
		t.Errorf("String = %q", s)
	}
}

func TestCopyTree(t *testing.T) {
	src := t.TempDir()
	write(t, filepath.Join(src, "plugin.json"), "{}", 0o600)
	write(t, filepath.Join(src, "bin/srv"), "#!/bin/sh\n", 0o700)
	write(t, filepath.Join(src, ".git/config"), "x", 0o644)
	os.Symlink("../plugin.json", filepath.Join(src, "bin/link"))
	dst := filepath.Join(t.TempDir(), "out")
	if err := CopyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dst, "bin/srv"))
	if err != nil || fi.Mode().Perm()&0o111 == 0 {
		t.Errorf("exec bit lost: %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(dst, ".git")); err == nil {
		t.Error(".git was copied")
	}
	hs, _ := HashDir(src)
	hd, _ := HashDir(dst)
	if hs != hd {
		t.Errorf("copy hashes differently: %s vs %s", hs, hd)
	}

	for name, target := range map[string]string{"relative escape": "../../etc/passwd", "absolute": "/etc/passwd"} {
		t.Run(name, func(t *testing.T) {
			src := t.TempDir()
			write(t, filepath.Join(src, "plugin.json"), "{}", 0o644)
			os.Symlink(target, filepath.Join(src, "evil"))
			err := CopyTree(src, filepath.Join(t.TempDir(), "out"))
			if !errors.Is(err, ErrUnsafeTree) || !strings.Contains(err.Error(), "evil") {
				t.Errorf("want ErrUnsafeTree naming the link, got %v", err)
			}
		})
	}
	// A link that stays lexically inside but resolves out through another
	// link is refused too.
	src2 := t.TempDir()
	os.Symlink("/etc", filepath.Join(src2, "etc"))
	os.Symlink("etc/passwd", filepath.Join(src2, "pw"))
	if err := CopyTree(src2, filepath.Join(t.TempDir(), "out")); !errors.Is(err, ErrUnsafeTree) {
		t.Errorf("want ErrUnsafeTree, got %v", err)
	}
}
