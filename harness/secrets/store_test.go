package secrets

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestFileRoundTripAndMode(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "cfg")
	f := NewFile(dir)
	if all, err := f.All(ctx); err != nil || len(all) != 0 {
		t.Fatalf("missing file: %v, %v; want empty", all, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a read created %s", dir)
	}
	if err := f.Set(ctx, "gh", "token", New(canary)); err != nil {
		t.Fatal(err)
	}
	if err := f.Set(ctx, "gh", "other", New(`quote " and \ back`)); err != nil {
		t.Fatal(err)
	}
	if err := f.Set(ctx, "mail", "password", New("pw-1234")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(f.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || !fi.Mode().IsRegular() {
		t.Errorf("mode = %v, want -rw-------", fi.Mode())
	}
	data, _ := os.ReadFile(f.Path())
	if !strings.Contains(string(data), `['ext:gh']`) {
		t.Errorf("file is not keyed ext:<name>:\n%s", data)
	}
	s, ok, err := f.Get(ctx, "gh", "token")
	if err != nil || !ok || s.Reveal() != canary {
		t.Fatalf("Get = %v %v %v", s.Reveal(), ok, err)
	}
	s, _, _ = f.Get(ctx, "gh", "other")
	if s.Reveal() != `quote " and \ back` {
		t.Errorf("escaping lost: %q", s.Reveal())
	}
	if _, ok, _ := f.Get(ctx, "gh", "nope"); ok {
		t.Error("unset field reported set")
	}
	all, _ := f.All(ctx)
	if len(all) != 2 || len(all["gh"]) != 2 || all["mail"]["password"].Reveal() != "pw-1234" {
		t.Errorf("All = %v", all)
	}
	if ok, err := f.Delete(ctx, "gh", "token"); !ok || err != nil {
		t.Errorf("Delete = %v, %v", ok, err)
	}
	if ok, _ := f.Delete(ctx, "gh", "token"); ok {
		t.Error("second Delete reported a deletion")
	}
	if err := f.DeleteExtension(ctx, "gh"); err != nil {
		t.Fatal(err)
	}
	if m, _ := f.Extension(ctx, "gh"); len(m) != 0 {
		t.Errorf("after DeleteExtension: %v", m)
	}
	if err := f.Set(ctx, "gh", "token", Secret{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("empty value: %v", err)
	}
	// No temporary files are left behind.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("leftover %s", e.Name())
		}
	}
}

func TestFileRefusesUnsafe(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) *File {
		f := NewFile(t.TempDir())
		if err := f.Set(ctx, "gh", "token", New(canary)); err != nil {
			t.Fatal(err)
		}
		return f
	}
	t.Run("group readable", func(t *testing.T) {
		f := setup(t)
		os.Chmod(f.Path(), 0o640)
		_, err := f.All(ctx)
		if !errors.Is(err, ErrUnsafeFile) || !strings.Contains(err.Error(), "chmod 600 "+f.Path()) {
			t.Fatalf("err = %v", err)
		}
		if err := f.Set(ctx, "gh", "x", New("y")); !errors.Is(err, ErrUnsafeFile) {
			t.Errorf("write over an unsafe file: %v", err)
		}
	})
	t.Run("world readable", func(t *testing.T) {
		f := setup(t)
		os.Chmod(f.Path(), 0o604)
		if _, _, err := f.Get(ctx, "gh", "token"); !errors.Is(err, ErrUnsafeFile) || !strings.Contains(err.Error(), "0604") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("symlink", func(t *testing.T) {
		f := setup(t)
		real := filepath.Join(t.TempDir(), "real.toml")
		os.Rename(f.Path(), real)
		os.Symlink(real, f.Path())
		_, err := f.All(ctx)
		if !errors.Is(err, ErrUnsafeFile) || !strings.Contains(err.Error(), "symlink") || !strings.Contains(err.Error(), "chmod 600") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("directory", func(t *testing.T) {
		f := NewFile(t.TempDir())
		os.Mkdir(f.Path(), 0o700)
		if _, err := f.All(ctx); !errors.Is(err, ErrUnsafeFile) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("other owner", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("changing a file's owner needs root")
		}
		f := setup(t)
		if err := os.Chown(f.Path(), 65534, 65534); err != nil {
			t.Skip(err)
		}
		_, err := f.All(ctx)
		if !errors.Is(err, ErrUnsafeFile) || !strings.Contains(err.Error(), "uid 65534") || !strings.Contains(err.Error(), "chmod 600") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("corrupt is not empty", func(t *testing.T) {
		f := setup(t)
		bad := []byte("[\"ext:gh\"]\ntoken = \"" + canary + "\n")
		os.WriteFile(f.Path(), bad, 0o600)
		_, err := f.All(ctx)
		if !errors.Is(err, ErrCorrupt) || strings.Contains(err.Error(), canary) {
			t.Fatalf("err = %v", err)
		}
		if err := f.Set(ctx, "gh", "x", New("y")); !errors.Is(err, ErrCorrupt) {
			t.Errorf("a write over a corrupt file: %v", err)
		}
		if got, _ := os.ReadFile(f.Path()); string(got) != string(bad) {
			t.Error("a failed write changed the corrupt file")
		}
	})
	t.Run("truncated table", func(t *testing.T) {
		f := setup(t)
		os.WriteFile(f.Path(), []byte("[\"ext:gh\"\n"), 0o600)
		if _, err := f.All(ctx); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestFileConcurrentWriters runs writers in parallel: the lock serialises
// them, so no update is lost.
func TestFileConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var wg sync.WaitGroup
	const n = 16
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A store per writer, as separate processes would have.
			if err := NewFile(dir).Set(ctx, "ext", fmt.Sprintf("f%d", i), New(fmt.Sprintf("v%d", i))); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	m, err := NewFile(dir).Extension(ctx, "ext")
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != n {
		t.Errorf("%d fields survived, want %d", len(m), n)
	}
}

func TestFileContextCancelledWhileLocked(t *testing.T) {
	dir := t.TempDir()
	f := NewFile(dir)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Hold the lock so the writer must wait, then find its context done.
	other := NewFile(dir)
	if err := other.Set(context.Background(), "a", "b", New("c")); err != nil {
		t.Fatal(err)
	}
	fl := lockFor(t, dir)
	defer fl()
	if err := f.Set(ctx, "a", "b", New("d")); err == nil || !strings.Contains(err.Error(), "credential lock") {
		t.Errorf("err = %v", err)
	}
}
