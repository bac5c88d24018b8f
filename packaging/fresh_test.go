package packaging

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tree lists every path under root with its type, to prove that a call
// left nothing behind.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, rel+" "+d.Type().String())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func sameTree(t *testing.T, what, root string, before []string) {
	t.Helper()
	if d := cmp.Diff(before, tree(t, root)); d != "" {
		t.Errorf("%s changed %s (-before +after):\n%s", what, root, d)
	}
}

// TestRefusedInstallIntoAFreshDirLeavesNothing: an install that fails or
// is refused, into a config directory that does not exist yet (or exists
// and is empty), leaves the tree exactly as it was: no config directory,
// no empty extensions/, no .lock. Reads of a missing store create nothing
// either.
func TestRefusedInstallIntoAFreshDirLeavesNothing(t *testing.T) {
	ctx := context.Background()
	good := version(t, "1.0.0", "a")
	fails := map[string]InstallOptions{
		"fetch fails": {Source: Source{Kind: SourceGit, URL: "https://example.com/o/r"}, Fetch: func(ctx context.Context, dir string) (FetchResult, error) {
			os.WriteFile(filepath.Join(dir, "partial"), []byte("x"), 0o644)
			return FetchResult{}, errors.New("network down")
		}},
		"invalid manifest": gitInstall(pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { f["protocol_version"] = "9.0" })})),
		"consent refused": func() InstallOptions {
			o := gitInstall(good)
			o.Approve = func(next, prev *Manifest, ch Change) error { return ErrNotApproved }
			return o
		}(),
		"provision fails": func() InstallOptions {
			o := gitInstall(good)
			o.Provision = func(ctx context.Context, dir string, m *Manifest) (FetchResult, error) {
				return FetchResult{}, errors.New("artifact digest mismatch")
			}
			return o
		}(),
	}
	for name, o := range fails {
		for _, exists := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, dir exists %v", name, exists), func(t *testing.T) {
				parent := t.TempDir()
				cfg := filepath.Join(parent, "yolop")
				if exists {
					os.Mkdir(cfg, 0o755)
				}
				before := tree(t, parent)
				s := NewStore(cfg)
				if _, err := s.Install(ctx, o); err == nil {
					t.Fatal("install succeeded")
				}
				sameTree(t, "a failed install", parent, before)
				if _, err := s.ReadLock(ctx); err != nil {
					t.Fatal(err)
				}
				if list, err := s.List(ctx); err != nil || len(list) != 0 {
					t.Fatalf("List = %v, %v", list, err)
				}
				if _, err := s.VerifyInstalled(ctx, "demo"); !errors.Is(err, ErrNotInstalled) {
					t.Fatalf("VerifyInstalled = %v", err)
				}
				if err := s.Recover(ctx); err != nil {
					t.Fatal(err)
				}
				if err := s.Remove(ctx, "demo"); !errors.Is(err, ErrNotInstalled) {
					t.Fatalf("Remove = %v", err)
				}
				sameTree(t, "reads, recovery and a remove", parent, before)
			})
		}
	}
	// A store that exists keeps its scaffolding when an install fails.
	cfg := t.TempDir()
	s := NewStore(cfg)
	if _, err := s.Install(ctx, gitInstall(good)); err != nil {
		t.Fatal(err)
	}
	before := tree(t, cfg)
	if _, err := s.Install(ctx, fails["fetch fails"]); err == nil {
		t.Fatal("install succeeded")
	}
	sameTree(t, "a failed install into a used store", cfg, before)
}

// TestConcurrentInstallsIntoAFreshDir: installs racing into a config
// directory that does not exist yet, half of them failing (each failure
// tidies the store scaffolding it created away), still run one at a
// time, and every successful one is in the lock at the end.
func TestConcurrentInstallsIntoAFreshDir(t *testing.T) {
	ctx := context.Background()
	srcs := map[string]string{}
	for i := range 4 {
		name := fmt.Sprintf("ext%d", i)
		m := manifest(nil)
		m["name"] = name
		srcs[name] = pkg(t, map[string]any{"plugin.json": m})
	}
	for round := range 5 {
		cfg := filepath.Join(t.TempDir(), "yolop")
		var inside, overlap atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, 2*len(srcs))
		for name, src := range srcs {
			for _, fail := range []bool{true, false} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := NewStore(cfg).Install(ctx, InstallOptions{
						Source: Source{Kind: SourceGit, URL: "https://example.com/o/" + name},
						Fetch: func(ctx context.Context, dir string) (FetchResult, error) {
							if inside.Add(1) != 1 {
								overlap.Add(1)
							}
							defer inside.Add(-1)
							if fail {
								return FetchResult{}, errors.New("network down")
							}
							return FetchResult{Commit: fmt.Sprintf("%040d", 1)}, CopyTree(src, dir)
						},
					})
					if (err != nil) != fail {
						errs <- fmt.Errorf("%s (fail=%v): %v", name, fail, err)
					}
				}()
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("round %d: %v", round, err)
		}
		if overlap.Load() != 0 {
			t.Fatalf("round %d: %d fetches ran while another held the store lock", round, overlap.Load())
		}
		s := NewStore(cfg)
		for name := range srcs {
			if _, err := s.VerifyInstalled(ctx, name); err != nil {
				t.Errorf("round %d: %v", round, err)
			}
		}
		assertNoLeftovers(t, s)
	}
}

// TestLockNoticesItsFileWasReplaced: a lock taken on a file that is no
// longer (or no longer the same file) at the lock path is not a store
// lock; lock() takes it again on the file that is there.
func TestLockNoticesItsFileWasReplaced(t *testing.T) {
	s := NewStore(filepath.Join(t.TempDir(), "yolop"))
	l, err := s.lock(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	if !l.createdDir || !l.createdFile || !lockedFileIsAt(l.fl, s.fileLockPath()) {
		t.Fatalf("fresh lock %+v", l)
	}
	os.Remove(s.fileLockPath())
	if lockedFileIsAt(l.fl, s.fileLockPath()) {
		t.Error("a removed lock file still counts as the store lock")
	}
	os.WriteFile(s.fileLockPath(), nil, 0o600)
	if lockedFileIsAt(l.fl, s.fileLockPath()) {
		t.Error("a replaced lock file still counts as the store lock")
	}
	// The next writer locks the file now at the path, not the orphan.
	l2, err := s.lock(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Unlock()
	if l2.createdDir || l2.createdFile || !lockedFileIsAt(l2.fl, s.fileLockPath()) {
		t.Errorf("second lock %+v", l2)
	}
	// A shared lock of a store without a lock file creates nothing.
	s3 := NewStore(filepath.Join(t.TempDir(), "none"))
	if l3, err := s3.lock(context.Background(), false); err != nil || l3 != nil {
		t.Errorf("shared lock of a missing store = %+v, %v; want nil, nil", l3, err)
	}
	if exists(s3.Dir()) {
		t.Error("a shared lock created the config directory")
	}
}
