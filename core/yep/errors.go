package yep

import (
	"encoding/json"
	"fmt"
)

// Error codes. YEP follows JSON-RPC conventions; 0 means unclassified.
const (
	CodeUnclassified   int64 = 0
	CodeParseError     int64 = -32700
	CodeInvalidRequest int64 = -32600
	CodeMethodNotFound int64 = -32601
	CodeInvalidParams  int64 = -32602
	CodeInternalError  int64 = -32603
	// CodeOverloaded is returned, retryable, when a peer has too many
	// requests in flight to take another.
	CodeOverloaded int64 = -32000
	// CodeNotInitialized answers a request sent before the handshake.
	CodeNotInitialized int64 = -32002
	// CodeCancelled resolves a request aborted by cancel.
	CodeCancelled int64 = -32800
	// CodeMessageTooLarge rejects a message over the peer's size limit.
	CodeMessageTooLarge int64 = -32001
	// CodeNotPermitted refuses a method the peer did not declare (D4).
	CodeNotPermitted int64 = -32003
)

// An Error is the error object of a JSON-RPC response. Only Message is
// required on the wire: a bare {"message": "..."} decodes with Code 0.
type Error struct {
	Code      int64           `json:"code"`
	Message   string          `json:"message"`
	Retryable bool            `json:"retryable,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string {
	if e.Code == CodeUnclassified {
		return e.Message
	}
	return fmt.Sprintf("%s (code %d)", e.Message, e.Code)
}

// Is reports whether target is an *Error with the same code, so sentinel
// errors match by code with errors.Is.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code int64, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Sentinel errors, matched by code with errors.Is.
var (
	ErrCancelled      = &Error{Code: CodeCancelled, Message: "cancelled"}
	ErrMethodNotFound = &Error{Code: CodeMethodNotFound, Message: "method not found"}
)
