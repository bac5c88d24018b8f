//go:build unix

package git

import "syscall"

// oNoFollow makes opening a file fail if its last component is a symlink.
const oNoFollow = syscall.O_NOFOLLOW
