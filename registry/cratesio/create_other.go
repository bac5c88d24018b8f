//go:build !linux

package cratesio

import (
	"io/fs"
	"os"
)

// createFile creates name in the directory h with O_EXCL and writes data.
func createFile(h *dirHandle, name string, perm fs.FileMode, data []byte) error {
	f, err := h.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
