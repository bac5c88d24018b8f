package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"

	"yolop.dev/core/internal/jsonscan"
)

// A JSONAppender appends its own JSON encoding to b and returns the
// extended slice. A connection uses it in place of encoding/json for a
// message's params or result ([yep.ToolCallParams] is one), so that a
// value whose fields are already JSON (a tool call's arguments) is not
// walked again by encoding/json's compaction of raw messages. What it
// appends must be the valid, compact JSON encoding/json would produce; on
// an error the message is not sent.
type JSONAppender interface {
	AppendJSON(b []byte) ([]byte, error)
}

// buffer is a pooled message buffer with a reusable JSON encoder.
type buffer struct {
	B   []byte
	enc *json.Encoder
	w   bytes.Buffer
}

func (b *buffer) str(s string) { b.B = append(b.B, s...) }
func (b *buffer) ch(c byte)    { b.B = append(b.B, c) }
func (b *buffer) raw(p []byte) { b.B = append(b.B, p...) }

var bufPool = sync.Pool{New: func() any {
	b := &buffer{B: make([]byte, 0, 512)}
	b.enc = json.NewEncoder(&b.w)
	b.enc.SetEscapeHTML(false)
	return b
}}

func getBuf() *buffer { return bufPool.Get().(*buffer) }

func putBuf(b *buffer) {
	if cap(b.B) > 64<<10 || b.w.Cap() > 64<<10 {
		return
	}
	b.B = b.B[:0]
	b.w.Reset()
	bufPool.Put(b)
}

func appendInt(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }

// appendString appends s as a JSON string.
func appendString(b *buffer, s string) { b.B = jsonscan.AppendString(b.B, s) }

// appendParams appends `,"params":<v>` unless v is nil.
func appendParams(b *buffer, v any) error {
	if v == nil {
		return nil
	}
	b.str(`,"params":`)
	return appendJSON(b, v)
}

// appendJSON appends the JSON encoding of v without a trailing newline.
func appendJSON(b *buffer, v any) error {
	switch v := v.(type) {
	case json.RawMessage:
		if len(v) == 0 {
			b.str("null")
			return nil
		}
		b.raw(v)
		return nil
	case []byte:
		b.raw(v)
		return nil
	case JSONAppender:
		out, err := v.AppendJSON(b.B)
		if err != nil {
			return err
		}
		b.B = out
		return nil
	}
	b.w.Reset()
	if err := b.enc.Encode(v); err != nil {
		return err
	}
	out := b.w.Bytes()
	b.B = append(b.B, out[:len(out)-1]...)
	return nil
}
