package packaging

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestArgsSchema(t *testing.T) {
	echo := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)
	count := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","maximum":100000},"delay_ms":{"type":"integer","minimum":1}}}`)
	open := json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true}`)
	for _, tc := range []struct {
		name         string
		schema, args json.RawMessage
		want         []string // substrings of the error; none means valid
	}{
		{"valid", echo, json.RawMessage(`{"text":"hi"}`), nil},
		{"missing required", echo, json.RawMessage(`{}`), []string{"missing property 'text'"}},
		{"misspelt required", echo, json.RawMessage(`{"txt":"hi"}`), []string{"missing property 'text'", `txt: unknown argument (did you mean "text"?)`}},
		{"misspelt optional", count, json.RawMessage(`{"n":3,"delay":5}`), []string{`delay: unknown argument (did you mean "delay_ms"?)`}},
		{"unrelated key", count, json.RawMessage(`{"zzzzzz":1}`), []string{"zzzzzz: unknown argument (the tool takes delay_ms, n)"}},
		{"wrong type", count, json.RawMessage(`{"n":"three"}`), []string{"n:", "want integer"}},
		{"out of range", count, json.RawMessage(`{"n":1000000}`), []string{"n:", "maximum"}},
		{"additionalProperties stated", open, json.RawMessage(`{"a":"x","b":1}`), nil},
		{"no schema takes any object", nil, json.RawMessage(`{"anything":[1,2]}`), nil},
		{"not an object", nil, json.RawMessage(`[1]`), []string{"want a JSON object, got an array"}},
		{"not JSON", echo, json.RawMessage(`{"text":`), []string{"not valid JSON"}},
		{"broken schema", json.RawMessage(`{"type":12}`), json.RawMessage(`{}`), []string{"not a valid JSON Schema"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := CompileArgsSchema(tc.schema)
			if err == nil {
				err = s.Validate(tc.args)
			}
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("valid arguments refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("invalid arguments accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// BenchmarkArgsSchemaValidate is the argument check of one tool call, its
// schema compiled beforehand as a session compiles it once per tool.
func BenchmarkArgsSchemaValidate(b *testing.B) {
	schema := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"integer","maximum":100000}},"required":["text"]}`)
	args := json.RawMessage(`{"text":"hello","n":3}`)
	s, err := CompileArgsSchema(schema)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := s.Validate(args); err != nil {
			b.Fatal(err)
		}
	}
}
