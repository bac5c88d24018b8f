package yep

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"yolop.dev/core/internal/jsonscan"
)

// UnmarshalValidJSON decodes b, which must be valid JSON, into r exactly
// as json.Unmarshal would. The host decodes every server's handshake with
// it (core/jsonrpc's decodeReply calls it), once per start, in a process
// where ten servers may be starting at once: the common shape (members
// named exactly, plain strings, capability params kept raw) is decoded by
// hand, and anything else by json.Unmarshal.
func (r *InitializeResult) UnmarshalValidJSON(b []byte) error {
	if fastInitializeResult(b, r) {
		return nil
	}
	return json.Unmarshal(b, r)
}

// fastInitializeResult decodes the common shape of a handshake into r,
// reporting false (with r untouched) when it needs the general decoder.
func fastInitializeResult(b []byte, r *InitializeResult) bool {
	if r.Capabilities != nil || r.CapabilityParams != nil {
		return false // json.Unmarshal decodes into what is there
	}
	out := *r
	ok := true
	var seenCaps, seenParams bool
	err := jsonscan.Members(b, func(key, val []byte) bool {
		switch string(key) {
		case "protocol_version":
			return plainInto(&out.ProtocolVersion, val, &ok)
		case "name":
			return plainInto(&out.Name, val, &ok)
		case "version":
			return plainInto(&out.Version, val, &ok)
		case "capabilities":
			// A second one would be decoded into the first's array.
			ok = !seenCaps && plainStrings(val, &out.Capabilities)
			seenCaps = true
			return ok
		case "capability_params":
			ok = !seenParams && rawMembers(val, &out.CapabilityParams)
			seenParams = true
			return ok
		}
		return ignorable(key, &ok)
	})
	if !ok || err != nil {
		return false
	}
	*r = out
	return true
}

// plainStrings decodes val, an array of plain strings or null, into a
// fresh *dst (null leaves it nil), reporting false for anything else.
func plainStrings(val []byte, dst *Capabilities) bool {
	if string(val) == "null" {
		return true
	}
	return elements(val, (*[]string)(dst), func(v []byte, e *string) bool {
		s, _, plain := jsonscan.PlainString(v, 0)
		*e = string(s)
		return plain
	})
}

// rawMembers decodes val, an object or null, into a fresh map of its raw
// members (null leaves it nil), reporting false for anything else or for
// a key that json.Unmarshal would unescape or repair.
func rawMembers(val []byte, dst *CapabilityParams) bool {
	if string(val) == "null" {
		return true
	}
	out := CapabilityParams{}
	ok := true
	err := jsonscan.Members(val, func(key, v []byte) bool {
		if bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key) {
			ok = false
			return false
		}
		out[string(key)] = append(json.RawMessage(nil), v...)
		return true
	})
	if !ok || err != nil {
		return false
	}
	*dst = out
	return true
}

// decodeKnown decodes raw into v, for the params the host's clamp reads
// (tools, hooks, commands and the prompt), when raw is valid JSON of the
// common shape, reporting false when json.Unmarshal must decide.
func decodeKnown(raw []byte, v any) bool {
	switch v := v.(type) {
	case *[]ToolDecl:
		return *v == nil && jsonscan.Valid(raw) && objects(raw, v, func(key, val []byte, d *ToolDecl, ok *bool) bool {
			if string(key) == "name" {
				return plainInto(&d.Name, val, ok)
			}
			return ignorable(key, ok)
		})
	case *[]CommandDecl:
		return *v == nil && jsonscan.Valid(raw) && objects(raw, v, func(key, val []byte, d *CommandDecl, ok *bool) bool {
			switch string(key) {
			case "name":
				return plainInto(&d.Name, val, ok)
			case "description":
				return plainInto(&d.Description, val, ok)
			}
			return ignorable(key, ok)
		})
	case *[]HookSubscription:
		return *v == nil && jsonscan.Valid(raw) && objects(raw, v, func(key, val []byte, h *HookSubscription, ok *bool) bool {
			switch string(key) {
			case "event":
				return plainInto(&h.Event, val, ok)
			case "matcher":
				return plainInto(&h.Matcher, val, ok)
			case "on_error":
				return plainInto(&h.OnError, val, ok)
			case "timeout_ms":
				return intInto(&h.TimeoutMS, val, ok)
			}
			return ignorable(key, ok)
		})
	case *PromptDecl:
		if !jsonscan.Valid(raw) {
			return false
		}
		out := *v
		ok := true
		err := jsonscan.Members(raw, func(key, val []byte) bool {
			switch string(key) {
			case "static":
				return plainInto(&out.Static, val, &ok)
			case "dynamic":
				switch string(val) {
				case "true":
					out.Dynamic = true
				case "false":
					out.Dynamic = false
				case "null":
				default:
					ok = false // a type error: json.Unmarshal words it
				}
				return ok
			}
			return ignorable(key, &ok)
		})
		if !ok || err != nil {
			return false
		}
		*v = out
		return true
	}
	return false
}

// elements decodes raw, an array, into a fresh *dst, calling elem for
// each element (a zero T), and reports false when raw is anything else or
// elem does.
func elements[T any](raw []byte, dst *[]T, elem func(v []byte, e *T) bool) bool {
	out := []T{} // json.Unmarshal makes [] an empty, non-nil slice
	ok := true
	err := jsonscan.Elements(raw, func(v []byte) bool {
		var e T
		ok = elem(v, &e)
		out = append(out, e)
		return ok
	})
	if !ok || err != nil {
		return false
	}
	*dst = out
	return true
}

// objects decodes raw, an array of objects, into a fresh *dst, calling
// member for each member of each element, and reports false when raw is
// anything else or member clears ok.
func objects[T any](raw []byte, dst *[]T, member func(key, val []byte, e *T, ok *bool) bool) bool {
	return elements(raw, dst, func(v []byte, e *T) bool {
		ok := true
		// null or another kind of element: json.Unmarshal decides.
		return jsonscan.Members(v, func(key, val []byte) bool { return member(key, val, e, &ok) }) == nil && ok
	})
}

// ignorable reports whether json.Unmarshal would ignore the unknown key,
// clearing *ok (and stopping the scan) when it might match it to a field
// after unescaping or case folding.
func ignorable(key []byte, ok *bool) bool {
	*ok = bytes.IndexByte(key, '\\') < 0 && !jsonscan.MayFold(key)
	return *ok
}

// intInto stores the JSON integer val in *field (null leaves it as it
// was), or clears *ok and stops the scan for anything json.Unmarshal
// would refuse or word itself: a fraction, an exponent, a value out of
// range, another type.
func intInto(field *int, val []byte, ok *bool) bool {
	if string(val) == "null" {
		return true
	}
	n, err := strconv.ParseInt(string(val), 10, strconv.IntSize)
	if err != nil {
		*ok = false
		return false
	}
	*field = int(n)
	return true
}
