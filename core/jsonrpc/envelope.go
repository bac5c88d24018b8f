package jsonrpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
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
	errNotObject = errors.New("message is not a JSON object")
	errTruncated = errors.New("truncated message")
)

// A memberFault is an envelope member that would give a message more than
// one meaning: a duplicate, or a case variant of an envelope member.
type memberFault struct {
	kind string // "duplicate" or "case-variant"
	key  string // the member's raw name
}

func (f *memberFault) Error() string { return fmt.Sprintf("%s member %q", f.kind, f.key) }

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
					fault = &memberFault{kind: "case-variant", key: string(key)}
					return false
				}
			}
			return true
		}
		if *slot != nil {
			fault = &memberFault{kind: "duplicate", key: string(key)}
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

// validate checks the shape of a request or notification (an envelope with
// a method) after a successful parse.
func (e *envelope) validate() *yep.Error {
	if e.jsonrpc != nil && string(e.jsonrpc) != `"2.0"` {
		return yep.Errorf(yep.CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if len(e.method) < 2 || e.method[0] != '"' {
		return yep.Errorf(yep.CodeInvalidRequest, `invalid request: "method" must be a string`)
	}
	if e.result != nil || e.err != nil {
		return yep.Errorf(yep.CodeInvalidRequest, `invalid request: a request cannot carry "result" or "error"`)
	}
	if e.id != nil && string(e.id) != "null" {
		if err := yep.ValidateID(e.id); err != nil {
			return yep.Errorf(yep.CodeInvalidRequest, "invalid request: %v", err)
		}
	}
	return nil
}

// responseFault says why an envelope without a method is not a valid
// response, or returns "" when it is one. A missing "jsonrpc" is refused
// like a wrong one: a response cannot be told from a stray object without
// it.
func (e *envelope) responseFault() string {
	switch {
	case e.jsonrpc == nil:
		return `no "jsonrpc" member; a response carries "jsonrpc":"2.0"`
	case string(e.jsonrpc) != `"2.0"`:
		return fmt.Sprintf(`"jsonrpc" is %s, not "2.0"`, truncate(e.jsonrpc, 40))
	case e.result != nil && e.err != nil:
		return "both result and error"
	case e.result == nil && e.err == nil:
		return "neither result nor error"
	}
	if e.id != nil && string(e.id) != "null" {
		if yep.ValidateID(e.id) != nil {
			return fmt.Sprintf(`"id" is %s, not a string or an integer; send the request's id back exactly as it came`, truncate(e.id, 40))
		}
	}
	return ""
}

// callID returns the call a response id names: an integer, or a number
// equal to one (2.0, 2e0 and 20e-1 all name call 2), so that a peer that
// echoes ids as floats, as Python's json.dumps(2.0) does, has its calls
// fail at once rather than wait for their timeout. Past 2^53 a float is
// not exact, so such a number names no call.
func callID(raw []byte) (int64, bool) {
	if n, ok := yep.ID(raw).Int64(); ok {
		return n, true
	}
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// reasonBatch is the violation of a line holding a JSON array.
const reasonBatch = "a batch (JSON array) of messages; YEP sends one object per line"

// rejectedResponseIDs returns the ids named by the responses in a line the
// connection rejected, so the calls they answer can fail at once instead of
// waiting for their timeout. Every member spelled "id" in any letter case
// counts (the line has no single meaning, so each candidate is taken); a
// member spelled "method" in any case makes the object a request, whose id
// lives in the peer's id space and names none of this side's calls. For a
// batch array, each object element is judged on its own.
func rejectedResponseIDs(line []byte) [][]byte {
	i := jsonscan.SkipWS(line, 0)
	if i >= len(line) {
		return nil
	}
	switch line[i] {
	case '{':
		return responseIDs(line, nil)
	case '[':
		var ids [][]byte
		i++
		for {
			i = jsonscan.SkipWS(line, i)
			if i >= len(line) || line[i] == ']' {
				return ids
			}
			if line[i] == ',' {
				i++
				continue
			}
			end := jsonscan.SkipValue(line, i)
			if end < 0 {
				return ids
			}
			if line[i] == '{' {
				ids = responseIDs(line[i:end], ids)
			}
			i = end
		}
	}
	return nil
}

// responseIDs appends the id candidates of one object to ids, unless the
// object is a request.
func responseIDs(obj []byte, ids [][]byte) [][]byte {
	var found [][]byte
	request := false
	_ = jsonscan.Members(obj, func(key, val []byte) bool {
		switch {
		case strings.EqualFold(string(key), "method"):
			request = true
			return false
		case strings.EqualFold(string(key), "id"):
			found = append(found, val)
		}
		return true
	})
	if request {
		return ids
	}
	return append(ids, found...)
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
