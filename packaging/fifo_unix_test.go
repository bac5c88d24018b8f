//go:build unix

package packaging

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestListDirRefusesSpecialFiles(t *testing.T) {
	d := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(d, "fifo"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	if _, err := ListDir(d); !errors.Is(err, ErrUnsafeTree) {
		t.Errorf("want ErrUnsafeTree, got %v", err)
	}
	if err := CopyTree(d, filepath.Join(t.TempDir(), "out")); !errors.Is(err, ErrUnsafeTree) {
		t.Errorf("CopyTree: want ErrUnsafeTree, got %v", err)
	}
}

// A plugin.json that is a FIFO would block a reader forever; Load refuses it
// without opening it.
func TestLoadRefusesFIFOManifest(t *testing.T) {
	d := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(d, "plugin.json"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	_, err := Load(d)
	if !errors.Is(err, ErrInvalidManifest) || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("want a not-a-regular-file error, got %v", err)
	}
}
