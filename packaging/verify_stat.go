//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package packaging

import (
	"io/fs"
	"syscall"
)

// A statKey is the stat identity of a file: when it is unchanged, so is the
// content (ctime moves on every write, chmod and rename, and cannot be set
// back by an unprivileged process).
type statKey struct {
	valid            bool
	dev, ino         uint64
	size             int64
	mode             uint32
	mtimeNS, ctimeNS int64
}

func keyOf(info fs.FileInfo) statKey {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return statKey{}
	}
	return statKey{
		valid:   true,
		dev:     uint64(st.Dev),
		ino:     uint64(st.Ino),
		size:    st.Size,
		mode:    uint32(st.Mode),
		mtimeNS: info.ModTime().UnixNano(),
		ctimeNS: ctimeNS(st),
	}
}
