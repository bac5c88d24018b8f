//go:build !unix

package secrets

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkOwner has no portable owner check off unix.
func checkOwner(string, fs.FileInfo) error { return nil }

// openNoFollow refuses a symlink (checked with Lstat first: off unix there
// is no O_NOFOLLOW), then opens path for reading.
func openNoFollow(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s: %w", path, syscall.ELOOP)
	}
	return os.Open(path)
}
