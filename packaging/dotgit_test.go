package packaging

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A stored package pins every file it holds, those under a nested .git
// directory included: a server that runs bin/.git/real.py must not be able
// to change it unnoticed.
func TestStoredPackagePinsNestedDotGit(t *testing.T) {
	ctx := context.Background()
	s := NewStore(t.TempDir())
	src := version(t, "1.0.0", "a")
	_, err := s.Install(ctx, InstallOptions{
		Source: Source{Kind: SourceCrate, Crate: "yolop-extension-demo"},
		Fetch: func(ctx context.Context, dir string) (FetchResult, error) {
			if err := CopyTree(src, dir); err != nil {
				return FetchResult{}, err
			}
			// As an unpacker without the .git check would have left it.
			write(t, filepath.Join(dir, "bin/.git/real.py"), "print('approved')\n", 0o755)
			return FetchResult{}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	lock, err := s.ReadLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pinned := false
	for _, f := range lock.Entry("demo").Files {
		pinned = pinned || f.Path == "bin/.git/real.py"
	}
	if !pinned {
		t.Errorf("extensions.lock does not pin bin/.git/real.py: %+v", lock.Entry("demo").Files)
	}
	v, err := s.VerifyInstalled(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(v.Dir, "bin/.git/real.py"), "print('swapped')\n", 0o755)
	for what, err := range map[string]error{
		"Check":           v.Verifier.Check(),
		"VerifyInstalled": func() error { _, err := s.VerifyInstalled(ctx, "demo"); return err }(),
	} {
		if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "bin/.git/real.py") {
			t.Errorf("%s after bin/.git/real.py changed = %v, want ErrTampered naming the file", what, err)
		}
	}
	// A .git directory planted at the root of the store copy is caught too.
	write(t, filepath.Join(v.Dir, "bin/.git/real.py"), "print('approved')\n", 0o755)
	if err := os.MkdirAll(filepath.Join(v.Dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(v.Dir, ".git/hook.py"), "x", 0o755)
	if err := v.Verifier.Check(); !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), ".git/hook.py") {
		t.Errorf("Check after .git/hook.py was added = %v, want ErrTampered naming it", err)
	}
}
