package record

import (
	"strings"
	"testing"

	"yolop.dev/core/tap"
)

const sample = `A recording.
volatile: id, result.duration_ms
-- echo --
→ {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}
← {"jsonrpc":"2.0","id":1,"result":{"name":"echo"}}
-- echo#2 --
→ {"jsonrpc":"2.0","id":1,"method":"tool/call","params":{"name":"echo"}}
← {"jsonrpc":"2.0","id":1,"result":{"output":"x","duration_ms":3}}
`

// Parse reads the header, the volatile line, the sections and each
// message's direction and line number; Format writes the same file back.
func TestParseAndFormatRoundTrip(t *testing.T) {
	f, err := Parse("rec.txtar", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	if f.Comment != "A recording.\n" || strings.Join(f.Volatile, "|") != "id|result.duration_ms" {
		t.Fatalf("header = %q, volatile %q", f.Comment, f.Volatile)
	}
	if len(f.Dialogues) != 2 || f.Dialogues[1].Name != "echo#2" || f.Dialogues[1].Extension() != "echo" {
		t.Fatalf("dialogues = %+v", f.Dialogues)
	}
	m := f.Dialogues[1].Messages[1]
	if m.Dir != tap.ToHost || m.Line != 8 || !strings.Contains(string(m.Data), `"output":"x"`) {
		t.Fatalf("the last message = %+v, want the server's line 8", m)
	}
	if got := string(f.Format()); got != sample {
		t.Fatalf("Format did not round-trip:\n%s\nwant:\n%s", got, sample)
	}
}

// A line without a direction mark is an error naming the file and line.
func TestParseRefusesAnUnmarkedLine(t *testing.T) {
	_, err := Parse("rec.txtar", []byte("x\n-- echo --\n{\"id\":1}\n"))
	if err == nil || !strings.Contains(err.Error(), "rec.txtar:3:") || !strings.Contains(err.Error(), "echo") {
		t.Fatalf("err = %v, want one naming rec.txtar:3 and the section", err)
	}
	_, err = Parse("empty.txtar", []byte("just prose\n"))
	if err == nil || !strings.Contains(err.Error(), "yolop session --record") {
		t.Fatalf("err = %v, want one saying how to record", err)
	}
}

// Compare ignores volatile members, at any depth with "*", and names the
// first member that differs.
func TestCompare(t *testing.T) {
	for _, c := range []struct {
		want, got string
		volatile  []string
		diff      string
	}{
		{`{"id":1,"result":{"output":"a"}}`, `{"id":7,"result":{"output":"a"}}`, []string{"id"}, ""},
		{`{"id":1,"result":{"output":"a"}}`, `{"id":7,"result":{"output":"a"}}`, nil, "id: want 1, got 7"},
		{`{"result":{"output":"a","duration_ms":1}}`, `{"result":{"output":"b","duration_ms":2}}`, []string{"result.duration_ms"}, `result.output: want "a", got "b"`},
		{`{"params":{"items":[{"t":1},{"t":2}]}}`, `{"params":{"items":[{"t":3},{"t":4}]}}`, []string{"params.items.*.t"}, ""},
		{`{"result":{}}`, `{"result":{"extra":true}}`, nil, "result.extra: unexpected, got true"},
		{`{"result":{"a":1}}`, `{"result":{}}`, nil, "result.a: missing, want 1"},
		{`{"a":[1,2]}`, `{"a":[1]}`, nil, "a: 1 elements, want 2"},
		{`{"a":1}`, `not json`, nil, "not JSON"},
	} {
		if got := Compare([]byte(c.want), []byte(c.got), c.volatile); !strings.HasPrefix(got, c.diff) || (c.diff == "") != (got == "") {
			t.Errorf("Compare(%s, %s, %q) = %q, want %q", c.want, c.got, c.volatile, got, c.diff)
		}
	}
}
