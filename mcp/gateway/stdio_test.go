package gateway_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"

	"yolop.dev/mcp/internal/testpkg"
)

// TestStdioMalformedLines drives the gateway over stdio in a real process
// (gatewaycmd serving the echo example, as `yolop mcp serve` does): each
// malformed line — not JSON, JSON that is no JSON-RPC message, a request
// whose method is not a string, an array nested 20,000 deep, an empty batch,
// a truncated object, a 17 MiB line — is answered with -32700 or -32600 and skipped, and the session goes on:
// initialize, tools/list and tools/call all answer afterwards, with one more
// bad line between them.
func TestStdioMalformedLines(t *testing.T) {
	_, dir := testpkg.EchoDir(t)
	cmd := exec.Command(testpkg.Bin("gatewaycmd"), dir)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	// stderrText ends the process first: its stderr is complete then, and
	// read by no one else.
	stderrText := func() string {
		in.Close()
		cmd.Wait()
		return stderr.String()
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	type reply struct {
		ID     any             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	// roundTrip sends line and reads the next reply (skipping
	// notifications); EOF means the gateway exited.
	roundTrip := func(line string) reply {
		t.Helper()
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			t.Fatalf("writing %.40q: %v (stderr: %s)", line, err, stderrText())
		}
		for sc.Scan() {
			var r reply
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("gateway wrote %q: %v", sc.Text(), err)
			}
			if r.ID != nil || r.Error != nil || r.Result != nil {
				return r
			}
		}
		t.Fatalf("after %.40q the gateway closed stdout (%v); stderr: %s", line, sc.Err(), stderrText())
		return reply{}
	}
	bad := []struct {
		name, line string
		code       int64
		id         any
	}{
		{"not JSON", "this is not JSON", -32700, nil},
		{"not a message", `{"hello":1}`, -32600, nil},
		{"method not a string", `{"jsonrpc":"2.0","id":7,"method":5}`, -32600, float64(7)},
		{"deep array", strings.Repeat("[", 20000) + strings.Repeat("]", 20000), -32700, nil},
		{"empty batch", `[]`, -32600, nil},
		{"truncated", `{"jsonrpc":"2.0","id":1,"method":"initialize"`, -32700, nil},
		{"over 16 MiB", `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":"` + strings.Repeat("x", 17<<20) + `"}}`, -32600, nil},
	}
	for _, b := range bad {
		r := roundTrip(b.line)
		if r.Error == nil || r.Error.Code != b.code || r.ID != b.id {
			t.Fatalf("%s: reply %+v; want error %d with id %v", b.name, r, b.code, b.id)
		}
	}
	r := roundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if r.Error != nil || r.ID != float64(1) {
		t.Fatalf("initialize = %+v", r)
	}
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	if r := roundTrip(`{"hello":2}`); r.Error == nil || r.Error.Code != -32600 {
		t.Fatalf("bad line after initialize = %+v", r)
	}
	r = roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if r.Error != nil || r.ID != float64(2) || !strings.Contains(string(r.Result), `"echo"`) {
		t.Fatalf("tools/list = %+v %s", r, r.Result)
	}
	r = roundTrip(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}}}`)
	if r.Error != nil || r.ID != float64(3) || !strings.Contains(string(r.Result), "still here") {
		t.Fatalf("tools/call = %+v %s", r, r.Result)
	}
}
