// Package typed registers capability-server tools whose arguments and
// results are Go types. [AddTool] derives the tool's input JSON Schema from
// the argument type In (and its output schema from the result type Out)
// with github.com/google/jsonschema-go, the library the MCP Go SDK uses;
// validates every call's arguments against the input schema before the
// handler runs, refusing a mismatch with invalid params (-32602) and a
// message naming the field; decodes them into In; and turns the handler's
// Out into the tool result.
//
// The derived schemas travel in the handshake (capability_params.tools[]
// input_schema and output_schema, via [sdk.Server.ToolWith]). They are
// informative: the host keeps validating against plugin.json's
// input_schema, and `yolop ext doctor` fails a tool whose derived input
// schema disagrees with plugin.json's. [Schema] returns the schema to paste
// into plugin.json.
//
// # Schemas
//
// The schema of a Go type is jsonschema-go's (see [jsonschema.For]): a
// struct is an object whose properties are its exported fields under their
// json names, each required unless tagged omitempty or omitzero, with no
// other properties allowed ("additionalProperties": false); a field's
// `jsonschema:"…"` tag is its description; a slice or a pointer also
// allows null. On top of that, a [json.RawMessage] field allows any JSON
// value. In must derive an object schema: a struct, or a map with string
// keys.
//
// # Results
//
// How the handler's Out reaches the [yep.ToolResult]:
//
//   - a yep.ToolResult is the result as it is (no output schema);
//   - a string is the result's output, the text the agent reads (no output
//     schema);
//   - anything else is encoded as JSON into the result's data, and the
//     output is its String method's text when Out implements
//     [fmt.Stringer], else the same JSON. Out's schema is the tool's
//     output_schema.
//
// A returned error is handled as [sdk.ToolHandler]'s: a plain error is a
// tool-level failure (is_error) the agent reads, a *[yep.Error] fails the
// request.
package typed

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
)

// A Handler runs one call of a typed tool with its decoded arguments. call
// is the raw call: its Update and Progress stream partial output from a
// tool registered with [AddStreamingTool].
type Handler[In, Out any] func(ctx context.Context, call *sdk.ToolCall, in In) (Out, error)

// AddTool registers the tool name on s with the schemas derived from In
// and Out. It panics, as [sdk.Server.Tool] does, on an empty or duplicate
// name or a nil handler, and also when In or Out has no JSON Schema (a
// channel, a func, a cycle of types) or In's schema is not an object.
func AddTool[In, Out any](s *sdk.Server, name string, h Handler[In, Out]) {
	add(s, "AddTool", name, false, h)
}

// AddStreamingTool is [AddTool] for a streaming tool, as
// [sdk.Server.StreamingTool]: the server announces "streaming" and the
// handler may call call.Update and call.Progress.
func AddStreamingTool[In, Out any](s *sdk.Server, name string, h Handler[In, Out]) {
	add(s, "AddStreamingTool", name, true, h)
}

