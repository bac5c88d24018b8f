package atomicfile

import (
	"errors"
	"syscall"
)

// isUnsupported reports a sync refused because the file system (or the
// platform, for directories on Windows) cannot do it.
func isUnsupported(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, errors.ErrUnsupported)
}
