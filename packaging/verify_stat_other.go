//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package packaging

import "io/fs"

// A statKey is the stat identity of a file. Without inode numbers and
// ctime it is never trusted (valid is false), so every check re-hashes.
type statKey struct {
	valid bool
}

func keyOf(fs.FileInfo) statKey { return statKey{} }
