package yep

import (
	"bytes"
	"encoding/json"
	"errors"

	"yolop.dev/core/internal/jsonscan"
)

// AppendJSON appends p's JSON encoding to b: the bytes encoding/json gives
// with HTML escaping off, without its reflection or its second walk of
// Args (encoding/json validates and compacts a json.RawMessage it
// encodes; here one fast pass does both checks). A connection uses it
// (core/jsonrpc's JSONAppender) to send tool/call. Args that are not valid
// JSON are encoding/json's error.
func (p ToolCallParams) AppendJSON(b []byte) ([]byte, error) {
	args, err := compactRaw(p.Args, p)
	if err != nil {
		return b, err
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
	payload, err := compactRaw(p.Payload, p)
	if err != nil {
		return b, err
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
// decision with a Result is encoded by encoding/json.
func (r HookFireResult) AppendJSON(b []byte) ([]byte, error) {
	if r.Result != nil {
		return appendEncoded(b, r)
	}
	args, err := compactRaw(r.Args, r)
	if err != nil {
		return b, err
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

// AppendJSON appends p's JSON encoding to b: the bytes encoding/json gives
// with HTML escaping off. The host sends initialize with it once per
// start, when ten servers may be starting at once. Config that is not
// valid JSON is encoding/json's error; params with CapabilityParams are
// encoded by encoding/json.
func (p InitializeParams) AppendJSON(b []byte) ([]byte, error) {
	if len(p.CapabilityParams) > 0 {
		return appendEncoded(b, p)
	}
	config, err := compactRaw(p.Config, p)
	if err != nil {
		return b, err
	}
	b = append(b, `{"protocol_version":`...)
	b = jsonscan.AppendString(b, p.ProtocolVersion)
	for _, f := range [...]struct{ key, val string }{
		{`,"session_id":`, p.SessionID}, {`,"workspace_root":`, p.WorkspaceRoot}, {`,"locale":`, p.Locale},
	} {
		if f.val != "" {
			b = append(b, f.key...)
			b = jsonscan.AppendString(b, f.val)
		}
	}
	if len(config) > 0 {
		b = append(b, `,"config":`...)
		b = append(b, config...)
	}
	if len(p.Capabilities) > 0 {
		b = append(b, `,"capabilities":[`...)
		for i, c := range p.Capabilities {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonscan.AppendString(b, c)
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

// AppendJSON appends {}, the encoding of the empty params of initialized.
func (InitializedParams) AppendJSON(b []byte) ([]byte, error) { return append(b, "{}"...), nil }

// appendEncoded appends v encoded by encoding/json with HTML escaping off,
// for the shapes the hand encoders leave to it.
func appendEncoded(b []byte, v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// compactRaw returns raw as encoding/json would write it inside whole:
// validated and compacted, in one pass when it is compact already. When raw
// is not valid JSON the error is json.Marshal's of whole, worded exactly
// as the encoder would.
func compactRaw(raw json.RawMessage, whole any) (json.RawMessage, error) {
	if len(raw) == 0 {
		return raw, nil
	}
	valid, compact := jsonscan.ValidCompact(raw)
	if !valid {
		_, err := json.Marshal(whole)
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return nil, err
	}
	if compact {
		return raw, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
