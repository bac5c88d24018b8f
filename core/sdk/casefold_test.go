package sdk_test

import (
	"encoding/json"
	"strings"
	"testing"

	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
)

// TestToolCallKeysAreCaseSensitive sends tool/call params whose name key
// differs from "name" only in case: the server refuses them as invalid
// params instead of folding the key, as encoding/json would, so it reads
// the message the way a case-sensitive peer does.
func TestToolCallKeysAreCaseSensitive(t *testing.T) {
	s := sdk.NewServer(sdk.Info{Name: "echoer"}, quiet())
	s.Tool("echo", echoTool)
	h := serve(t, s)
	h.initialize(t)
	var res yep.ToolResult
	err := h.Call(ctxT(t), yep.MethodToolCall, json.RawMessage(`{"Name":"echo","args":{"text":"hi"}}`), &res)
	if wireCode(err) != yep.CodeInvalidParams || !strings.Contains(err.Error(), `key "Name" does not match field "name"`) {
		t.Fatalf("tool/call with key \"Name\" = %+v, %v; want invalid params naming the key", res, err)
	}
}
