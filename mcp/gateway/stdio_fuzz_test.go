package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzLineFilter feeds the stdio line filter arbitrary client input: every
// line it passes on decodes as a JSON-RPC message or batch, every answer
// it writes is a JSON-RPC error response, and it never blocks or panics.
func FuzzLineFilter(f *testing.F) {
	for _, s := range []string{
		"this is not JSON\n",
		`{"hello":1}` + "\n",
		`{"jsonrpc":"2.0","id":7,"method":5}` + "\n",
		strings.Repeat("[", 20000) + "\n",
		"[]\n",
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"x":1}]` + "\n",
		`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		"\"\u202e\"\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var answers bytes.Buffer
		lf := &lineFilter{r: bufio.NewReader(bytes.NewReader(in)), w: &answers, max: 1 << 10, log: hclog.NewNullLogger()}
		passed, err := io.ReadAll(lf)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(passed, []byte("\n")), []byte("\n")) {
			if len(passed) == 0 {
				break
			}
			if _, code, msg := check(line); code != 0 {
				t.Fatalf("passed %q, which check refuses: %s", line, msg)
			}
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(answers.Bytes(), []byte("\n")), []byte("\n")) {
			if answers.Len() == 0 {
				break
			}
			var r struct {
				JSONRPC string         `json:"jsonrpc"`
				Error   *jsonrpc.Error `json:"error"`
			}
			err := json.Unmarshal(line, &r)
			if err != nil || r.JSONRPC != "2.0" || r.Error == nil || r.Error.Code != jsonrpc.CodeParseError && r.Error.Code != jsonrpc.CodeInvalidRequest {
				t.Fatalf("answer %q is not a JSON-RPC error response: %v", line, err)
			}
		}
	})
}
