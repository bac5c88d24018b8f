package yep

import (
	"bytes"
	"encoding/json"

	"yolop.dev/core/internal/jsonscan"
)

// AppendJSON appends p's JSON encoding to b: the bytes encoding/json gives
// with HTML escaping off, without its reflection or its second walk of
// Args (encoding/json validates and compacts a json.RawMessage it
// encodes; here one fast pass does both checks). A connection uses it
// (core/jsonrpc's JSONAppender) to send tool/call. Args that are not valid
// JSON are encoding/json's error.
func (p ToolCallParams) AppendJSON(b []byte) ([]byte, error) {
	args := p.Args
	if len(args) > 0 {
		valid, compact := jsonscan.ValidCompact(args)
		if !valid {
			// Let encoding/json word the error exactly as json.Marshal would.
			_, err := json.Marshal(p)
			return b, err
		}
		if !compact {
			var buf bytes.Buffer
			if err := json.Compact(&buf, args); err != nil {
				return b, err
			}
			args = buf.Bytes()
		}
	}
	b = append(b, '{')
	if p.ToolCallID != "" {
		b = append(b, `"tool_call_id":`...)
		b = jsonscan.AppendString(b, p.ToolCallID)
		b = append(b, ',')
	}
	b = append(b, `"name":`...)
	b = jsonscan.AppendString(b, p.Name)
	if len(args) > 0 {
		b = append(b, `,"args":`...)
		b = append(b, args...)
	}
	for _, f := range [...]struct{ key, val string }{
		{`,"session_id":`, p.SessionID}, {`,"traceparent":`, p.TraceParent}, {`,"tracestate":`, p.TraceState},
	} {
		if f.val != "" {
			b = append(b, f.key...)
			b = jsonscan.AppendString(b, f.val)
		}
	}
	return append(b, '}'), nil
}

// AppendJSON appends p's JSON encoding to b, as [ToolCallParams.AppendJSON]
// does: the bytes encoding/json gives with HTML escaping off, with Payload
// validated and compacted in one pass. A Payload that is not valid JSON is
// encoding/json's error.
func (p HookFireParams) AppendJSON(b []byte) ([]byte, error) {
	payload := p.Payload
	if len(payload) > 0 {
		valid, compact := jsonscan.ValidCompact(payload)
		if !valid {
			_, err := json.Marshal(p)
			return b, err
		}
		if !compact {
			var buf bytes.Buffer
			if err := json.Compact(&buf, payload); err != nil {
				return b, err
			}
			payload = buf.Bytes()
		}
	}
	b = append(b, `{"event":`...)
	b = jsonscan.AppendString(b, p.Event)
	b = append(b, `,"toolName":`...)
	b = jsonscan.AppendString(b, p.ToolName)
	if p.Matcher != "" {
		b = append(b, `,"matcher":`...)
		b = jsonscan.AppendString(b, p.Matcher)
	}
	if len(payload) > 0 {
		b = append(b, `,"payload":`...)
		b = append(b, payload...)
	}
	for _, f := range [...]struct{ key, val string }{
		{`,"traceparent":`, p.TraceParent}, {`,"tracestate":`, p.TraceState},
	} {
		if f.val != "" {
			b = append(b, f.key...)
			b = jsonscan.AppendString(b, f.val)
		}
	}
	return append(b, '}'), nil
}

// AppendJSON appends r's JSON encoding to b: the bytes encoding/json gives
// with HTML escaping off. A server's connection uses it to answer
// hook/fire. Args that are not valid JSON are encoding/json's error; a
// Result is encoded by encoding/json.
func (r HookFireResult) AppendJSON(b []byte) ([]byte, error) {
	args := r.Args
	if r.Result != nil || len(args) > 0 && !jsonscan.Valid(args) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(r); err != nil {
			return b, err
		}
		return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
	}
	if len(args) > 0 {
		if _, compact := jsonscan.ValidCompact(args); !compact {
			var buf bytes.Buffer
			if err := json.Compact(&buf, args); err != nil {
				return b, err
			}
			args = buf.Bytes()
		}
	}
	start := len(b)
	b = append(b, '{')
	for _, f := range [...]struct{ key, val string }{
		{`"decision":`, r.Decision}, {`"reason":`, r.Reason},
	} {
		if f.val != "" {
			if len(b) > start+1 {
				b = append(b, ',')
			}
			b = append(b, f.key...)
			b = jsonscan.AppendString(b, f.val)
		}
	}
	if len(args) > 0 {
		if len(b) > start+1 {
			b = append(b, ',')
		}
		b = append(b, `"args":`...)
		b = append(b, args...)
	}
	return append(b, '}'), nil
}
