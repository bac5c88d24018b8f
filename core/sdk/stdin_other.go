//go:build !unix

package sdk

import (
	"io"
	"os"
)

func stdinReader() io.Reader { return os.Stdin }
