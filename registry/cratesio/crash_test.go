package cratesio

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestKillDuringUnpack (item 24): an unpacking process is SIGKILLed
// mid-archive; the destination never appears, the half-done staging dir
// is recognisable as ".tmp-*" and SweepStaging removes it.
func TestKillDuringUnpack(t *testing.T) {
	var entries []tarEntry
	for i := range 200 {
		entries = append(entries, file(fmt.Sprintf("%sf%03d", pfx, i), strings.Repeat(fmt.Sprint(i), 4000)))
	}
	archive := gz(t, rawTar(t, entries))
	parent := t.TempDir()
	os.WriteFile(filepath.Join(parent, "sentinel"), []byte("keep"), 0o644)
	before := snapshot(t, parent)
	dest := filepath.Join(parent, "pkg")

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CRATESIO_TEST_HELPER=unpack-stdin", "CRATESIO_TEST_DEST="+dest)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Send most of the archive, keep the pipe open so the child blocks.
	if _, err := stdin.Write(archive[:len(archive)*3/4]); err != nil {
		t.Fatal(err)
	}
	// Wait until the child has written files into its staging dir.
	deadline := time.Now().Add(30 * time.Second)
	for {
		m, _ := filepath.Glob(filepath.Join(parent, ".tmp-*", "tree", "f*"))
		if len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("the helper never started writing")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	stdin.Close()
	if _, err := os.Lstat(dest); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("destination exists after a killed unpack: %v", err)
	}
	removed, err := SweepStaging(parent)
	if err != nil || len(removed) != 1 || !strings.HasPrefix(removed[0], ".tmp-") {
		t.Fatalf("SweepStaging = %v, %v; want the one half-done staging dir", removed, err)
	}
	assertUnchanged(t, parent, before)
	// A fresh unpack then succeeds.
	if err := Unpack(bytes.NewReader(archive), int64(len(archive)), dest, UnpackOptions{Prefix: pfx}); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentUnpackSameDest (item 25): two unpacks into one destination
// at once: exactly one wins, the other fails cleanly, nothing interleaves.
func TestConcurrentUnpackSameDest(t *testing.T) {
	var entries []tarEntry
	for i := range 50 {
		entries = append(entries, file(fmt.Sprintf("%sf%03d", pfx, i), strings.Repeat("x", 1000)))
	}
	archive := gz(t, rawTar(t, entries))
	parent := t.TempDir()
	dest := filepath.Join(parent, "pkg")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = Unpack(bytes.NewReader(archive), int64(len(archive)), dest, UnpackOptions{Prefix: pfx})
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		}
	}
	if ok != 1 {
		t.Fatalf("%d of 2 concurrent unpacks succeeded (%v), want exactly 1", ok, errs)
	}
	got, _ := os.ReadDir(parent)
	if len(got) != 1 || got[0].Name() != "pkg" {
		t.Errorf("parent holds %v, want only pkg", got)
	}
	files, _ := os.ReadDir(dest)
	if len(files) != 50 {
		t.Errorf("pkg holds %d files, want 50", len(files))
	}
}

// TestDiskFull (item 26): ENOSPC mid-extract names the cause and leaves
// nothing behind. Needs a small tmpfs (root); skipped when mount fails.
func TestDiskFull(t *testing.T) {
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	var entries []tarEntry
	for i := range 40 {
		entries = append(entries, file(fmt.Sprintf("%sf%03d", pfx, i), strings.Repeat("z", 32<<10)))
	}
	archive := gz(t, rawTar(t, entries))
	err := Unpack(bytes.NewReader(archive), int64(len(archive)), filepath.Join(mnt, "pkg"), UnpackOptions{Prefix: pfx})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err = %v, want ENOSPC", err)
	}
	if got, _ := os.ReadDir(mnt); len(got) != 0 {
		t.Errorf("the full filesystem still holds %v", got)
	}
}
