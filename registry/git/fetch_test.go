package git

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// transports returns the fixture's URL over file:// and over HTTP.
func transports(t *testing.T, f *fixture) map[string]string {
	return map[string]string{"file": f.fileURL(), "http": f.serveHTTP(t)}
}

func TestFetchResolvesRevisions(t *testing.T) {
	f := newFixture(t)
	for transport, url := range transports(t, f) {
		tests := []struct {
			name, rev   string
			wantCommit  string
			wantRef     string
			wantFile    string // a file that must exist
			missingFile string // a file that must not exist
		}{
			{"default HEAD", "", f.main, "refs/heads/main", "README.md", "DEV"},
			{"branch", "dev", f.dev, "refs/heads/dev", "DEV", ""},
			{"full ref name", "refs/heads/dev", f.dev, "refs/heads/dev", "DEV", ""},
			{"lightweight tag", "v1", f.first, "refs/tags/v1", "plugin.json", "README.md"},
			{"annotated tag is peeled", "v2", f.main, "refs/tags/v2", "README.md", "DEV"},
			{"full sha at a tip", f.dev, f.dev, f.dev, "DEV", ""},
			{"full sha at a lightweight tag", f.first, f.first, f.first, "bin/server", "README.md"},
			{"full sha below the tips", f.zero, f.zero, f.zero, "plugin.json", "bin/server"},
			{"full sha in upper case", strings.ToUpper(f.first), f.first, f.first, "plugin.json", "README.md"},
		}
		for _, tc := range tests {
			t.Run(transport+"/"+tc.name, func(t *testing.T) {
				dest := filepath.Join(t.TempDir(), "ext")
				res, err := Fetch(context.Background(), url, tc.rev, dest, testOpts)
				if err != nil {
					t.Fatalf("Fetch(%q): %v", tc.rev, err)
				}
				if res.Commit != tc.wantCommit {
					t.Errorf("Commit = %s, want %s", res.Commit, tc.wantCommit)
				}
				if res.Ref != strings.ToLower(tc.wantRef) {
					t.Errorf("Ref = %q, want %q", res.Ref, tc.wantRef)
				}
				if _, err := os.Stat(filepath.Join(dest, tc.wantFile)); err != nil {
					t.Errorf("expected %s in export: %v", tc.wantFile, err)
				}
				if tc.missingFile != "" {
					if _, err := os.Stat(filepath.Join(dest, tc.missingFile)); !errors.Is(err, os.ErrNotExist) {
						t.Errorf("%s must not be in the export of %q (err %v)", tc.missingFile, tc.rev, err)
					}
				}
				if _, err := os.Stat(filepath.Join(dest, ".git")); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("export must not contain .git (err %v)", err)
				}
				assertNoStaging(t, filepath.Dir(dest))

				got, err := ResolveOnly(context.Background(), url, tc.rev, testOpts)
				if err != nil {
					t.Fatalf("ResolveOnly(%q): %v", tc.rev, err)
				}
				if got.Commit != res.Commit || got.Ref != res.Ref {
					t.Errorf("ResolveOnly = %+v, Fetch = %+v", got, res)
				}
			})
		}
	}
}

func TestFetchPreservesExecBit(t *testing.T) {
	f := newFixture(t)
	dest := filepath.Join(t.TempDir(), "ext")
	if _, err := Fetch(context.Background(), f.serveHTTP(t), "main", dest, testOpts); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Stat(filepath.Join(dest, "bin", "server"))
	if err != nil {
		t.Fatal(err)
	}
	if exe.Mode()&0o100 == 0 || !exe.Mode().IsRegular() {
		t.Errorf("bin/server mode = %v, want an executable regular file", exe.Mode())
	}
	plain, err := os.Stat(filepath.Join(dest, "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	if plain.Mode()&0o111 != 0 {
		t.Errorf("plugin.json mode = %v, want no exec bits", plain.Mode())
	}
	b, err := os.ReadFile(filepath.Join(dest, "bin", "server"))
	if err != nil || string(b) != "#!/bin/sh\necho hi\n" {
		t.Errorf("bin/server content = %q, %v", b, err)
	}
}

func TestFetchMissingRev(t *testing.T) {
	f := newFixture(t)
	for transport, url := range transports(t, f) {
		t.Run(transport, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "ext")
			_, err := Fetch(context.Background(), url, "no-such-branch", dest, testOpts)
			if !errors.Is(err, ErrRevNotFound) {
				t.Fatalf("err = %v, want ErrRevNotFound", err)
			}
			for _, want := range []string{"no-such-branch", url, "dev", "main", "v1", "v2"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if _, err := os.Stat(dest); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("dest created on failure: %v", err)
			}
			assertNoStaging(t, filepath.Dir(dest))
		})
	}
}

