package sdk

import (
	"bytes"
	"encoding/json"
	"errors"

	"yolop.dev/core/internal/jsonscan"
	"yolop.dev/core/yep"
)

// The tool/call path is the hot one: its params are decoded and its result
// encoded by hand rather than by reflection (profiles showed encoding/json
// as the largest per-call cost after the scheduler). Anything unusual falls
// back to encoding/json, so the behaviour is the same.

var errNotObject = errors.New("params must be a JSON object")

// decodeToolCall decodes tool/call params. The connection has already
// checked that params is valid JSON.
func decodeToolCall(params json.RawMessage, p *yep.ToolCallParams) error {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	if ok := scanToolCall(params, p); ok {
		return nil
	}
	*p = yep.ToolCallParams{}
	if err := json.Unmarshal(params, p); err != nil {
		return err
	}
	if string(p.Args) == "null" {
		p.Args = nil
	}
	return nil
}

// scanToolCall decodes the common shape of tool/call params — an object
// whose known members are plain strings and whose args are any value —
// reporting false when the input needs the general decoder (escaped
// strings, a known member of another type, a duplicate member).
func scanToolCall(b []byte, p *yep.ToolCallParams) bool {
	var seen uint8
	ok := true
	err := jsonscan.Members(b, func(key, val []byte) bool {
		if bytes.IndexByte(key, '\\') >= 0 {
			ok = false // an escaped key: let encoding/json decide
			return false
		}
		var dst *string
		var bit uint8
		switch string(key) {
		case "tool_call_id":
			dst, bit = &p.ToolCallID, 1
		case "name":
			dst, bit = &p.Name, 2
		case "session_id":
			dst, bit = &p.SessionID, 4
		case "traceparent":
			dst, bit = &p.TraceParent, 16
		case "tracestate":
			dst, bit = &p.TraceState, 32
		case "args":
			if seen&8 != 0 {
				ok = false
				return false
			}
			seen |= 8
			if string(val) != "null" {
				p.Args = json.RawMessage(val)
			}
			return true
		default:
			// encoding/json matches keys case-insensitively; let it.
			if len(key) <= 3*len("tool_call_id") && jsonscan.MayFold(key) { // 3: a folded rune is up to 3 bytes
				ok = false
				return false
			}
			return true
		}
		if seen&bit != 0 {
			ok = false
			return false
		}
		seen |= bit
		if string(val) == "null" {
			return true
		}
		s, _, plain := jsonscan.PlainString(val, 0)
		if !plain {
			ok = false
			return false
		}
		*dst = string(s)
		return true
	})
	return ok && err == nil
}

// encodeToolResult encodes a tool result as the response's raw result, in
// the same form encoding/json produces (without HTML escaping).
func encodeToolResult(r yep.ToolResult) json.RawMessage {
	b := make([]byte, 0, len(r.Output)+len(r.Data)+48)
	b = append(b, `{"output":`...)
	b = jsonscan.AppendString(b, r.Output)
	if r.IsError {
		b = append(b, `,"is_error":true`...)
	}
	if len(r.Data) > 0 {
		if !jsonscan.Valid(r.Data) {
			// Let the encoder report it as it would have.
			raw, err := json.Marshal(r)
			if err != nil {
				return encodeToolResult(yep.ToolResult{Output: "tool result: invalid data: " + err.Error(), IsError: true})
			}
			return raw
		}
		b = append(b, `,"data":`...)
		b = append(b, r.Data...)
	}
	return append(b, '}')
}
