package jsonrpc

import (
	"encoding/json"
	"errors"
	"strings"

	"yolop.dev/core/internal/jsonscan"

	"yolop.dev/core/yep"
)

// envelope is a JSON-RPC message split into its raw top-level members. Its
// slices alias the line they were parsed from.
type envelope struct {
	jsonrpc, id, method, params, result, err []byte
}

func (e *envelope) hasMethod() bool { return e.method != nil }

var envelopeKeys = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

var (
	errNotObject   = errors.New("message is not a JSON object")
	errDuplicate   = errors.New("duplicate member in envelope")
	errCaseVariant = errors.New("case-variant envelope member")
	errTruncated   = errors.New("truncated message")
)

// parseEnvelope splits a JSON object into its envelope members without
// decoding the payloads. A member that appears twice, or whose name differs
// from an envelope member only by case, is refused, so a message has one
// meaning (encoding/json would match keys case-insensitively and let the
// last duplicate win). Input cut short (the prefix of an oversized
// message) returns the members seen before the cut with errTruncated.
func parseEnvelope(b []byte) (envelope, error) {
	var env envelope
	var fault error
	err := jsonscan.Members(b, func(key, val []byte) bool {
		slot := env.slot(key)
		if slot == nil {
			for _, k := range envelopeKeys {
				if len(k) == len(key) && strings.EqualFold(k, string(key)) {
					fault = errCaseVariant
					return false
				}
			}
			return true
		}
		if *slot != nil {
			fault = errDuplicate
			return false
		}
		*slot = val
		return true
	})
	switch {
	case fault != nil:
		return env, fault
	case errors.Is(err, jsonscan.ErrTruncated):
		return env, errTruncated
	case err != nil:
		return env, errNotObject
	}
	return env, nil
}

func (e *envelope) slot(key []byte) *[]byte {
	switch string(key) {
	case "jsonrpc":
		return &e.jsonrpc
	case "id":
		return &e.id
	case "method":
		return &e.method
	case "params":
		return &e.params
	case "result":
		return &e.result
	case "error":
		return &e.err
	}
	return nil
}

// validate checks the envelope's shape after a successful parse.
func (e *envelope) validate() *yep.Error {
	if e.jsonrpc != nil && string(e.jsonrpc) != `"2.0"` {
		return yep.Errorf(yep.CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if e.method != nil {
		if len(e.method) < 2 || e.method[0] != '"' {
			return yep.Errorf(yep.CodeInvalidRequest, `invalid request: "method" must be a string`)
		}
		if e.result != nil || e.err != nil {
			return yep.Errorf(yep.CodeInvalidRequest, `invalid request: a request cannot carry "result" or "error"`)
		}
	} else if (e.result == nil) == (e.err == nil) {
		return yep.Errorf(yep.CodeInvalidRequest, `invalid message: a response needs exactly one of "result" and "error"`)
	}
	if e.id != nil && string(e.id) != "null" {
		if err := yep.ValidateID(e.id); err != nil {
			return yep.Errorf(yep.CodeInvalidRequest, "invalid request: %v", err)
		}
	}
	return nil
}

// methodName decodes the method string.
func (e *envelope) methodName() (string, error) {
	raw := e.method[1 : len(e.method)-1]
	for _, c := range raw {
		if c == '\\' {
			var s string
			err := json.Unmarshal(e.method, &s)
			return s, err
		}
	}
	return yep.Intern(raw), nil
}