func TestFetchShortSHARefused(t *testing.T) {
	f := newFixture(t)
	url := f.fileURL()
	_, err := ResolveOnly(context.Background(), url, f.dev[:8], testOpts)
	if !errors.Is(err, ErrAmbiguousRev) {
		t.Fatalf("err = %v, want ErrAmbiguousRev", err)
	}
	if !strings.Contains(err.Error(), "did you mean "+f.dev) {
		t.Errorf("error %q should suggest the full id %s", err, f.dev)
	}
	// A short id that matches no tip gets no suggestion.
	_, err = ResolveOnly(context.Background(), url, "00000000", testOpts)
	if !errors.Is(err, ErrAmbiguousRev) || strings.Contains(err.Error(), "did you mean") {
		t.Fatalf("err = %v, want ErrAmbiguousRev without a suggestion", err)
	}
}

func TestFetchBranchAndTagWithSameName(t *testing.T) {
	f := newFixture(t)
	gitCmd(t, f.dir, "tag", "dev", f.first)
	_, err := ResolveOnly(context.Background(), f.fileURL(), "dev", testOpts)
	if !errors.Is(err, ErrAmbiguousRev) || !strings.Contains(err.Error(), "refs/tags/dev") {
		t.Fatalf("err = %v, want ErrAmbiguousRev naming refs/tags/dev", err)
	}
	res, err := ResolveOnly(context.Background(), f.fileURL(), "refs/tags/dev", testOpts)
	if err != nil || res.Commit != f.first {
		t.Fatalf("refs/tags/dev = %+v, %v; want %s", res, err, f.first)
	}
}

func TestCheckPinnedAfterForcePush(t *testing.T) {
	f := newFixture(t)
	url := f.serveHTTP(t)
	ctx := context.Background()
	pinned, err := ResolveOnly(ctx, url, "dev", testOpts)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckPinned(ctx, url, pinned.Commit, testOpts); err != nil {
		t.Fatalf("CheckPinned before the force-push: %v", err)
	}
	if err := CheckPinned(ctx, url, f.zero, testOpts); err != nil {
		t.Fatalf("CheckPinned of a commit below the tips: %v", err)
	}
	// Force-push: dev now points at main, the old dev commit is unreachable.
	gitCmd(t, f.dir, "branch", "-f", "dev", "main")
	err = CheckPinned(ctx, url, pinned.Commit, testOpts)
	if !errors.Is(err, ErrPinnedCommitMissing) || !strings.Contains(err.Error(), pinned.Commit) {
		t.Fatalf("CheckPinned after force-push = %v, want ErrPinnedCommitMissing naming %s", err, pinned.Commit)
	}
	// Installing the pinned commit fails the same way, never re-resolving.
	dest := filepath.Join(t.TempDir(), "ext")
	if _, err := Fetch(ctx, url, pinned.Commit, dest, testOpts); !errors.Is(err, ErrPinnedCommitMissing) {
		t.Fatalf("Fetch of the force-pushed commit = %v, want ErrPinnedCommitMissing", err)
	}
	if err := CheckPinned(ctx, url, pinned.Commit[:12], testOpts); !errors.Is(err, ErrInvalidRev) {
		t.Errorf("CheckPinned of a short id = %v, want ErrInvalidRev", err)
	}
}

func TestFetchRunsNoHooks(t *testing.T) {
	f := newFixture(t)
	for transport, url := range transports(t, f) {
		dest := filepath.Join(t.TempDir(), "ext")
		if _, err := Fetch(context.Background(), url, "dev", dest, testOpts); err != nil {
			t.Fatalf("%s: %v", transport, err)
		}
		if _, err := os.Stat(f.marker); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: the post-checkout hook ran (marker %s: %v)", transport, f.marker, err)
		}
	}
	// The hook is live: a real checkout in the source repository runs it,
	// so the assertion above is not vacuous.
	gitCmd(t, f.dir, "checkout", "-q", "dev")
	if _, err := os.Stat(f.marker); err != nil {
		t.Fatalf("control: git checkout did not run the hook: %v", err)
	}
}

