package goplugin

import "errors"

// Errors returned by [Transport.Start], wrapped with the extension name and
// the details; match them with [errors.Is]. Start also returns the errors
// of transport/stdio's command resolution (stdio.ErrCommandNotFound, …).
var (
	// ErrNoName means the spec has no extension name to run it under.
	ErrNoName = errors.New("server spec has no extension name")
	// ErrBadChecksum means [core.ServerSpec].Checksum is not a hex SHA-256.
	ErrBadChecksum = errors.New("checksum is not a hex SHA-256")
	// ErrChecksumMismatch means the executable's SHA-256 differs from the
	// one its approval pinned: it is refused before it runs. The error
	// also matches go-plugin's ErrChecksumsDoNotMatch.
	ErrChecksumMismatch = errors.New("executable does not match its approved SHA-256")
	// ErrHandshake means the server did not complete go-plugin's
	// handshake: it printed something else first, exited, answered with
	// another magic cookie or protocol version, or did not answer in time.
	ErrHandshake = errors.New("go-plugin handshake failed")
)
