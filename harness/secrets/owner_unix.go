//go:build unix

package secrets

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkOwner refuses a file owned by another user.
func checkOwner(path string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := os.Getuid(); int(st.Uid) != uid {
		return fmt.Errorf("%w: %s is owned by uid %d, not by you (uid %d); yolop reads credentials only from a file you own. Remove it, set the secrets again with `yolop ext secret set` and `chmod 600 %s`", ErrUnsafeFile, path, st.Uid, uid, path)
	}
	return nil
}

// openNoFollow opens path for reading, failing with ELOOP on a symlink.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}
