package yep

import "time"

// Limits and defaults that every host applies to an extension. They are
// not negotiated: the manifest is validated against them at install, and
// the host applies them to what the handshake declares.

// MaxNeverDefer is the never_defer budget of one extension: at most this
// many of its tools have their schema always in the agent's context; the
// rest are deferred behind the host's tool_search. A manifest declaring
// more is accepted with a warning.
const MaxNeverDefer = 8

// DefaultToolTimeout bounds a tool call when neither the tool (its
// manifest timeout_ms) nor the user's session sets a limit.
const DefaultToolTimeout = 10 * time.Minute
