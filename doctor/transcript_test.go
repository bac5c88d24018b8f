package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckTranscriptPassesTheGoldens: every dialogue golden conforms, and
// every one of its messages is counted.
func TestCheckTranscriptPassesTheGoldens(t *testing.T) {
	files, err := filepath.Glob("../schema/yep/v1/dialogues/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no goldens: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := CheckTranscript(strings.NewReader(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Count(string(data), "\n→ ") + strings.Count(string(data), "\n← ")
		if rep.Messages != want || rep.ToServer+rep.ToHost != want || rep.ToServer == 0 || rep.ToHost == 0 {
			t.Errorf("%s: counted %d messages (%d→, %d←), want %d", f, rep.Messages, rep.ToServer, rep.ToHost, want)
		}
		if len(rep.Problems) != 0 || rep.Failed() {
			t.Errorf("%s: %v", f, rep.Problems)
		}
	}
}

// TestCheckTranscriptFindsFaults: each fault is reported on its own line
// with what is wrong, and only the tolerated ones are minor.
func TestCheckTranscriptFindsFaults(t *testing.T) {
	transcript := `prose before the first section is skipped
-- one --
→ {"jsonrpc":"2.0","id":1,"method":"tool/call","params":{"tool_call_id":"c","name":"echo","args":{}}}
← {"jsonrpc":"2.0","id":1,"result":{"output":5}}
← {"jsonrpc":"2.0","id":9,"method":"tool/call","params":{"tool_call_id":"c","name":"echo","args":{}}}
← not json
← {"id":2,"method":"log","params":{"level":"info","message":"m"}}
-- two --
← {"jsonrpc":"2.0","id":1,"result":{"output":"x"}}
`
	rep, err := CheckTranscript(strings.NewReader(transcript))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Messages != 6 || rep.ToServer != 1 || rep.ToHost != 5 {
		t.Fatalf("counted %+v", rep)
	}
	if !rep.Failed() {
		t.Fatal("a transcript with errors did not fail")
	}
	var got []string
	for _, p := range rep.Problems {
		got = append(got, p.String())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"line 4: error: server→host response to tool/call: result at /output",
		"line 5: error: server→host tool/call: tool/call is sent host to server, never by the server",
		"line 6: error: server→host stdout: the server printed a line that is not a JSON-RPC message",
		"line 7: warning: server→host envelope: message without \"jsonrpc\"",
		"line 7: error: server→host log: log is a notification but was sent as a request",
		// The second section's id 1 answers nothing in flight there.
		"line 9: warning: server→host response: answers id 1",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in:\n%s", want, all)
		}
	}
}

// TestCheckTranscriptMinorOnly: a transcript whose only problems the host
// tolerates does not fail.
func TestCheckTranscriptMinorOnly(t *testing.T) {
	rep, err := CheckTranscript(strings.NewReader(`← {"method":"log","params":{"level":"info","message":"m"}}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 1 || !rep.Problems[0].Minor || rep.Failed() {
		t.Fatalf("problems %v, failed %v; want one minor problem and no failure", rep.Problems, rep.Failed())
	}
}
