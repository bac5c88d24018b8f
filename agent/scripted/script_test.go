package scripted_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/agent/scripted"
)

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, script, want string
	}{
		{"no steps", `{"steps": []}`, "the script has no steps"},
		{"a misspelt matcher", `{"steps": [{"when": {"usr": "x"}, "reply": {"text": "a"}}]}`, `unknown field "usr"`},
		{"no matcher", `{"steps": [{"when": {}, "reply": {"text": "a"}}]}`, `step 1: "when" must hold exactly one of "any", "user" and "tool_result" (it holds 0)`},
		{"two matchers", `{"steps": [{"name": "s", "when": {"any": true, "user": "x"}, "reply": {"text": "a"}}]}`, `step 1 ("s"): "when" must hold exactly one`},
		{"an empty reply", `{"steps": [{"when": {"any": true}, "reply": {}}]}`, `"reply" has none of "text", "tool_calls", "error" and "stream_error"`},
		{"an error with text", `{"steps": [{"when": {"any": true}, "reply": {"text": "a", "error": {"message": "x"}}}]}`, `a "reply" with an "error" has no "text"`},
		{"an error that is not one", `{"steps": [{"when": {"any": true}, "reply": {"error": {"status": 200, "message": "x"}}}]}`, `"error.status" 200 is not an HTTP error status`},
		{"a call without a name", `{"steps": [{"when": {"any": true}, "reply": {"tool_calls": [{"arguments": {}}]}}]}`, "tool call 1 has no name"},
		{"a repeated id", `{"steps": [{"when": {"any": true}, "reply": {"tool_calls": [{"id": "a", "name": "x"}, {"id": "a", "name": "y"}]}}]}`, `tool call 2 (y): id "a" is used twice`},
		{"an unknown finish reason", `{"steps": [{"when": {"any": true}, "reply": {"text": "a", "finish_reason": "done"}}]}`, `unknown finish_reason "done"`},
		{"negative usage", `{"steps": [{"when": {"any": true}, "reply": {"text": "a", "usage": {"prompt_tokens": -1, "completion_tokens": 0}}}]}`, "must not be negative"},
		{"an empty offered name", `{"steps": [{"when": {"any": true, "offered": [""]}, "reply": {"text": "a"}}]}`, "empty tool name"},
		{"trailing data", `{"steps": [{"when": {"any": true}, "reply": {"text": "a"}}]} {}`, "data after the script"},
		{"not JSON", `steps:`, "parse script"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scripted.Parse([]byte(tc.script))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "demo.json")
	if err := os.WriteFile(path, []byte(`{"steps": [{"when": {"tool_result": {}}, "reply": {"text": "a"}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := scripted.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Steps) != 1 || s.Steps[0].When.ToolResult == nil {
		t.Errorf("loaded %+v", s)
	}
	if err := os.WriteFile(path, []byte(`{"steps": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := scripted.Load(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Load = %v, want an error naming the file", err)
	}
}

// FuzzParse: Parse never panics, and what it accepts is valid.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		parallelScript,
		`{"steps": [{"when": {"any": true}, "reply": {"text": "a"}}]}`,
		`{"steps": [{"when": {"user": ""}, "reply": {"tool_calls": [{"name": "x", "arguments": "not json"}]}, "repeat": true}]}`,
		`{"steps": [{"when": {"tool_result": {"tool": "t"}}, "reply": {"text": "a", "usage": {"prompt_tokens": 1, "completion_tokens": 1}}}]}`,
		`{"steps": null}`,
		`[]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := scripted.Parse(data)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("Parse accepted a script Validate refuses: %v", err)
		}
	})
}
