package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"yolop.dev/core/yep"
)

// The errors of a [Session] and an [Extension] match, with errors.Is, one
// of the sentinels below, so a front-end can tell them apart and add its
// own advice (the command that lists tools, say) without parsing text.
// The text names the extension and the tool, command or state, and the
// error also matches its cause, if it has one.

// Lookup errors: the session has nothing of that name.
var (
	// ErrNoSuchTool is matched by the error of [Session.CallTool] for a
	// name that is not a tool of the session.
	ErrNoSuchTool = errors.New("no such tool")
	// ErrNoSuchCommand is matched by the error of [Session.ExecuteCommand]
	// and [Extension.ExecuteCommand] for a name that is not a command of
	// the session or the extension.
	ErrNoSuchCommand = errors.New("no such command")
	// ErrNoSuchExtension is matched by the error of [Session.Reload] for
	// a name that is not an extension of the session.
	ErrNoSuchExtension = errors.New("no such extension")
	// ErrNoSuchSkill is matched by the error of [Session.ReadSkill] for a
	// name that is not a skill of the session's active capabilities.
	ErrNoSuchSkill = errors.New("no such skill")
)

// Approval errors: the grant or the handshake does not cover the call.
var (
	// ErrToolNotApproved is matched by the error of [Extension.CallTool]
	// for a tool the extension's approved manifest does not declare.
	ErrToolNotApproved = errors.New("tool not approved")
	// ErrToolNotServed is matched by the error of [Extension.CallTool] for
	// a tool the manifest approves but the server's handshake did not
	// declare.
	ErrToolNotServed = errors.New("tool not served")
	// ErrInvalidArgs is matched by the error of [Session.CallTool] for
	// arguments that fail [SessionOptions.CheckArgs]: nothing was called.
	ErrInvalidArgs = errors.New("invalid tool arguments")
)

// State errors: the extension refuses calls. They are matched by the error
// of every call that needs the server: tools, hooks, commands and
// [Extension.Start].
var (
	// ErrExtensionOff means the extension cannot run: its server speaks
	// another protocol major. The error also matches why (a
	// *yep.VersionError).
	ErrExtensionOff = errors.New("extension is off")
	// ErrExtensionDegraded means the extension's server failed to start,
	// crashed too often or broke the protocol, and is not respawned until
	// the extension is reloaded. The error also matches why (the start
	// error, the last crash or a *jsonrpc.ProtocolError).
	ErrExtensionDegraded = errors.New("extension is degraded")
	// ErrExtensionClosed means the extension, or its session, was closed.
	ErrExtensionClosed = errors.New("extension closed")
)

// Start errors.
var (
	// ErrHandshakeTimeout means a server did not answer initialize within
	// [ExtensionOptions.HandshakeTimeout]. The extension is then degraded.
	ErrHandshakeTimeout = errors.New("handshake timed out")
)

// Call errors.
var (
	// ErrToolTimeout is matched, with errors.Is, by the error of a tool
	// call that ran out of time: a *[ToolTimeoutError].
	ErrToolTimeout = errors.New("tool call timed out")
	// ErrHookTimeout is matched by the error of [Extension.FireHook] when
	// the subscription's timeout expired. It is not a cancel: it never
	// matches yep.ErrCancelled or a context error.
	ErrHookTimeout = errors.New("hook timed out")
	// ErrHookDecision is matched by the error of [Extension.FireHook] when
	// the server answered a decision other than allow, block or mutate.
	// It is a hook failure, so the subscription's on_error applies.
	ErrHookDecision = errors.New("unknown hook decision")
	// ErrHookBlocked is matched by the error of a tool call a pre_tool_use
	// hook blocked: a *[HookBlockedError].
	ErrHookBlocked = errors.New("blocked by a hook")
	// ErrApprovalDenied is matched by the error of [Session.CallTool] for
	// a call the user or the user's policy denied: a
	// *[ApprovalDeniedError]. Nothing was called.
	ErrApprovalDenied = errors.New("tool call denied")
)

// A ToolTimeoutError reports a tool call that ran longer than its limit
// (see [SessionOptions.ToolTimeout]). It is not a cancel: it matches
// [ErrToolTimeout] and [context.DeadlineExceeded], never yep.ErrCancelled
// or context.Canceled. The server was sent cancel.
type ToolTimeoutError struct {
	// Tool is the session name of the tool, and Capability the capability
	// that serves it ("ext:<name>").
	Tool, Capability string
	// Timeout is the limit that expired.
	Timeout time.Duration
}

func (e *ToolTimeoutError) Error() string {
	return fmt.Sprintf("tool %q timed out after %s", e.Tool, e.Timeout)
}

// Unwrap returns [ErrToolTimeout] and [context.DeadlineExceeded].
func (e *ToolTimeoutError) Unwrap() []error {
	return []error{ErrToolTimeout, context.DeadlineExceeded}
}

// A HookBlockedError reports a tool call blocked by a pre_tool_use hook:
// the hook decided to block, or it failed and its on_error is block. It
// matches [ErrHookBlocked].
type HookBlockedError struct {
	Capability, Tool, Reason string
}

func (e *HookBlockedError) Error() string {
	return fmt.Sprintf("tool %q blocked by %s: %s", e.Tool, e.Capability, e.Reason)
}

// Unwrap returns [ErrHookBlocked].
func (e *HookBlockedError) Unwrap() error { return ErrHookBlocked }

// An ApprovalDeniedError reports a tool call that was denied before it
// ran. It matches [ErrApprovalDenied].
type ApprovalDeniedError struct {
	// Tool is the session name of the tool; Capability, Extension and
	// Version name what serves it (Extension and Version empty for a
	// built-in or contributed tool).
	Tool, Capability, Extension, Version string
	// By is "policy" (the user's policy denies the tool) or "user" (the
	// user, or the approver, answered anything but allow).
	By string
	// Reason says why, as a person reads it.
	Reason string
}

func (e *ApprovalDeniedError) Error() string {
	of := who(e.Extension, e.Version, e.Capability)
	if e.By == yep.ApprovalByPolicy {
		return fmt.Sprintf("tool %q of %s was denied by your policy (settings.toml [approval]); change the rule there to run it", e.Tool, of)
	}
	reason := e.Reason
	if reason == "" {
		reason = "the user denied the call"
	}
	return fmt.Sprintf("tool %q of %s was not run: %s", e.Tool, of, reason)
}

// Unwrap returns [ErrApprovalDenied].
func (e *ApprovalDeniedError) Unwrap() error { return ErrApprovalDenied }

// A hostError is an error whose text is written for a person, naming the
// extension and what was asked of it, and which matches its sentinel and
// its cause with errors.Is and errors.As.
type hostError struct {
	sentinel error
	text     string
	cause    error
}

// newError returns an error matching sentinel and cause (which may be
// nil), with the text format and args make.
func newError(sentinel, cause error, format string, args ...any) error {
	return &hostError{sentinel: sentinel, text: fmt.Sprintf(format, args...), cause: cause}
}

func (e *hostError) Error() string { return e.text }

// Unwrap returns the sentinel and the cause.
func (e *hostError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.sentinel}
	}
	return []error{e.sentinel, e.cause}
}
