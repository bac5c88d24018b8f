package coding_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/harness/builtin/coding"
)

// TestEscapesRefused: every way out of the workspace is refused by every
// tool that takes a path, with an error naming the path and the root, and
// nothing outside is read or changed.
func TestEscapesRefused(t *testing.T) {
	f := newFixture(t, coding.Options{})
	secret := filepath.Join(f.outside, "secret.txt")
	// Links inside the workspace that lead out: to a file, to a directory,
	// and one the agent makes itself with bash.
	if err := os.Symlink(secret, f.path("file-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(f.outside, f.path("dir-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside", f.path("rel-link")); err != nil {
		t.Fatal(err)
	}
	f.ok(t, "bash", `{"command":"ln -s ../outside/secret.txt made-link && mkdir -p sub && ln -s ../../outside sub/made-dir"}`)

	escapes := map[string]string{
		"dotdot":             "../outside/secret.txt",
		"dotdot inside":      "sub/../../outside/secret.txt",
		"absolute outside":   secret,
		"symlinked file":     "file-link",
		"symlinked dir":      "dir-link/secret.txt",
		"relative link":      "rel-link/secret.txt",
		"link made by bash":  "made-link",
		"dir made by bash":   "sub/made-dir/secret.txt",
		"absolute via link":  filepath.Join(f.root, "dir-link", "secret.txt"),
		"root's parent":      "..",
		"absolute elsewhere": "/etc/passwd",
	}
	for name, p := range escapes {
		t.Run(name, func(t *testing.T) {
			calls := []struct{ tool, args string }{
				{"read_file", args(t, map[string]any{"path": p})},
				{"write_file", args(t, map[string]any{"path": p, "content": "pwned\n"})},
				{"edit_file", args(t, map[string]any{"path": p, "old_string": "top", "new_string": "pwned"})},
				{"list_files", args(t, map[string]any{"path": p})},
				{"grep", args(t, map[string]any{"pattern": "secret", "path": p})},
			}
			for _, c := range calls {
				res := f.fails(t, c.tool, c.args, "outside the workspace", p, f.root)
				if strings.Contains(res.Output, "top secret") {
					t.Fatalf("read_file %s leaked the file: %q", p, res.Output)
				}
			}
		})
	}

	// Creating a new file through a directory link that leads out: the
	// file would land outside.
	f.fails(t, "write_file", `{"path":"dir-link/new.txt","content":"pwned\n"}`, "outside the workspace", "dir-link/new.txt")
	f.fails(t, "write_file", `{"path":"sub/made-dir/deeper/new.txt","content":"pwned\n"}`, "outside the workspace")
	f.fails(t, "write_file", `{"path":"../escaped.txt","content":"pwned\n"}`, "outside the workspace")

	// A link leading out to nothing yet: following it would create the
	// file outside.
	if err := os.Symlink(filepath.Join(f.outside, "missing"), f.path("dangling")); err != nil {
		t.Fatal(err)
	}
	f.fails(t, "write_file", `{"path":"dangling","content":"pwned\n"}`, "symbolic link", "dangling")
	f.fails(t, "write_file", `{"path":"dangling/x.txt","content":"pwned\n"}`, "symbolic link", "dangling/x.txt")

	// Nothing outside changed.
	if got := readFile(t, secret); got != "top secret\n" {
		t.Fatalf("secret.txt now holds %q", got)
	}
	entries, err := os.ReadDir(f.outside)
	if err != nil || len(entries) != 1 {
		t.Fatalf("outside holds %v, %v; want secret.txt alone", entries, err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(f.root), "escaped.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("escaped.txt was written beside the workspace: %v", err)
	}
	// The links themselves are still there, untouched.
	if fi, err := os.Lstat(f.path("file-link")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("file-link = %v, %v", fi, err)
	}
}

// TestRootIsALink: a workspace root reached through a symbolic link is
// still the workspace; paths under its resolved form are inside it.
func TestRootIsALink(t *testing.T) {
	f := newFixture(t, coding.Options{})
	link := filepath.Join(filepath.Dir(f.root), "ws-link")
	if err := os.Symlink(f.root, link); err != nil {
		t.Fatal(err)
	}
	c := coding.New(coding.Options{Root: func() string { return link }})
	g := &fixture{root: link, outside: f.outside, c: c}
	writeFile(t, f.path("a.txt"), "a\n")
	for _, p := range []string{"a.txt", filepath.Join(link, "a.txt"), filepath.Join(f.root, "a.txt")} {
		if res := g.ok(t, "read_file", args(t, map[string]any{"path": p})); res.Output != "a\n" {
			t.Fatalf("read %s = %q", p, res.Output)
		}
	}
	g.fails(t, "read_file", `{"path":"../outside/secret.txt"}`, "outside the workspace")
}

// TestNoRoot: a session without a workspace refuses every tool.
func TestNoRoot(t *testing.T) {
	c := coding.New(coding.Options{})
	f := &fixture{c: c}
	for _, tool := range []string{"read_file", "list_files", "bash"} {
		f.fails(t, tool, `{"path":"a","command":"true"}`, "no workspace root")
	}
}