func TestFetchRefusesUnsafeTrees(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		branch string
		files  map[string]string
		modes  map[string]filemode.FileMode
		want   string
	}{
		{"dotgit", map[string]string{"ok": "x", ".git/config": "[core]\n\thooksPath = /tmp\n"}, nil, `".git"`},
		{"dotgit-upper", map[string]string{".GIT/hooks/post-checkout": "x"}, nil, `".GIT"`},
		{"dotgit-nested", map[string]string{"a/b/.Git": "x"}, nil, `"a/b/.Git"`},
		{"dotgit-ntfs-short", map[string]string{"git~1/config": "x"}, nil, `"git~1"`},
		{"dotgit-trailing-dot", map[string]string{".git./config": "x"}, nil, `".git."`},
		{"dotgit-trailing-space", map[string]string{".git /config": "x"}, nil, `".git "`},
		{"dotdot", map[string]string{"a/../b": "x"}, nil, `".."`},
		{"backslash", map[string]string{`a\b`: "x"}, nil, "backslash"},
		{"symlink-escape", map[string]string{"escape": "../../../../etc/passwd"}, map[string]filemode.FileMode{"escape": filemode.Symlink}, "../../../../etc/passwd"},
		{"case-collision", map[string]string{"A.txt": "x", "a.txt": "y"}, nil, "collide"},
	}
	urls := transports(t, f)
	for _, tc := range tests {
		f.craft(t, tc.branch, tc.files, tc.modes)
		url := urls["file"]
		if tc.branch == "dotgit" || tc.branch == "symlink-escape" {
			url = urls["http"]
		}
		t.Run(tc.branch, func(t *testing.T) {
			parent := t.TempDir()
			dest := filepath.Join(parent, "ext")
			if err := os.Mkdir(dest, 0o755); err != nil {
				t.Fatal(err)
			}
			_, err := Fetch(context.Background(), url, tc.branch, dest, testOpts)
			if !errors.Is(err, ErrUnsafeTree) {
				t.Fatalf("err = %v, want ErrUnsafeTree", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			entries, err := os.ReadDir(dest)
			if err != nil || len(entries) != 0 {
				t.Errorf("dest changed on failure: %v entries, err %v", len(entries), err)
			}
			assertNoStaging(t, parent)
		})
	}
}

func TestFetchSkipsSubmodules(t *testing.T) {
	f := newFixture(t)
	link := strings.Repeat("ab", 20) // a commit the server does not have
	f.craft(t, "with-sub", map[string]string{
		"plugin.json":  "{}",
		".gitmodules":  "[submodule \"vendor/lib\"]\n\tpath = vendor/lib\n\turl = https://example.com/lib.git\n",
		"vendor/lib":   link,
		"vendor/keep":  "k",
		"deep/sub/mod": link,
	}, map[string]filemode.FileMode{"vendor/lib": filemode.Submodule, "deep/sub/mod": filemode.Submodule})
	dest := filepath.Join(t.TempDir(), "ext")
	res, err := Fetch(context.Background(), f.serveHTTP(t), "with-sub", dest, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"vendor/lib": true, "deep/sub/mod": true}
	if len(res.SkippedSubmodules) != len(want) {
		t.Fatalf("SkippedSubmodules = %q, want %v", res.SkippedSubmodules, want)
	}
	for _, p := range res.SkippedSubmodules {
		if !want[p] {
			t.Errorf("unexpected skipped submodule %q", p)
		}
		if _, err := os.Lstat(filepath.Join(dest, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("submodule path %s was written: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dest, "vendor", "keep")); err != nil {
		t.Errorf("regular file beside the submodule missing: %v", err)
	}
}

func TestFetchSizeCaps(t *testing.T) {
	f := newFixture(t)
	f.craft(t, "big", map[string]string{"a": strings.Repeat("x", 600), "b": strings.Repeat("y", 600)}, nil)
	url := f.fileURL()
	tests := []struct {
		name string
		opts Options
	}{
		{"total bytes", Options{AllowFile: true, MaxTotalBytes: 1000}},
		{"file count", Options{AllowFile: true, MaxFiles: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dest := filepath.Join(parent, "ext")
			_, err := Fetch(context.Background(), url, "big", dest, tc.opts)
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("err = %v, want ErrTooLarge", err)
			}
			if _, err := os.Stat(dest); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("dest exists after failure: %v", err)
			}
			assertNoStaging(t, parent)
		})
	}
	// The same tree passes with room to spare.
	dest := filepath.Join(t.TempDir(), "ext")
	if _, err := Fetch(context.Background(), url, "big", dest, Options{AllowFile: true, MaxTotalBytes: 1200, MaxFiles: 2}); err != nil {
		t.Fatalf("Fetch within the caps: %v", err)
	}
}

func TestFetchDestination(t *testing.T) {
	f := newFixture(t)
	url := f.fileURL()
	parent := t.TempDir()

	busy := filepath.Join(parent, "busy")
	writeFile(t, filepath.Join(busy, "keep"), "mine", 0o644)
	if _, err := Fetch(context.Background(), url, "", busy, testOpts); !errors.Is(err, ErrDestNotEmpty) {
		t.Fatalf("non-empty dest: err = %v, want ErrDestNotEmpty", err)
	}
	if b, err := os.ReadFile(filepath.Join(busy, "keep")); err != nil || string(b) != "mine" {
		t.Errorf("existing file changed: %q, %v", b, err)
	}

	empty := filepath.Join(parent, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Fetch(context.Background(), url, "", empty, testOpts); err != nil {
		t.Fatalf("empty dest: %v", err)
	}
	if _, err := os.Stat(filepath.Join(empty, "plugin.json")); err != nil {
		t.Errorf("export into empty dest: %v", err)
	}

	if _, err := Fetch(context.Background(), url, "", filepath.Join(parent, "no", "parent"), testOpts); err == nil {
		t.Error("Fetch into a missing parent succeeded")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	gone := filepath.Join(parent, "cancelled")
	if _, err := Fetch(ctx, url, "", gone, testOpts); err == nil {
		t.Error("Fetch with a cancelled context succeeded")
	}
	if _, err := os.Stat(gone); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dest exists after cancelled fetch: %v", err)
	}
	assertNoStaging(t, parent)
}

func TestFetchObjectStoreCap(t *testing.T) {
	f := newFixture(t)
	// 2 MiB of incompressible bytes: the pack cannot be smaller.
	rng := rand.New(rand.NewChaCha8([32]byte{7}))
	noise := make([]byte, 2<<20)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	f.craft(t, "huge", map[string]string{"blob.bin": string(noise)}, nil)
	url := f.serveHTTP(t)
	parent := t.TempDir()
	dest := filepath.Join(parent, "ext")
	opts := Options{AllowInsecureHTTP: true, MaxFetchBytes: 256 << 10}
	_, err := Fetch(context.Background(), url, "huge", dest, opts)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "objects fetched") {
		t.Fatalf("err = %v, want ErrTooLarge about the fetched objects", err)
	}
	if _, err := os.Stat(dest); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dest exists after failure: %v", err)
	}
	assertNoStaging(t, parent)
	if _, err := ResolveOnly(context.Background(), url, "huge", opts); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ResolveOnly err = %v, want ErrTooLarge", err)
	}
	// The default cap lets the same branch through.
	if _, err := Fetch(context.Background(), url, "huge", dest, testOpts); err != nil {
		t.Fatalf("Fetch under the default cap: %v", err)
	}
}

