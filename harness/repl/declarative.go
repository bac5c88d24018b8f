package repl

import (
	"strings"

	"yolop.dev/core/host"
)

// declarativeTransport is the transport of a package loaded through the
// declarative path (packaging/hostgrant.TransportDeclarative).
const declarativeTransport = "declarative"

// promptCommand reports whether name ("<ext>:<cmd>") is a command of a
// package loaded through the declarative path (a Claude Code plugin):
// its answer is a prompt for the model, run as the user's message, not
// a message for the user.
func promptCommand(s *host.Session, name string) bool {
	ext, _, ok := strings.Cut(name, ":")
	if !ok {
		return false
	}
	e, found := s.Extension(ext)
	return found && e.Grant().Server.Transport == declarativeTransport
}
