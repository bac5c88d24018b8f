package main

import (
	"io"
	"os"

	"yolop.dev/internal/atomicfile"
)

// copyFile copies src to dst (atomically) with mode perm; `ext install
// --build` uses it to move the binary cargo built into the package.
func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return atomicfile.WriteFunc(dst, perm, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}
