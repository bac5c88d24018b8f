package jsonrpc

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"yolop.dev/core/internal/json"
	"yolop.dev/core/yep"
)

// envelope is a JSON-RPC message with its payloads left raw. A member that
// is absent is nil; one that is null holds "null".
type envelope struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

func (e *envelope) hasMethod() bool { return e.Method != nil }

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

// parseEnvelope decodes a JSON object into its envelope members, walking
// it with encoding/json's tokenizer (see members): encoding/json's struct
// decoding would let the last of two duplicates win. A member that
// appears twice, or whose name differs from an envelope member only by
// case, is refused, so a message has one meaning. Input cut short (the
// prefix of an oversized message) returns the members seen before the cut
// with errTruncated.
func parseEnvelope(b []byte) (envelope, error) {
	var env envelope
	vals := [...]*json.RawMessage{&env.JSONRPC, &env.ID, &env.Method, &env.Params, &env.Result, &env.Error} // as envelopeKeys
	var fault error
	err := members(b, func(key string, val json.RawMessage) bool {
		for i, k := range envelopeKeys {
			switch {
			case key == k && *vals[i] != nil: // a member's value is never empty
				fault = &memberFault{kind: "duplicate", key: key}
			case key == k:
				*vals[i] = val
			case strings.EqualFold(key, k):
				fault = &memberFault{kind: "case-variant", key: key}
			}
		}
		return fault == nil
	})
	switch {
	case fault != nil:
		return env, fault
	case errors.Is(err, io.ErrUnexpectedEOF):
		return env, errTruncated
	case err != nil:
		return env, errNotObject
	}
	return env, nil
}

// members calls fn with each top-level member of the JSON object b, in
// order, until fn returns false. Its values are complete JSON values; a
// value cut short by the end of b is not passed, and members then returns
// io.ErrUnexpectedEOF. Input that is not an object is an error.
//
// It walks the object with encoding/json's tokenizer rather than decoding
// it into a struct or map, because those keep one of two duplicate
// members and cannot read a message cut short: what the envelope checks
// and the id-finder need.
func members(b []byte, fn func(key string, val json.RawMessage) bool) error {
	dec := stdjson.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return eofIsTruncated(err)
	}
	if tok != stdjson.Delim('{') {
		return errNotObject
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return eofIsTruncated(err)
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return eofIsTruncated(err)
		}
		if !fn(key, val) {
			return nil
		}
	}
	if _, err := dec.Token(); err != nil {
		return eofIsTruncated(err)
	}
	return nil
}

func eofIsTruncated(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// validate checks the shape of a request or notification (an envelope with
// a method) after a successful parse.
func (e *envelope) validate() *yep.Error {
	if e.JSONRPC != nil && string(e.JSONRPC) != `"2.0"` {
		return yep.Errorf(yep.CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if len(e.Method) < 2 || e.Method[0] != '"' {
		return yep.Errorf(yep.CodeInvalidRequest, `invalid request: "method" must be a string`)
	}
	if e.Result != nil || e.Error != nil {
		return yep.Errorf(yep.CodeInvalidRequest, `invalid request: a request cannot carry "result" or "error"`)
	}
	if e.ID != nil && string(e.ID) != "null" {
		if err := yep.ValidateID(e.ID); err != nil {
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
	case e.JSONRPC == nil:
		return `no "jsonrpc" member; a response carries "jsonrpc":"2.0"`
	case string(e.JSONRPC) != `"2.0"`:
		return fmt.Sprintf(`"jsonrpc" is %s, not "2.0"`, truncate(e.JSONRPC, 40))
	case e.Result != nil && e.Error != nil:
		return "both result and error"
	case e.Result == nil && e.Error == nil:
		return "neither result nor error"
	}
	if e.ID != nil && string(e.ID) != "null" {
		if yep.ValidateID(e.ID) != nil {
			return fmt.Sprintf(`"id" is %s, not a string or an integer; send the request's id back exactly as it came`, truncate(e.ID, 40))
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

// isArray reports whether the JSON value b is an array.
func isArray(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '['
}

// rejectedResponseIDs returns the ids named by the responses in a line the
// connection rejected, so the calls they answer can fail at once instead of
// waiting for their timeout. Every member spelled "id" in any letter case
// counts (the line has no single meaning, so each candidate is taken); a
// member spelled "method" in any case makes the object a request, whose id
// lives in the peer's id space and names none of this side's calls. For a
// batch array, each object element is judged on its own.
func rejectedResponseIDs(line []byte) [][]byte {
	if !isArray(line) {
		return responseIDs(line, nil)
	}
	var elems []json.RawMessage
	if json.Unmarshal(line, &elems) != nil {
		return nil
	}
	var ids [][]byte
	for _, e := range elems {
		ids = responseIDs(e, ids)
	}
	return ids
}

// responseIDs appends the id candidates of one object to ids, unless the
// object is a request. A value that is not an object has none.
func responseIDs(obj []byte, ids [][]byte) [][]byte {
	var found [][]byte
	request := false
	_ = members(obj, func(key string, val json.RawMessage) bool {
		switch {
		case strings.EqualFold(key, "method"):
			request = true
			return false
		case strings.EqualFold(key, "id"):
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
	var s string
	err := json.Unmarshal(e.Method, &s)
	return s, err
}
