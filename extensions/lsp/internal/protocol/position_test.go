package protocol

import (
	"encoding/json"
	"testing"
)

func TestPositionRoundTrip(t *testing.T) {
	// "x" sits after: an emoji (4 UTF-8 bytes, 2 UTF-16 units), CJK (3
	// bytes, 1 unit each), an accented letter (2 bytes, 1 unit).
	line := "/* 🎉 日本 é */ x := 1"
	text := NewText("package p\n" + line + "\n")
	col := 0
	for i, r := range []rune(line) {
		if r == 'x' {
			col = i + 1
		}
	}
	tests := []struct {
		enc  Encoding
		want int
	}{
		{UTF32, col - 1},
		{UTF16, col - 1 + 1},          // the emoji takes two UTF-16 units
		{UTF8, col - 1 + 3 + 2*2 + 1}, // emoji +3, two CJK +2 each, é +1
	}
	for _, tt := range tests {
		t.Run(string(tt.enc), func(t *testing.T) {
			p, err := text.Position(2, col, tt.enc)
			if err != nil {
				t.Fatal(err)
			}
			if p != (Position{Line: 1, Character: tt.want}) {
				t.Fatalf("Position(2, %d) = %+v, want character %d", col, p, tt.want)
			}
			if l, c := text.Column(p, tt.enc); l != 2 || c != col {
				t.Fatalf("Column(%+v) = %d:%d, want 2:%d", p, l, c, col)
			}
			off := text.Offset(p, tt.enc)
			if text.String()[off] != 'x' {
				t.Fatalf("Offset(%+v) = %d, points at %q", p, off, text.String()[off:off+1])
			}
		})
	}
}

func TestPositionEveryColumn(t *testing.T) {
	lines := []string{"", "ascii", "é🎉日x\t", "🎉🎉", "a\xffb", "𝒳𝒴 z"}
	for _, enc := range []Encoding{UTF8, UTF16, UTF32} {
		for _, l := range lines {
			text := NewText(l)
			n := len([]rune(l))
			for col := 1; col <= n+1; col++ {
				p, err := text.Position(1, col, enc)
				if err != nil {
					t.Fatalf("%s %q col %d: %v", enc, l, col, err)
				}
				if _, c := text.Column(p, enc); c != col {
					t.Fatalf("%s %q: col %d → %+v → col %d", enc, l, col, p, c)
				}
			}
			if _, err := text.Position(1, n+2, enc); err == nil {
				t.Fatalf("%s %q: column %d past the end was accepted", enc, l, n+2)
			}
		}
	}
}

func TestLineEndings(t *testing.T) {
	text := NewText("a\r\nb\rc\nd")
	want := []string{"a", "b", "c", "d"}
	if text.LineCount() != len(want) {
		t.Fatalf("LineCount = %d, want %d", text.LineCount(), len(want))
	}
	for i, w := range want {
		if got := text.Line(i); got != w {
			t.Errorf("Line(%d) = %q, want %q", i, got, w)
		}
	}
	if off := text.Offset(Position{Line: 2, Character: 0}, UTF16); text.String()[off] != 'c' {
		t.Fatalf("Offset of line 3 = %d", off)
	}
	if _, err := text.Position(5, 1, UTF16); err == nil {
		t.Fatal("line past the end was accepted")
	}
}

func TestColumnInsideSurrogatePair(t *testing.T) {
	text := NewText("🎉x")
	// UTF-16 offset 1 is inside the emoji's surrogate pair.
	if _, c := text.Column(Position{Character: 1}, UTF16); c != 1 {
		t.Fatalf("column inside the pair = %d, want 1", c)
	}
	if _, c := text.Column(Position{Character: 2}, UTF16); c != 2 {
		t.Fatalf("column after the pair = %d, want 2", c)
	}
	if _, c := text.Column(Position{Character: 99}, UTF16); c != 3 {
		t.Fatalf("column past the end = %d, want 3 (clamped)", c)
	}
}

