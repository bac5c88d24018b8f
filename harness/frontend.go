package harness

import (
	"errors"
	"io"
	"os"

	"github.com/hashicorp/go-hclog"
)

// NewLogger returns a front-end's logger named name, writing to out at
// the level [LogEnv] sets (warn when unset). A value that is not a level
// logs at warn and is returned as an error, for the front-end to print
// as a warning before it carries on.
func NewLogger(name string, out io.Writer) (hclog.Logger, error) {
	level, err := LogLevel(os.Getenv(LogEnv), hclog.Warn)
	return hclog.New(&hclog.LoggerOptions{Name: name, Output: out, Level: level}), err
}

// ExitStatus is the process exit status of a command that ended with
// err: 0 for nil, the code of an error that carries one (it has an
// ExitCode() int method, as an *exec.ExitError has), else 1.
func ExitStatus(err error) int {
	if err == nil {
		return 0
	}
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return 1
}
