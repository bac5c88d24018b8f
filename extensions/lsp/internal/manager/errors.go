package manager

import (
	"errors"
	"fmt"
)

// Errors of the manager, matched with errors.Is.
var (
	// ErrNoServer means no configured server handles a file's extension.
	ErrNoServer = errors.New("no language server is configured for this file type")
	// ErrServerNotFound means a server's executable is not installed.
	ErrServerNotFound = errors.New("language server not found")
	// ErrClosed means the manager has been shut down.
	ErrClosed = errors.New("lsp manager is shut down")
)

// A NotFoundError reports a missing server executable with the guidance
// to install it. It matches ErrServerNotFound.
type NotFoundError struct {
	Key     string // the server key, e.g. "go"
	Command string // the executable, e.g. "gopls"
	Install string // the install command, may be empty
}

func (e *NotFoundError) Error() string {
	msg := e.Command + " not found"
	if e.Install != "" {
		msg += " — install with `" + e.Install + "`"
	} else {
		msg += fmt.Sprintf(" — install it on PATH or set servers.%s.command in the lsp extension's config", e.Key)
	}
	return msg
}

// Is matches ErrServerNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrServerNotFound }

// An ExitedError is the cause pending calls fail with when a server's
// connection ends: it names the server and says how the process ended.
type ExitedError struct {
	Server string // the executable name, e.g. "gopls"
	Detail string // exit status or read error
}

func (e *ExitedError) Error() string {
	return fmt.Sprintf("language server %s stopped (%s); it is restarted on the next call", e.Server, e.Detail)
}
