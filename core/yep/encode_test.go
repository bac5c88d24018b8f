package yep

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// marshalParams is what AppendJSON must match: encoding/json with HTML
// escaping off, as core/jsonrpc's encoder runs.
func marshalParams(p ToolCallParams) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func checkAppendParams(t *testing.T, p ToolCallParams) {
	t.Helper()
	want, werr := marshalParams(p)
	got, gerr := p.AppendJSON([]byte("prefix"))
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("AppendJSON(%+v) error %v, encoding/json's %v", p, gerr, werr)
	}
	if werr != nil {
		if string(got) != "prefix" {
			t.Fatalf("AppendJSON(%+v) failed but changed the buffer to %q", p, got)
		}
		return
	}
	if !bytes.Equal(got, append([]byte("prefix"), want...)) {
		t.Fatalf("AppendJSON(%+v) = %s\nencoding/json gives %s", p, got[len("prefix"):], want)
	}
}

var paramSeeds = []ToolCallParams{
	{Name: "echo", Args: json.RawMessage(`{"text":"hi"}`)},
	{Name: "echo"},
	{ToolCallID: "call-1", Name: "grep", Args: json.RawMessage(`{"q":"<a> & \"b\"","n":[1, 2]}`), SessionID: "s", TraceParent: "00-0123-4567-01", TraceState: "k=v"},
	{Name: "ünï \u2028 \xff", Args: json.RawMessage(" {\n\t\"spaced\" : true }\n")},
	{Name: "bad", Args: json.RawMessage(`{"unterminated":`)},
	{Name: "long", Args: json.RawMessage(`{"text":"` + strings.Repeat("lorem ipsum ", 90) + `"}`)},
}

func TestToolCallParamsAppendJSON(t *testing.T) {
	for _, p := range paramSeeds {
		checkAppendParams(t, p)
	}
}

func FuzzToolCallParamsAppendJSON(f *testing.F) {
	for _, p := range paramSeeds {
		f.Add(p.ToolCallID, p.Name, []byte(p.Args), p.SessionID, p.TraceParent)
	}
	f.Fuzz(func(t *testing.T, id, name string, args []byte, session, traceParent string) {
		checkAppendParams(t, ToolCallParams{ToolCallID: id, Name: name, Args: args, SessionID: session, TraceParent: traceParent})
	})
}
