package jsonrpc

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestResultKeysAreCaseSensitive: a result member spelled in another case
// than the field it would fill is refused, not folded into the field, so
// the host reads a server's answer the way a case-sensitive SDK does (one
// message, one meaning).
func TestResultKeysAreCaseSensitive(t *testing.T) {
	c, _ := pair(t, Options{}, Options{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		return json.RawMessage(`{"OUTPUT":"folded"}`), nil
	})})
	var res struct {
		Output string `json:"output"`
	}
	err := c.Call(context.Background(), "tool", nil, &res)
	if err == nil {
		t.Fatalf("call decoded %+v from a result whose key is \"OUTPUT\", want an error", res)
	}
	if !strings.Contains(err.Error(), "tool: decoding result") || !strings.Contains(err.Error(), `"OUTPUT"`) {
		t.Fatalf("err = %q, want it to name the call and the key", err)
	}
}
