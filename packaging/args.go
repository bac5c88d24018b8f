package packaging

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// An ArgsSchema is a tool's approved input_schema compiled to check the
// arguments of its calls before they leave the host. Compile it once per
// approved tool with [CompileArgsSchema]; it is safe for concurrent use.
//
// Beyond the schema itself it is strict about names: when the schema lists
// properties and does not say "additionalProperties", an argument it does
// not list is an error naming it and the closest listed one (a misspelt
// optional field would otherwise be ignored by the server without a word).
type ArgsSchema struct {
	sch   *jsonschema.Schema // nil: no schema, any object
	props []string           // declared top-level properties, sorted
	open  bool               // additionalProperties is stated: names are not checked
}

// CompileArgsSchema compiles a tool's input_schema. An empty schema (a
// tool that declares none) takes any object. The error says why the
// schema is no valid JSON Schema.
func CompileArgsSchema(schema json.RawMessage) (*ArgsSchema, error) {
	s := &ArgsSchema{}
	if len(bytes.TrimSpace(schema)) == 0 {
		return s, nil
	}
	sch, err := compileToolSchema(schema)
	if err != nil {
		return nil, err
	}
	var top struct {
		Properties           map[string]json.RawMessage `json:"properties"`
		AdditionalProperties json.RawMessage            `json:"additionalProperties"`
	}
	_ = json.Unmarshal(schema, &top)
	s.sch = sch
	s.props = slices.Sorted(maps.Keys(top.Properties))
	s.open = top.AdditionalProperties != nil
	return s, nil
}

// CompileArgs is [CompileArgsSchema] in the shape of
// host.SessionOptions.CompileArgs.
func CompileArgs(schema json.RawMessage) (func(args json.RawMessage) error, error) {
	s, err := CompileArgsSchema(schema)
	if err != nil {
		return nil, err
	}
	return s.Validate, nil
}

// Validate checks args, decoding them once. The error names each failing
// field and rule; it never quotes more than the field's name.
func (s *ArgsSchema) Validate(args json.RawMessage) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return fmt.Errorf("not valid JSON: %v", err)
	}
	obj, ok := inst.(map[string]any)
	if !ok {
		return fmt.Errorf("want a JSON object, got %s", jsonKind(inst))
	}
	if s.sch == nil {
		return nil
	}
	var problems []string
	if err := s.sch.Validate(inst); err != nil {
		if ve, ok := err.(*jsonschema.ValidationError); ok {
			problems = schemaProblems(ve, inst, "")
		} else {
			problems = []string{err.Error()}
		}
	}
	if !s.open && len(s.props) > 0 {
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if _, known := slices.BinarySearch(s.props, k); known {
				continue
			}
			p := fmt.Sprintf("%s: unknown argument", k)
			if near := closest(k, s.props); near != "" {
				p += fmt.Sprintf(" (did you mean %q?)", near)
			} else {
				p += fmt.Sprintf(" (the tool takes %s)", strings.Join(s.props, ", "))
			}
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// compileToolSchema compiles a tool's input_schema (no loader: a schema
// never fetches anything).
func compileToolSchema(schema json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("the tool's input_schema is not valid JSON: %v", err)
	}
	c := newCompiler()
	const url = "yolop:input_schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("the tool's input_schema: %v", err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("the tool's input_schema is not a valid JSON Schema: %v", err)
	}
	return sch, nil
}

// closest returns the name in names within edit distance 2 of s, or
// one s is a prefix of (or that is a prefix of s), if there is one.
func closest(s string, names []string) string {
	best, bestD := "", 3
	ls := strings.ToLower(s)
	for _, n := range names {
		ln := strings.ToLower(n)
		d := editDistance(ls, ln)
		if d >= 3 && len(ls) >= 3 && (strings.HasPrefix(ln, ls) || strings.HasPrefix(ls, ln)) {
			d = 2
		}
		if d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}
