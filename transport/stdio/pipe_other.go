//go:build !linux

package stdio

import "os"

// childPipe returns a pipe for one of the child's standard streams, the
// child reading from it when childReads: the child's end, then the host's.
func childPipe(childReads bool) (child, ours *os.File, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	if childReads {
		return r, w, nil
	}
	return w, r, nil
}
