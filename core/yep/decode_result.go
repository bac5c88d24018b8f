package yep

import (
	"bytes"
	"encoding/json"

	"yolop.dev/core/internal/jsonscan"
)

// UnmarshalValidJSON decodes b, which must be valid JSON, into r exactly
// as json.Unmarshal would, skipping the validation pass json.Unmarshal
// makes first. A connection that has validated the whole message calls it
// (core/jsonrpc's decodeReply) so a tool's output is scanned once, not
// twice. The common shape — members named exactly, an output string with
// no escapes — is decoded by hand; anything else goes to json.Unmarshal.
func (r *ToolResult) UnmarshalValidJSON(b []byte) error {
	if fastToolResult(b, r) {
		return nil
	}
	return json.Unmarshal(b, r)
}

// fastToolResult decodes the common shape of a tool result into r,
// reporting false (with r untouched) when it needs the general decoder.
func fastToolResult(b []byte, r *ToolResult) bool {
	out := *r
	ok := true
	err := jsonscan.Members(b, func(key, val []byte) bool {
		switch string(key) {
		case "output":
			if string(val) == "null" {
				return true // json.Unmarshal leaves the field as it was
			}
			s, _, plain := jsonscan.PlainString(val, 0)
			if !plain {
				ok = false
				return false
			}
			out.Output = string(s)
		case "is_error":
			switch string(val) {
			case "true":
				out.IsError = true
			case "false":
				out.IsError = false
			case "null":
			default:
				ok = false // a type error: json.Unmarshal words it
				return false
			}
		case "data":
			out.Data = append(json.RawMessage(nil), val...)
		default:
			// An escaped key, or one encoding/json would match to a field
			// case-insensitively: let it decide.
			if bytes.IndexByte(key, '\\') >= 0 || jsonscan.MayFold(key) {
				ok = false
				return false
			}
		}
		return true
	})
	if !ok || err != nil {
		return false
	}
	*r = out
	return true
}