func TestURI(t *testing.T) {
	p := "/tmp/a dir/é.go"
	u := URIFromPath(p)
	if u != "file:///tmp/a%20dir/%C3%A9.go" {
		t.Fatalf("URIFromPath = %s", u)
	}
	if got := u.Path(); got != p {
		t.Fatalf("Path = %q, want %q", got, p)
	}
	if got := DocumentURI("untitled:x").Path(); got != "" {
		t.Fatalf("non-file URI path = %q", got)
	}
}

func TestLocations(t *testing.T) {
	tests := []struct {
		name, in string
		want     int
	}{
		{"null", `null`, 0},
		{"single", `{"uri":"file:///a.go","range":{"start":{"line":1,"character":2},"end":{"line":1,"character":3}}}`, 1},
		{"array", `[{"uri":"file:///a.go","range":{"start":{"line":1,"character":2},"end":{"line":1,"character":3}}}]`, 1},
		{"links", `[{"targetUri":"file:///b.go","targetRange":{"start":{"line":0,"character":0},"end":{"line":9,"character":0}},"targetSelectionRange":{"start":{"line":4,"character":5},"end":{"line":4,"character":8}}}]`, 1},
	}
	for _, tt := range tests {
		locs, err := Locations(json.RawMessage(tt.in))
		if err != nil || len(locs) != tt.want {
			t.Fatalf("%s: Locations = %v, %v; want %d", tt.name, locs, err, tt.want)
		}
	}
	locs, _ := Locations(json.RawMessage(tests[3].in))
	if locs[0].URI != "file:///b.go" || locs[0].Range.Start != (Position{4, 5}) {
		t.Fatalf("link reduced to %+v, want the target selection range", locs[0])
	}
}

func markup(t *testing.T, md string) string {
	b, err := json.Marshal(map[string]string{"kind": "markdown", "value": md})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestHoverText(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"markup", markup(t, "```go\nfunc Hello(name string) string\n```\n\n---\n\nHello returns a **greeting** for `name`.\n\n\n[greet.Hello on pkg.go.dev](https://pkg.go.dev/x#Hello)"),
			"func Hello(name string) string\n\nHello returns a greeting for name.\n\ngreet.Hello on pkg.go.dev"},
		{"plaintext", `{"kind":"plaintext","value":"  int x  "}`, "int x"},
		{"marked string", `"a \\*b\\*"`, "a *b*"},
		{"marked array", `[{"language":"python","value":"def f()"},"doc"]`, "def f()\n\ndoc"},
		{"null", `null`, ""},
	}
	for _, tt := range tests {
		if got := HoverText(json.RawMessage(tt.in)); got != tt.want {
			t.Errorf("%s: HoverText = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDecoders(t *testing.T) {
	ds, si, err := DocumentSymbols(json.RawMessage(`[{"name":"A","kind":12,"range":{"start":{"line":0,"character":0},"end":{"line":1,"character":0}},"selectionRange":{"start":{"line":0,"character":5},"end":{"line":0,"character":6}},"children":[{"name":"b","kind":13,"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}},"selectionRange":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}}}]}]`))
	if err != nil || len(ds) != 1 || si != nil || len(ds[0].Children) != 1 {
		t.Fatalf("hierarchical: %v %v %v", ds, si, err)
	}
	ds, si, err = DocumentSymbols(json.RawMessage(`[{"name":"A","kind":12,"location":{"uri":"file:///a","range":{"start":{"line":3,"character":0},"end":{"line":3,"character":1}}}}]`))
	if err != nil || ds != nil || len(si) != 1 || si[0].Location.Range.Start.Line != 3 {
		t.Fatalf("flat: %v %v %v", ds, si, err)
	}
	cas, err := DecodeCodeActions(json.RawMessage(`[{"title":"Run","command":"x.run","arguments":[1]},{"title":"Fix","kind":"quickfix","edit":{"changes":{}}}]`))
	if err != nil || len(cas) != 2 || cas[0].Command == nil || cas[0].Command.Command != "x.run" || cas[1].Kind != "quickfix" || cas[1].Edit == nil {
		t.Fatalf("code actions: %+v %v", cas, err)
	}
	if SymbolKindName(12) != "Function" || SymbolKindName(99) != "Symbol" {
		t.Fatal("SymbolKindName")
	}
}
