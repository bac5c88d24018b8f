// Package jsonscan holds core's hand-written JSON fast paths, each checked
// against encoding/json by a fuzz test: a walker of the top level of an
// object that does not decode it (the envelope splitter of core/jsonrpc and
// the SDK's fast tool/call decoder share it) and one of an array's
// elements, a validator ([Valid]) and a
// string encoder ([AppendString]). The walker's input is valid JSON or a
// prefix of it; it only tracks strings and nesting.
package jsonscan

import (
	"encoding/binary"
	"errors"
	"unicode/utf8"
)

var (
	// ErrNotObject reports input that is not a JSON object.
	ErrNotObject = errors.New("not a JSON object")
	// ErrTruncated reports input cut short before the object or array
	// ended.
	ErrTruncated = errors.New("truncated JSON object")
	// ErrNotArray reports input that is not a JSON array.
	ErrNotArray = errors.New("not a JSON array")
)

// Members calls fn with the raw key (between its quotes, escapes not
// decoded) and the raw value of each top-level member of the object in b,
// in order, until fn returns false. It returns ErrNotObject or
// ErrTruncated when b is not a whole object; the members before the fault
// have been passed to fn.
func Members(b []byte, fn func(key, val []byte) bool) error {
	i := SkipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return ErrNotObject
	}
	i++
	for {
		i = SkipWS(b, i)
		if i >= len(b) {
			return ErrTruncated
		}
		if b[i] == '}' {
			return nil
		}
		if b[i] == ',' {
			i = SkipWS(b, i+1)
		}
		if i >= len(b) {
			return ErrTruncated
		}
		if b[i] != '"' {
			return ErrNotObject
		}
		kend := SkipString(b, i)
		if kend < 0 {
			return ErrTruncated
		}
		key := b[i+1 : kend-1]
		i = SkipWS(b, kend)
		if i >= len(b) {
			return ErrTruncated
		}
		if b[i] != ':' {
			return ErrNotObject
		}
		i = SkipWS(b, i+1)
		vend := SkipValue(b, i)
		if vend < 0 {
			return ErrTruncated
		}
		if !fn(key, b[i:vend]) {
			return nil
		}
		i = vend
	}
}

// Elements calls fn with the raw value of each element of the array in b,
// in order, until fn returns false. It returns ErrNotArray or ErrTruncated
// when b is not a whole array; the elements before the fault have been
// passed to fn.
func Elements(b []byte, fn func(val []byte) bool) error {
	i := SkipWS(b, 0)
	if i >= len(b) || b[i] != '[' {
		return ErrNotArray
	}
	i = SkipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return nil
	}
	for {
		if i >= len(b) {
			return ErrTruncated
		}
		end := SkipValue(b, i)
		if end < 0 {
			return ErrTruncated
		}
		if !fn(b[i:end]) {
			return nil
		}
		i = SkipWS(b, end)
		if i >= len(b) {
			return ErrTruncated
		}
		switch b[i] {
		case ']':
			return nil
		case ',':
			i = SkipWS(b, i+1)
		default:
			return ErrNotArray
		}
	}
}

// SkipWS returns the index of the first non-whitespace byte at or after i.
func SkipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// SkipString returns the index just past the string starting at b[i], or
// -1 if it is cut short.
func SkipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		for len(b)-j >= 8 {
			if special(binary.LittleEndian.Uint64(b[j:])) != 0 {
				break
			}
			j += 8
		}
		if j >= len(b) {
			break
		}
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// SkipValue returns the index just past the JSON value starting at b[i],
// or -1 if it is cut short. A scalar ends at the first delimiter, so a
// scalar that reaches the end of b counts as cut short.
func SkipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return SkipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = SkipString(b, j)
				if j < 0 {
					return -1
				}
				j--
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		for j := i; j < len(b); j++ {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return j
			}
		}
		return -1
	}
}

// MayFold reports whether encoding/json might match key to a field name
// that is spelled differently: it matches case-insensitively, folding
// ASCII letters and also U+017F (ſ, to s) and U+212A (K, to k), so a key
// with an upper-case ASCII letter or any non-ASCII byte may.
func MayFold(key []byte) bool {
	for _, c := range key {
		if 'A' <= c && c <= 'Z' || c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// PlainString returns the contents of the JSON string at b[i] when it has
// no escapes and is valid UTF-8 (what encoding/json would decode to the
// same bytes), and the index past it; false otherwise.
func PlainString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	ascii := true
	for j := i + 1; j < len(b); j++ {
		for len(b)-j >= 8 {
			if x := binary.LittleEndian.Uint64(b[j:]); special(x)|x&highs != 0 {
				break
			}
			j += 8
		}
		if j >= len(b) {
			break
		}
		switch c := b[j]; {
		case c == '"':
			// encoding/json turns invalid UTF-8 into U+FFFD; leave that to it.
			if !ascii && !utf8.Valid(b[i+1:j]) {
				return nil, 0, false
			}
			return b[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20:
			return nil, 0, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, 0, false
}
