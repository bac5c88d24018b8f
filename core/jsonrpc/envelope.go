package jsonrpc

import (
	"encoding/json"
	"errors"
	"strings"

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
// last duplicate win). With partial set, the input may be cut short: the
// members seen before the cut are returned with errTruncated.
func parseEnvelope(b []byte, partial bool) (envelope, error) {
	var env envelope
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return env, errNotObject
	}
	i++
	for {
		i = skipWS(b, i)
		if i >= len(b) {
			return env, errTruncated
		}
		if b[i] == '}' {
			return env, nil
		}
		if b[i] == ',' {
			i = skipWS(b, i+1)
		}
		if i >= len(b) || b[i] != '"' {
			if i >= len(b) {
				return env, errTruncated
			}
			return env, errNotObject
		}
		kend := skipString(b, i)
		if kend < 0 {
			return env, errTruncated
		}
		key := b[i+1 : kend-1]
		i = skipWS(b, kend)
		if i >= len(b) {
			return env, errTruncated
		}
		if b[i] != ':' {
			return env, errNotObject
		}
		i = skipWS(b, i+1)
		vend := skipValue(b, i)
		if vend < 0 {
			return env, errTruncated
		}
		val := b[i:vend]
		i = vend
		slot := env.slot(key)
		if slot == nil {
			for _, k := range envelopeKeys {
				if len(k) == len(key) && strings.EqualFold(k, string(key)) {
					return env, errCaseVariant
				}
			}
			continue
		}
		if *slot != nil {
			return env, errDuplicate
		}
		*slot = val
	}
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

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i], or
// -1 if it is cut short.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index just past the JSON value starting at b[i],
// or -1 if it is cut short. The input has been validated, or is a prefix of
// a message, so the scan only tracks strings and nesting.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = skipString(b, j)
				if j < 0 {
					return -1
				}
				j--
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return j
			}
			j++
		}
		return -1
	}
}
