package sdk

import "errors"

// Errors returned by the host-facing calls ([Server.Status], [Server.Ask],
// [ToolCall.Update], …), matched with errors.Is.
var (
	// ErrNotDeclared reports a server-to-host method the server did not opt
	// into: set the matching field of [Info] (Status, UIAsk, Log), or
	// register the tool with [Server.StreamingTool] to send tool/update.
	ErrNotDeclared = errors.New("not declared by this server")
	// ErrNotAdvertised reports a server-to-host method the host did not
	// advertise in initialize.capabilities; YEP forbids sending it. The
	// host may not support it (e.g. no status bar in print mode): carry on
	// without it.
	ErrNotAdvertised = errors.New("not advertised by the host")
	// ErrNotInitialized reports a host-facing call made before the
	// initialize handshake completed (or after the connection ended).
	ErrNotInitialized = errors.New("the initialize handshake has not completed")
)
