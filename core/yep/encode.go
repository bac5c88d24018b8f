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
