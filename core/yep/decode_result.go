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
			return ignorable(key, &ok)
		}
		return true
	})
	if !ok || err != nil {
		return false
	}
	*r = out
	return true
}

// UnmarshalValidJSON decodes b, which must be valid JSON, into r exactly
// as json.Unmarshal would, as [ToolResult.UnmarshalValidJSON] does for a
// tool's result: the common shape of a hook's decision (decision and
// reason strings with no escapes, args, no result) by hand, anything else
// by json.Unmarshal.
func (r *HookFireResult) UnmarshalValidJSON(b []byte) error {
	if fastHookResult(b, r) {
		return nil
	}
	return json.Unmarshal(b, r)
}

// fastHookResult decodes the common shape of a hook decision into r,
// reporting false (with r untouched) when it needs the general decoder.
func fastHookResult(b []byte, r *HookFireResult) bool {
	out := *r
	ok := true
	err := jsonscan.Members(b, func(key, val []byte) bool {
		switch string(key) {
		case "decision":
			return plainInto(&out.Decision, val, &ok)
		case "reason":
			return plainInto(&out.Reason, val, &ok)
		case "args":
			out.Args = append(json.RawMessage(nil), val...)
			return true
		}
		// result (a *ToolResult to allocate and fill), an escaped key, or
		// one encoding/json would match case-insensitively: let it decide.
		ok = string(key) != "result" && bytes.IndexByte(key, '\\') < 0 && !jsonscan.MayFold(key)
		return ok
	})
	if !ok || err != nil {
		return false
	}
	*r = out
	return true
}

// UnmarshalValidJSON decodes b, which must be valid JSON, into p exactly
// as json.Unmarshal would: plain string members and the raw payload by
// hand, anything else by json.Unmarshal. A server decodes hook/fire with
// it, the connection having validated the message.
func (p *HookFireParams) UnmarshalValidJSON(b []byte) error {
	out := *p
	ok := true
	err := jsonscan.Members(b, func(key, val []byte) bool {
		var field *string
		switch string(key) {
		case "event":
			field = &out.Event
		case "toolName":
			field = &out.ToolName
		case "matcher":
			field = &out.Matcher
		case "traceparent":
			field = &out.TraceParent
		case "tracestate":
			field = &out.TraceState
		case "payload":
			out.Payload = append(json.RawMessage(nil), val...)
			return true
		default:
			// encoding/json matches keys to fields case-insensitively:
			// toolname is toolName to it, and any key with an upper-case
			// or non-ASCII letter may fold onto a field.
			if bytes.IndexByte(key, '\\') >= 0 || jsonscan.MayFold(key) || bytes.EqualFold(key, []byte("toolName")) {
				ok = false
				return false
			}
			return true
		}
		return plainInto(field, val, &ok)
	})
	if !ok || err != nil {
		return json.Unmarshal(b, p)
	}
	*p = out
	return nil
}

// UnmarshalValidJSON decodes b, which must be valid JSON, into p exactly
// as json.Unmarshal would: a plain tool_call_id and the raw args by hand;
// a result, or anything unusual, by json.Unmarshal.
func (p *HookPayload) UnmarshalValidJSON(b []byte) error {
	out := *p
	ok := true
	err := jsonscan.Members(b, func(key, val []byte) bool {
		switch string(key) {
		case "tool_call_id":
			return plainInto(&out.ToolCallID, val, &ok)
		case "args":
			out.Args = append(json.RawMessage(nil), val...)
			return true
		}
		if string(key) == "result" || bytes.IndexByte(key, '\\') >= 0 || jsonscan.MayFold(key) {
			ok = false
			return false
		}
		return true
	})
	if !ok || err != nil {
		return json.Unmarshal(b, p)
	}
	*p = out
	return nil
}

// plainInto stores the plain JSON string val in *field (null leaves it as
// it was, as json.Unmarshal does), or clears *ok and stops the scan when
// val needs the general decoder.
func plainInto(field *string, val []byte, ok *bool) bool {
	if string(val) == "null" {
		return true
	}
	s, _, plain := jsonscan.PlainString(val, 0)
	if !plain {
		*ok = false
		return false
	}
	*field = string(s)
	return true
}
