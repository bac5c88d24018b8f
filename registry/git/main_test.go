package git

import (
	"bytes"
	"fmt"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testOpts allows the file:// and http://127.0.0.1 URLs the tests serve.
var testOpts = Options{AllowFile: true, AllowInsecureHTTP: true}

// gitCmd runs the git CLI in dir with a clean, hermetic environment.
func gitCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_TERMINAL_PROMPT=0",
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// fixture is a real source repository made with the git CLI.
type fixture struct {
	dir    string // the repository's work tree
	marker string // file a post-checkout hook in the repository would create
	// commits by name
	zero, first, main, dev string // zero is at no branch or tag tip
}

// newFixture makes a repository with three commits on main, a dev branch,
// a lightweight tag v1 (first commit) and an annotated tag v2 (main), an
// executable file, and a post-checkout hook that writes a marker file.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{dir: filepath.Join(root, "src"), marker: filepath.Join(root, "HOOK-RAN")}
	if err := os.Mkdir(f.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, f.dir, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(f.dir, "plugin.json"), `{"name":"demo"}`+"\n", 0o644)
	gitCmd(t, f.dir, "add", ".")
	gitCmd(t, f.dir, "commit", "-q", "-m", "zero")
	f.zero = gitCmd(t, f.dir, "rev-parse", "HEAD")
	writeFile(t, filepath.Join(f.dir, "bin", "server"), "#!/bin/sh\necho hi\n", 0o755)
	gitCmd(t, f.dir, "add", ".")
	gitCmd(t, f.dir, "commit", "-q", "-m", "first")
	f.first = gitCmd(t, f.dir, "rev-parse", "HEAD")
	gitCmd(t, f.dir, "tag", "v1")
	writeFile(t, filepath.Join(f.dir, "README.md"), "second\n", 0o644)
	gitCmd(t, f.dir, "add", ".")
	gitCmd(t, f.dir, "commit", "-q", "-m", "second")
	f.main = gitCmd(t, f.dir, "rev-parse", "HEAD")
	gitCmd(t, f.dir, "tag", "-a", "-m", "release 2", "v2")
	gitCmd(t, f.dir, "checkout", "-q", "-b", "dev")
	writeFile(t, filepath.Join(f.dir, "DEV"), "dev\n", 0o644)
	gitCmd(t, f.dir, "add", ".")
	gitCmd(t, f.dir, "commit", "-q", "-m", "dev")
	f.dev = gitCmd(t, f.dir, "rev-parse", "HEAD")
	gitCmd(t, f.dir, "checkout", "-q", "main")
	// Installed last so that building the fixture does not trigger it.
	writeFile(t, filepath.Join(f.dir, ".git", "hooks", "post-checkout"), "#!/bin/sh\ntouch '"+f.marker+"'\n", 0o755)
	return f
}

func (f *fixture) fileURL() string { return "file://" + f.dir }

// serveHTTP serves the fixture through git http-backend (CGI) on 127.0.0.1.
func (f *fixture) serveHTTP(t *testing.T) string {
	t.Helper()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("git-http-backend not available: %v", err) // .ci/run installs it: in CI a skip would hide a broken install step
		}
		t.Skipf("git-http-backend not available: %v", err)
	}
	h := &cgi.Handler{
		Path: backend,
		Env: []string{
			"GIT_PROJECT_ROOT=" + filepath.Dir(f.dir),
			"GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_NOSYSTEM=1",
			"GIT_CONFIG_GLOBAL=/dev/null",
		},
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("test server is not on 127.0.0.1: %s", srv.URL)
	}
	return srv.URL + "/" + filepath.Base(f.dir)
}

// craft commits a hand-built tree to branch in the fixture using go-git
// plumbing, bypassing every check the git CLI would make. files maps a
// slash path to its content; modes overrides the mode of a path (default
// regular file); gitlinks maps a path to a commit id recorded as a gitlink.
func (f *fixture) craft(t *testing.T, branch string, files map[string]string, modes map[string]filemode.FileMode) string {
	t.Helper()
	repo, err := gogit.PlainOpen(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	st := repo.Storer
	type node struct {
		children map[string]*node
		hash     plumbing.Hash
		mode     filemode.FileMode
	}
	root := &node{children: map[string]*node{}}
	for p, content := range files {
		parts := strings.Split(p, "/")
		n := root
		for _, dir := range parts[:len(parts)-1] {
			c, ok := n.children[dir]
			if !ok {
				c = &node{children: map[string]*node{}}
				n.children[dir] = c
			}
			n = c
		}
		mode := filemode.Regular
		if m, ok := modes[p]; ok {
			mode = m
		}
		leaf := &node{mode: mode}
		if mode == filemode.Submodule {
			leaf.hash = plumbing.NewHash(content)
		} else {
			leaf.hash = storeBlob(t, st, content)
		}
		n.children[parts[len(parts)-1]] = leaf
	}
	var build func(n *node) plumbing.Hash
	build = func(n *node) plumbing.Hash {
		tree := &object.Tree{}
		for name, c := range n.children {
			if c.children != nil {
				tree.Entries = append(tree.Entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: build(c)})
			} else {
				tree.Entries = append(tree.Entries, object.TreeEntry{Name: name, Mode: c.mode, Hash: c.hash})
			}
		}
		sortEntries(tree.Entries)
		// Encoded by hand: go-git's encoder refuses some hostile names.
		var raw bytes.Buffer
		for _, e := range tree.Entries {
			fmt.Fprintf(&raw, "%o %s\x00", uint32(e.Mode), e.Name)
			raw.Write(e.Hash[:])
		}
		obj := st.NewEncodedObject()
		obj.SetType(plumbing.TreeObject)
		w, err := obj.Writer()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(raw.Bytes()); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		h, err := st.SetEncodedObject(obj)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	sig := object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1700000000, 0)}
	c := &object.Commit{Author: sig, Committer: sig, Message: "crafted\n", TreeHash: build(root)}
	obj := st.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		t.Fatal(err)
	}
	h, err := st.SetEncodedObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(branch), h)); err != nil {
		t.Fatal(err)
	}
	return h.String()
}

func storeBlob(t *testing.T, st storer.EncodedObjectStorer, content string) plumbing.Hash {
	t.Helper()
	obj := st.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(content)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	h, err := st.SetEncodedObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// sortEntries orders entries the way git does (a directory sorts as if its
// name ended in "/").
func sortEntries(es []object.TreeEntry) {
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && key(es[j]) < key(es[j-1]); j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
}

// assertNoStaging fails if a .tmp-* directory is left in dir.
func assertNoStaging(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("staging directory %s left behind in %s", e.Name(), dir)
		}
	}
}
