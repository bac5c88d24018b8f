package sdk

import (
	"encoding/json"
	"strings"
	"testing"

	"yolop.dev/core/yep"
)

type echoArgs struct {
	Text string `json:"text"`
}

type upperText string

func (u *upperText) UnmarshalText(b []byte) error {
	*u = upperText(strings.ToUpper(string(b)))
	return nil
}

type customField struct {
	U upperText `json:"u"`
}

// TestBindErrorsStayEncodingJSONs checks that arguments get encoding/json's
// decoding and its error.
func TestBindErrorsStayEncodingJSONs(t *testing.T) {
	c := &ToolCall{Name: "echo", Args: json.RawMessage(`{"text":1}`)}
	var a echoArgs
	err := c.Bind(&a)
	if err == nil || !strings.Contains(err.Error(), `tool "echo": decoding arguments: json: cannot unmarshal number`) {
		t.Fatalf("Bind of a number into a string: %v", err)
	}
	c.Args = json.RawMessage(`{"u":"up"}`)
	var cf customField
	if err := c.Bind(&cf); err != nil || cf.U != "UP" {
		t.Fatalf("Bind with a TextUnmarshaler field = %+v, %v; want the method used", cf, err)
	}
}

// TestEncodeToolResultReportsInvalidData checks that a result whose data
// is not JSON is reported to the agent, not sent.
func TestEncodeToolResultReportsInvalidData(t *testing.T) {
	got := encodeToolResult(yep.ToolResult{Output: "x", Data: json.RawMessage(`{bad`)})
	if !json.Valid(got) || !strings.Contains(string(got), "invalid data") {
		t.Errorf("invalid data encoded as %s", got)
	}
	got = encodeToolResult(yep.ToolResult{Output: "<&>", IsError: true, Data: json.RawMessage(`{"k":[1,2]}`)})
	if want := `{"output":"<&>","is_error":true,"data":{"k":[1,2]}}`; string(got) != want {
		t.Errorf("encodeToolResult = %s, want %s", got, want)
	}
}
