//go:build unix

package wasm

import (
	"fmt"
	"os"
	"syscall"
)

// checkPrivate refuses a cache directory that another user could write
// to: whoever can replace its files chooses the native code the host runs.
func checkPrivate(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s is writable by other users (mode %v); make it private (chmod 700) or choose another directory", dir, fi.Mode().Perm())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s belongs to uid %d, not to this user (uid %d)", dir, st.Uid, os.Geteuid())
	}
	return nil
}
