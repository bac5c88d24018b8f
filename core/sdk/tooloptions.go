package sdk

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"slices"

	"yolop.dev/core/internal/json"
)

// ToolOptions are the optional parts of a tool registration with
// [Server.ToolWith]. The zero value registers a plain tool, as
// [Server.Tool] does.
type ToolOptions struct {
	// Streaming makes the tool a streaming one, as [Server.StreamingTool]
	// does: the server announces "streaming" and the handler may send
	// [ToolCall.Update] and [ToolCall.Progress].
	Streaming bool
	// InputSchema is the JSON Schema of the tool's arguments as the server
	// derived it (typically from the handler's argument type, see the
	// yolop.dev/sdk/typed module). It travels in the handshake as the
	// tool's capability_params.tools[].input_schema. It is informative:
	// the host keeps validating calls against the manifest's input_schema,
	// and `yolop ext doctor` fails the tool when the two disagree. Nil
	// sends none. The SDK does not validate arguments against it.
	InputSchema json.RawMessage
	// OutputSchema is the JSON Schema of the tool's structured result
	// (ToolResult.Data), sent as output_schema the same way; informative
	// only. Nil sends none.
	OutputSchema json.RawMessage
}

// ToolWith registers a tool with options: [Server.Tool] and
// [Server.StreamingTool] plus the derived schemas the handshake carries.
// It panics if name is empty or already registered, h is nil, or a schema
// is not a JSON object.
func (s *Server) ToolWith(name string, h ToolHandler, opts ToolOptions) {
	s.addTool(fmt.Sprintf("ToolWith(%q)", name), name, h, opts)
}

// schemaOption checks that a schema option is a JSON object and returns
// it compacted (the handshake is one line), or nil when unset.
func schemaOption(what, field string, raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	var obj map[string]stdjson.RawMessage
	if err := stdjson.Unmarshal(raw, &obj); err != nil || obj == nil {
		panic(fmt.Sprintf("sdk: %s: ToolOptions.%s must be a JSON Schema object, got %q", what, field, raw))
	}
	var b bytes.Buffer
	if err := stdjson.Compact(&b, raw); err != nil {
		panic(fmt.Sprintf("sdk: %s: ToolOptions.%s: %v", what, field, err))
	}
	return slices.Clip(b.Bytes())
}
