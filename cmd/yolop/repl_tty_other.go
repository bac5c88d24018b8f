//go:build !unix

package main

import (
	"io"
	"os"
)

// pollableTTY returns the terminal itself where descriptors cannot be
// put in non-blocking mode; the pump then ends with the process.
func pollableTTY(f *os.File) (io.ReadCloser, func(), error) {
	return io.NopCloser(f), func() {}, nil
}
