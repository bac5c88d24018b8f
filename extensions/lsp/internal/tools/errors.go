package tools

import "errors"

// Errors of the tools, matched with errors.Is. Both are failures the
// agent reads and can fix.
var (
	// ErrInvalidArgs marks a tool call whose arguments are wrong; the message
	// says which and how to fix them.
	ErrInvalidArgs = errors.New("invalid arguments")

	// ErrUnsafeEdit marks a workspace edit refused before anything was
	// written: a file outside the workspace root, a file that changed since the
	// edit was computed, a resource operation, or overlapping edits.
	ErrUnsafeEdit = errors.New("edit refused")
)
