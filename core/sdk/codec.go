package sdk

import (
	"encoding/json"

	"yolop.dev/core/yep"
)

// decodeToolCall decodes tool/call params.
func decodeToolCall(params json.RawMessage, p *yep.ToolCallParams) error {
	return decodeParams(params, p)
}

// encodeToolResult encodes a tool result for the response.
func encodeToolResult(r yep.ToolResult) any {
	return r
}