// TestFetchCommitByIDWhenServerAllows covers the fetch-by-id path, taken
// when the server advertises allow-reachable-sha1-in-want.
func TestFetchCommitByIDWhenServerAllows(t *testing.T) {
	f := newFixture(t)
	gitCmd(t, f.dir, "config", "uploadpack.allowReachableSHA1InWant", "true")
	for transport, url := range transports(t, f) {
		t.Run(transport, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "ext")
			res, err := Fetch(context.Background(), url, f.zero, dest, testOpts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Commit != f.zero {
				t.Errorf("Commit = %s, want %s", res.Commit, f.zero)
			}
			if _, err := os.Stat(filepath.Join(dest, "bin")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("export of the first commit contains bin/: %v", err)
			}
			missing := strings.Repeat("0123456789", 4)
			if err := CheckPinned(context.Background(), url, missing, testOpts); !errors.Is(err, ErrPinnedCommitMissing) {
				t.Errorf("CheckPinned(unknown commit) = %v, want ErrPinnedCommitMissing", err)
			}
		})
	}
}

// TestFetchConcurrent runs fetches side by side into one parent directory:
// there is no shared state between calls and staging names never clash.
func TestFetchConcurrent(t *testing.T) {
	f := newFixture(t)
	url := f.serveHTTP(t)
	parent := t.TempDir()
	revs := []string{"main", "dev", "v1", "v2"}
	errs := make(chan error, len(revs))
	for i, rev := range revs {
		go func() {
			_, err := Fetch(context.Background(), url, rev, filepath.Join(parent, "ext"+strconv.Itoa(i)), testOpts)
			errs <- err
		}()
	}
	for range revs {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(parent, "ext1", "DEV")); err != nil {
		t.Errorf("dev export: %v", err)
	}
	assertNoStaging(t, parent)
}
