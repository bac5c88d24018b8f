package stdio

import "errors"

// Errors returned by [Transport.Start]. They are wrapped with the extension
// name and the details; match them with [errors.Is].
var (
	// ErrNoName means the spec has no extension name to run it under.
	ErrNoName = errors.New("server spec has no extension name")
	// ErrNoCommand means the spec names no command.
	ErrNoCommand = errors.New("no command given")
	// ErrCommandNotFound means the command is neither in the package's bin/
	// directory nor on the server's PATH.
	ErrCommandNotFound = errors.New("command not found")
	// ErrNotExecutable means the command exists but is a directory or lacks
	// execute permission.
	ErrNotExecutable = errors.New("command is not executable")
	// ErrCommandOutsidePackage means a relative command path climbs out of
	// the package directory with "..".
	ErrCommandOutsidePackage = errors.New("command path leaves the package directory")
	// ErrInvalidEnv means a variable in the spec's Env has an unusable name
	// or value.
	ErrInvalidEnv = errors.New("invalid environment variable")
	// ErrUnsupportedPlatform means this operating system has no process
	// groups to run servers in.
	ErrUnsupportedPlatform = errors.New("stdio transport is not supported on this platform")
)
