package protocol

import (
	"fmt"
	"unicode/utf8"
)

// An Encoding is a position encoding kind: what Position.Character counts.
type Encoding string

// Position encodings of LSP 3.17. UTF16 is the protocol default.
const (
	UTF8  Encoding = "utf-8"
	UTF16 Encoding = "utf-16"
	UTF32 Encoding = "utf-32"
)

// runeUnits returns how many code units of enc the rune r (decoded from
// size bytes) takes. An invalid byte (r == RuneError, size 1) counts as one
// unit in every encoding.
func runeUnits(r rune, size int, enc Encoding) int {
	switch enc {
	case UTF8:
		return size
	case UTF32:
		return 1
	default:
		if r >= 0x10000 {
			return 2
		}
		return 1
	}
}

// A Text is a document's content indexed by line. Lines end at "\n",
// "\r\n" or "\r", as LSP defines them.
type Text struct {
	s      string
	starts []int // byte offset where each line starts
}

// NewText indexes s.
func NewText(s string) *Text {
	starts := []int{0}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		}
	}
	return &Text{s: s, starts: starts}
}

// String returns the whole content.
func (t *Text) String() string { return t.s }

// LineCount returns the number of lines (a trailing newline starts an
// empty last line).
func (t *Text) LineCount() int { return len(t.starts) }

// Line returns zero-based line i without its terminator, or "" when out of
// range.
func (t *Text) Line(i int) string {
	if i < 0 || i >= len(t.starts) {
		return ""
	}
	start, end := t.starts[i], len(t.s)
	if i+1 < len(t.starts) {
		end = t.starts[i+1]
	}
	line := t.s[start:end]
	for len(line) > 0 && (line[len(line)-1] == '\n' || line[len(line)-1] == '\r') {
		line = line[:len(line)-1]
	}
	return line
}

// Position converts the agent's 1-based line and 1-based column, counted in
// Unicode code points, to an LSP position in enc. A column one past the end
// of the line addresses the line's end; anything further is an error.
func (t *Text) Position(line, column int, enc Encoding) (Position, error) {
	if line < 1 || line > len(t.starts) {
		return Position{}, fmt.Errorf("line %d is out of range: the file has %d lines", line, len(t.starts))
	}
	if column < 1 {
		return Position{}, fmt.Errorf("column %d is out of range: columns start at 1", column)
	}
	text := t.Line(line - 1)
	units, cp := 0, 1
	for i := 0; i < len(text); {
		if cp == column {
			return Position{Line: line - 1, Character: units}, nil
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		units += runeUnits(r, size, enc)
		i += size
		cp++
	}
	if cp == column {
		return Position{Line: line - 1, Character: units}, nil
	}
	return Position{}, fmt.Errorf("column %d is out of range: line %d has %d characters", column, line, cp-1)
}

// Column converts an LSP position in enc back to the agent's 1-based line
// and code-point column. A character offset inside a multi-unit character
// addresses that character; one past the end of the line is clamped to the
// line's end.
func (t *Text) Column(p Position, enc Encoding) (line, column int) {
	if p.Line < 0 {
		return 1, 1
	}
	if p.Line >= len(t.starts) {
		return p.Line + 1, 1
	}
	text := t.Line(p.Line)
	units, cp := 0, 1
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		u := runeUnits(r, size, enc)
		if p.Character < units+u {
			return p.Line + 1, cp
		}
		units += u
		i += size
		cp++
	}
	return p.Line + 1, cp
}

// Offset converts an LSP position in enc to a byte offset into the text,
// clamping a line past the end to the end of the text and a character past
// the end of its line to the line's end (as LSP specifies).
func (t *Text) Offset(p Position, enc Encoding) int {
	if p.Line < 0 {
		return 0
	}
	if p.Line >= len(t.starts) {
		return len(t.s)
	}
	start := t.starts[p.Line]
	text := t.Line(p.Line)
	units := 0
	for i := 0; i < len(text); {
		if units >= p.Character {
			return start + i
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		units += runeUnits(r, size, enc)
		i += size
	}
	return start + len(text)
}
