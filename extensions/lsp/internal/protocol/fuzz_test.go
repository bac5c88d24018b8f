package protocol

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzServerAnswers feeds untrusted server answers to the decoders: they
// must never panic.
func FuzzServerAnswers(f *testing.F) {
	for _, s := range []string{
		`null`, `[]`, `{}`, `"x"`, `[1]`, `[{"targetUri":1}]`,
		`{"uri":"file:///a","range":{"start":{"line":-1,"character":-5}}}`,
		`[{"command":"c"},{"command":{"command":"c"}}]`,
		`[{"location":null}]`, `{"kind":"markdown","value":"` + "```" + `"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		raw := json.RawMessage(b)
		_, _ = Locations(raw)
		_, _, _ = DocumentSymbols(raw)
		_, _ = DecodeCodeActions(raw)
		_ = HoverText(raw)
	})
}

// FuzzPositions checks that every column of any line converts to a
// position and back in every encoding, and that offsets stay in range.
func FuzzPositions(f *testing.F) {
	for _, s := range []string{"", "abc", "é🎉日", "a\r\nb\rc", "\xff\xfe", "𝒳\n🎉x"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, char int) {
		text := NewText(s)
		for _, enc := range []Encoding{UTF8, UTF16, UTF32} {
			for line := 1; line <= text.LineCount(); line++ {
				n := utf8.RuneCountInString(text.Line(line - 1))
				for col := 1; col <= n+1; col++ {
					p, err := text.Position(line, col, enc)
					if err != nil {
						t.Fatalf("%s line %d col %d: %v", enc, line, col, err)
					}
					if l, c := text.Column(p, enc); l != line || c != col {
						t.Fatalf("%s: %d:%d → %+v → %d:%d", enc, line, col, p, l, c)
					}
				}
			}
			off := text.Offset(Position{Line: char % 4, Character: char}, enc)
			if off < 0 || off > len(s) {
				t.Fatalf("Offset out of range: %d", off)
			}
		}
	})
}