// Schema returns the JSON Schema [AddTool] derives for T, as the
// handshake carries it: paste it into plugin.json as the tool's
// input_schema when T is the tool's In.
func Schema[T any]() (json.RawMessage, error) {
	sch, err := derive(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	return json.Marshal(sch)
}

var (
	rawType    = reflect.TypeFor[json.RawMessage]()
	resultType = reflect.TypeFor[yep.ToolResult]()
	stringType = reflect.TypeFor[string]()
)

// derive is jsonschema-go's schema of t, with json.RawMessage as any value.
func derive(t reflect.Type) (*jsonschema.Schema, error) {
	return jsonschema.ForType(t, &jsonschema.ForOptions{
		TypeSchemas: map[reflect.Type]*jsonschema.Schema{rawType: {}},
	})
}

func add[In, Out any](s *sdk.Server, fn, name string, streaming bool, h Handler[In, Out]) {
	what := fmt.Sprintf("typed.%s(%q)", fn, name)
	if h == nil {
		panic(fmt.Sprintf("%s needs a handler", what))
	}
	inType := reflect.TypeFor[In]()
	in, err := derive(inType)
	if err != nil {
		panic(fmt.Sprintf("%s: the argument type %s has no JSON Schema: %v", what, inType, err))
	}
	if in.Type != "object" {
		panic(fmt.Sprintf("%s: the argument type is %s; tool arguments are a JSON object, so it must be a struct or a map with string keys", what, inType))
	}
	resolved, err := in.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("%s: resolving the schema of %s: %v", what, inType, err))
	}
	opts := sdk.ToolOptions{Streaming: streaming}
	if opts.InputSchema, err = json.Marshal(in); err != nil {
		panic(fmt.Sprintf("%s: encoding the schema of %s: %v", what, inType, err))
	}
	outType := reflect.TypeFor[Out]()
	if outType != resultType && outType != stringType {
		out, err := derive(outType)
		if err != nil {
			panic(fmt.Sprintf("%s: the result type %s has no JSON Schema: %v", what, outType, err))
		}
		if opts.OutputSchema, err = json.Marshal(out); err != nil {
			panic(fmt.Sprintf("%s: encoding the schema of %s: %v", what, outType, err))
		}
	}
	s.ToolWith(name, func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
		args := call.Args
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage(`{}`)
		}
		var inst any
		if err := json.Unmarshal(args, &inst); err != nil {
			return yep.ToolResult{}, yep.Errorf(yep.CodeInvalidParams, "tool %q: invalid arguments: %v", call.Name, err)
		}
		if err := resolved.Validate(inst); err != nil {
			return yep.ToolResult{}, yep.Errorf(yep.CodeInvalidParams, "tool %q: invalid arguments: %s", call.Name, describe(err))
		}
		var v In
		if err := json.Unmarshal(args, &v); err != nil {
			// The schema admitted what In cannot hold (a number too large
			// for its integer type, say).
			return yep.ToolResult{}, yep.Errorf(yep.CodeInvalidParams, "tool %q: invalid arguments: %v", call.Name, err)
		}
		out, err := h(ctx, call, v)
		if err != nil {
			return yep.ToolResult{}, err
		}
		return result(out)
	}, opts)
}

// result turns a handler's Out into the tool result (see the package doc).
func result(out any) (yep.ToolResult, error) {
	switch o := out.(type) {
	case yep.ToolResult:
		return o, nil
	case string:
		return yep.ToolResult{Output: o}, nil
	}
	data, err := json.Marshal(out)
	if err != nil {
		return yep.ToolResult{}, fmt.Errorf("encoding the tool's result: %w", err)
	}
	text := string(data)
	if st, ok := out.(fmt.Stringer); ok && !isNilPointer(out) {
		text = st.String()
	}
	return yep.ToolResult{Output: text, Data: data}, nil
}

func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// validating matches the "validating <schema path>: " steps of a
// jsonschema-go validation error.
var validating = regexp.MustCompile(`validating (root|/[^:]*): `)

// describe shortens a validation error to the innermost place it names,
// as a field path: "at inner.unit: type: 5 has type "integer", want
// "string"". The library's own words are kept.
func describe(err error) string {
	msg := err.Error()
	steps := validating.FindAllStringSubmatchIndex(msg, -1)
	if len(steps) == 0 {
		return msg
	}
	last := steps[len(steps)-1]
	where, rest := msg[last[2]:last[3]], msg[last[1]:]
	if where == "root" {
		return rest
	}
	return "at " + fieldPath(where) + ": " + rest
}

// fieldPath turns a schema path such as /properties/a/items/properties/b
// into a[].b.
func fieldPath(ptr string) string {
	parts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	var out []string
	for i := 0; i < len(parts); i++ {
		switch p := parts[i]; {
		case p == "properties" && i+1 < len(parts):
			i++
			out = append(out, strings.NewReplacer("~1", "/", "~0", "~").Replace(parts[i]))
		case p == "items":
			out = append(out, "[]")
		case p == "additionalProperties":
			out = append(out, "*")
		default:
			out = append(out, p)
		}
	}
	return strings.ReplaceAll(strings.Join(out, "."), ".[]", "[]")
}
