package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A session recorded with --record on the echo example replays green
// against the same build: the recording holds the handshake, the calls
// with their streamed updates, the hook firings and the shutdown.
func TestRecordAndReplayTheEchoExample(t *testing.T) {
	isolate(t)
	pkg := echoPackage(t)
	file := filepath.Join(t.TempDir(), "echo.txtar")
	script := `/call echo {"text":"one"}` + "\n" + `/call count {"n":3,"delay_ms":1}` + "\n/quit\n"
	out, errOut, code := cli(t, script, "session", "--ext", pkg, "--no-enabled", "--no-mcp", "--record", file)
	if code != 0 {
		t.Fatalf("session exit %d: %s\n%s", code, errOut, out)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("--record wrote no file: %v", err)
	}
	rec := string(data)
	mustContain(t, "recording", rec, "volatile: id, ", "-- echo --\n", `→ {"jsonrpc":"2.0","id":1,"method":"initialize"`,
		`"method":"tool/call"`, `"method":"tool/update"`, `"method":"hook/fire"`, `"method":"shutdown"`, `← {"jsonrpc":"2.0","id":1,"result":`)

	out, errOut, code = cli(t, "", "ext", "replay", file, pkg)
	if code != 0 {
		t.Fatalf("replay against the same build: exit %d: %s\n%s\nrecording:\n%s", code, errOut, out, rec)
	}
	mustContain(t, "replay", out, "replay: echo matches "+file)
}

// shouterPackage is a package of testdata/replayserver.py, a raw-protocol
// Python server, whose tool answers with suffix.
func shouterPackage(t *testing.T, dir, suffix string) {
	t.Helper()
	src, err := os.ReadFile("testdata/replayserver.py")
	if err != nil {
		t.Fatal(err)
	}
	code := strings.Replace(string(src), `SUFFIX = "!"`, `SUFFIX = "`+suffix+`"`, 1)
	if err := os.WriteFile(filepath.Join(dir, "server.py"), []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	manifest := `{"name":"shouter","version":"0.1.0","yolop":{"protocol_version":"1.0",
	  "capabilityServer":{"command":"python3","args":["-u","server.py"]},
	  "tools":[{"name":"shout","never_defer":true,"input_schema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}}`
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A session with a Python server replays green against it; once the
// server answers differently, replay exits 1 naming the recorded line,
// the expected and the received message.
func TestReplayReportsADivergenceOfAPythonServer(t *testing.T) {
	isolate(t)
	pkg := t.TempDir()
	shouterPackage(t, pkg, "!")
	file := filepath.Join(t.TempDir(), "shouter.txtar")
	out, errOut, code := cli(t, `/call shout {"text":"hello"}`+"\n/quit\n", "session", "--ext", pkg, "--no-enabled", "--no-mcp", "--record", file)
	if code != 0 {
		t.Fatalf("session exit %d: %s\n%s", code, errOut, out)
	}
	mustContain(t, "session", out, "HELLO!")

	out, errOut, code = cli(t, "", "ext", "replay", file, pkg)
	if code != 0 {
		data, _ := os.ReadFile(file)
		t.Fatalf("replay against the same server: exit %d: %s\n%s\nrecording:\n%s", code, errOut, out, data)
	}
	mustContain(t, "replay", out, "replay: shouter matches")

	shouterPackage(t, pkg, "?") // a new build answers differently
	out, errOut, code = cli(t, "", "ext", "replay", file, pkg)
	if code != 1 {
		t.Fatalf("replay against a changed server: exit %d, want 1: %s\n%s", code, errOut, out)
	}
	data, _ := os.ReadFile(file)
	line := 0
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, `"output":"HELLO!"`) {
			line = i + 1
		}
	}
	if line == 0 {
		t.Fatalf("the recording has no HELLO! answer:\n%s", data)
	}
	mustContain(t, "divergence", out, file+": shouter diverges at line "+strconv.Itoa(line)+": result.output: want \"HELLO!\", got \"HELLO?\"",
		`want ← {"jsonrpc":"2.0","id":`, `"output":"HELLO!"`, `got  ← {"jsonrpc":"2.0","id":`, `"output":"HELLO?"`)
	mustContain(t, "divergence", errOut, "yolop session --record "+file)
}

// validate-wire passes the dialogue goldens and fails a transcript with a
// nonconforming message, naming its line and what is wrong.
func TestValidateWire(t *testing.T) {
	isolate(t)
	goldens, err := filepath.Glob("../../schema/yep/v1/dialogues/*.txtar")
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no goldens: %v", err)
	}
	out, errOut, code := cli(t, "", append([]string{"ext", "validate-wire"}, goldens...)...)
	if code != 0 {
		t.Fatalf("goldens: exit %d: %s\n%s", code, errOut, out)
	}
	mustContain(t, "goldens", out, "tool_call.txtar: 16 messages (7 host→server, 9 server→host) conform")

	bad := filepath.Join(t.TempDir(), "bad.txtar")
	if err := os.WriteFile(bad, []byte(`→ {"jsonrpc":"2.0","id":1,"method":"tool/call","params":{"tool_call_id":"c","name":"echo","args":{}}}
← {"jsonrpc":"2.0","id":1,"result":{"output":5}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = cli(t, "", "ext", "validate-wire", bad)
	if code != 1 {
		t.Fatalf("bad transcript: exit %d, want 1: %s\n%s", code, errOut, out)
	}
	mustContain(t, "bad transcript", out, bad+":line 2: error: server→host response to tool/call: result at /output")
	mustContain(t, "bad transcript", errOut, "1 file(s) hold messages that do not conform")
}
