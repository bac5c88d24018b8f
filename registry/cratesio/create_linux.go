//go:build linux

package cratesio

import (
	"io/fs"
	"runtime"
	"syscall"
)

// createFile creates name (one validated path component) in the directory
// h with O_EXCL|O_NOFOLLOW and writes data, using raw syscalls on the
// directory's descriptor: it skips the os.File bookkeeping (fcntl and
// netpoller registration) that otherwise costs more than the write for
// small files. The descriptor was opened through the tree's os.Root, and a
// single component created with O_EXCL cannot leave that directory.
func createFile(h *dirHandle, name string, perm fs.FileMode, data []byte) error {
	dirfd := int(h.dir.Fd())
	var fd int
	var err error
	for {
		fd, err = syscall.Openat(dirfd, name, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, uint32(perm))
		if err != syscall.EINTR {
			break
		}
	}
	runtime.KeepAlive(h.dir)
	if err != nil {
		return &fs.PathError{Op: "open", Path: name, Err: err}
	}
	for len(data) > 0 {
		n, werr := syscall.Write(fd, data)
		if werr == syscall.EINTR {
			continue
		}
		if werr != nil {
			syscall.Close(fd)
			return &fs.PathError{Op: "write", Path: name, Err: werr}
		}
		data = data[n:]
	}
	if err := syscall.Close(fd); err != nil {
		return &fs.PathError{Op: "close", Path: name, Err: err}
	}
	return nil
}
