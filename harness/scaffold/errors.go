package scaffold

import "errors"

// Errors of [New], matched with errors.Is. Each is returned before
// anything is written.
var (
	// ErrInvalidName means the extension name, or a tool, hook or command
	// name, breaks the manifest's naming rules.
	ErrInvalidName = errors.New("invalid name")
	// ErrUnknownLang means the language is not one of [Langs].
	ErrUnknownLang = errors.New("unknown language")
	// ErrUnknownHook means a hook event is not one of yep.HookEvents, or
	// its matcher is not a tool-name glob.
	ErrUnknownHook = errors.New("unknown hook")
	// ErrExists means the target directory already exists.
	ErrExists = errors.New("target exists")
	// ErrInvalidOptions means the options contradict each other or name
	// something twice.
	ErrInvalidOptions = errors.New("invalid scaffold options")
)

// ErrBuild is matched by the error of [Result.Build] when a build step
// failed; the error carries the step and its output.
var ErrBuild = errors.New("build step failed")
