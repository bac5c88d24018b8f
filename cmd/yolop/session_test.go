package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"yolop.dev/agent/scripted"
)

func TestSessionScriptedWithExtDir(t *testing.T) {
	pkg := echoPackage(t)
	script := strings.Join([]string{
		`/call echo {"text":"one"}`,
		"/reload echo",
		`/call echo {"text":"two"}`,
		"/disable echo",
		`/call echo {"text":"three"}`,
		"/enable echo",
		`/call echo {"text":"four"}`,
		"/status",
		"/quit",
		`/call echo {"text":"never"}`,
	}, "\n")
	out, errOut, code := cli(t, script, "session", "--ext", pkg, "--no-enabled")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"one\n", "reloaded echo", "two\n", "disabled echo; it leaves at the next turn",
		`error: no tool "echo" in this session; /tools lists them`, "enabled echo; it is live from the next turn", "four\n", "echo         ready"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "never") {
		t.Fatal("input after /quit ran")
	}
}

func TestSessionAsksOnTheTerminal(t *testing.T) {
	dir := askerPackage(t)
	in := "/call ask {\"prompt\":\"API token?\",\"secret\":true}\nhunter2\n/call ask {\"prompt\":\"colour?\"}\nblue\n/quit\n"
	out, errOut, code := cli(t, in, "session", "--ext", dir, "--no-enabled")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "[asker asks] API token?") || !strings.Contains(out, "(saved)") {
		t.Fatalf("secret question not shown or not acknowledged:\n%s", out)
	}
	if !strings.Contains(out, "answer: blue") {
		t.Fatalf("plain answer lost:\n%s", out)
	}
	// The secret answer reaches the server (its tool echoes it), but the
	// REPL itself never printed it as an answer line of its own.
	if strings.Count(out, "hunter2") != 1 {
		t.Fatalf("the secret appears %d times:\n%s", strings.Count(out, "hunter2"), out)
	}
}

// TestCtrlCCancelsTheCallNotTheSession runs the real binary (this test
// binary as yolop) with a pipe for stdin and sends SIGINT mid-call.
func TestCtrlCCancelsTheCallNotTheSession(t *testing.T) {
	pkg := echoPackage(t)
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "serve-echo")
	cmd.Args = []string{exe, "session", "--ext", pkg, "--no-enabled"}
	cmd.Env = append(os.Environ(), "YOLOP_TEST_CLI=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	wait := func(want string) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("output ended before %q", want)
				}
				if strings.Contains(l, want) {
					return
				}
			case <-deadline:
				t.Fatalf("no %q", want)
			}
		}
	}
	wait("yolop session:")
	io.WriteString(stdin, "/call count {\"n\":100000,\"delay_ms\":5}\n")
	wait("3")
	cmd.Process.Signal(syscall.SIGINT)
	wait("cancelled")
	io.WriteString(stdin, "/call echo {\"text\":\"still here\"}\n")
	wait("still here")
	io.WriteString(stdin, "/quit\n")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("session exited with %v", err)
	}
}

// The runtime's errors name no REPL command; the REPL adds the one that
// helps, matched by the runtime's sentinel errors.
func TestREPLHintsFollowTheSentinels(t *testing.T) {
	pkg := echoPackage(t)
	script := "/call nosuch {}\n/echo:nosuch\n/reload ghost\n/quit\n"
	out, errOut, code := cli(t, script, "session", "--ext", pkg, "--no-enabled")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	mustContain(t, "session", out, `no tool "nosuch" in this session; /tools lists them`, "/commands lists them", "/status lists the extensions")
}

// Arguments are checked against the tool's approved input_schema before
// they leave the host: a missing or misspelt field is an error naming it,
// and the server is never called.
func TestCallArgumentsAreValidated(t *testing.T) {
	pkg := echoPackage(t)
	script := `/call echo {"txt":"hi"}` + "\n" + `/call count {"n":"three"}` + "\n/status\n" + `/call echo {"text":"ok"}` + "\n/quit\n"
	out, errOut, code := cli(t, script, "session", "--ext", pkg, "--no-enabled")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	mustContain(t, "session", out, `arguments of tool "echo": `, "missing property 'text'", `txt: unknown argument (did you mean "text"?)`,
		`arguments of tool "count": n:`, "calls=0", "\nok\n")
}

// An --ext package whose server binary is missing, when it is all the
// session was asked for: one clear error, exit status 1, no REPL. Beside
// other extensions it is a single warning and the session runs.
func TestExtDirWithoutItsBinary(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "plugin.json"), fileBytes(t, "demo/plugin.json"), 0o644)
	out, errOut, code := cli(t, "/quit\n", "session", "--ext", dir, "--no-enabled")
	if code == 0 {
		t.Fatalf("a session of one broken --ext package succeeded:\n%s", out)
	}
	if n := strings.Count(out+errOut, `command not found: "yolop-extension-echo"`); n != 1 {
		t.Fatalf("the error shows %d times:\n%s\n%s", n, out, errOut)
	}
	if strings.Count(errOut, `extension "echo": extension "echo"`) > 0 || strings.Contains(out, "yolop session:") && strings.Contains(out, "extension(s)") {
		t.Fatalf("doubled prefix or a REPL started:\n%s\n%s", out, errOut)
	}
	good := echoPackage(t)
	// Rename the good one so the two do not collide.
	m := fileBytes(t, filepath.Join(good, "plugin.json"))
	os.WriteFile(filepath.Join(good, "plugin.json"), []byte(strings.Replace(string(m), `"name": "echo"`, `"name": "echo2"`, 1)), 0o644)
	out, errOut, code = cli(t, `/call echo2__echo {"text":"still"}`+"\n/quit\n", "session", "--ext", dir, "--ext", good, "--no-enabled")
	if code != 0 {
		t.Fatalf("one broken package among others stopped the session: %s", errOut)
	}
	if n := strings.Count(out+errOut, "command not found"); n != 1 || !strings.Contains(out, "\nstill\n") {
		t.Fatalf("the error shows %d times, or the good package did not answer:\n%s\n%s", n, out, errOut)
	}
}

// TestJSONErrorNamesTheFailedCall: under --json, the error event of a
// failed tool call carries the call's tool and call_id, as its result or
// update events would, so a reader can tell which call failed.
func TestJSONErrorNamesTheFailedCall(t *testing.T) {
	pkg := echoPackage(t)
	script := `/call echo {"txt":"hi"}` + "\n" + `/call nosuch {}` + "\n/quit\n"
	out, errOut, code := cli(t, script, "session", "--ext", pkg, "--no-enabled", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var errs []map[string]any
	for _, ev := range events(t, out) {
		if ev["event"] == "error" {
			errs = append(errs, ev)
		}
	}
	if len(errs) != 2 {
		t.Fatalf("error events = %v, want one for each failed call\n%s", errs, out)
	}
	for i, tool := range []string{"echo", "nosuch"} {
		id, _ := errs[i]["call_id"].(string)
		if errs[i]["tool"] != tool || !strings.HasPrefix(id, "call-") {
			t.Errorf("error event %v: want tool %q and its call_id", errs[i], tool)
		}
	}
}

// sessionScript is what the model of TestSessionTalksToTheModel answers.
const sessionScript = `{"steps": [
	{"name": "count", "when": {"user": "count to 3"}, "reply": {"text": "Counting.", "tool_calls": [{"name": "count", "arguments": {"n": 3}}]}},
	{"name": "counted", "when": {"tool_result": {"tool": "count", "contains": "counted to 3"}}, "reply": {"text": "Counted to 3 for you."}},
	{"name": "long", "when": {"user": "echo a long line"}, "reply": {"tool_calls": [{"name": "echo", "arguments": {"text": "LONG"}}]}},
	{"name": "echoed", "when": {"tool_result": {"tool": "echo", "contains": "éé"}}, "reply": {"text": "Echoed."}},
	{"name": "forever", "when": {"user": "count forever"}, "reply": {"text": "Here goes.", "tool_calls": [{"name": "count", "arguments": {"n": 100000, "delay_ms": 5}}]}},
	{"name": "after the cancel", "when": {"user": "The user ran /echo:greet tester; it answered: hello, tester"},
	 "reply": {"text": "Still here; the greeting said hello, tester."}}
]}`

// TestSessionTalksToTheModel runs the real binary (this test binary as
// yolop) with --model against a scripted model on loopback, named by
// OPENAI_BASE_URL: a plain line is a user message whose turn streams its
// text and its tool call (count's numbers as they come); Ctrl-C (SIGINT)
// mid-turn cancels the turn and not the session; a slash command's result
// reaches the model with the next message.
func TestSessionTalksToTheModel(t *testing.T) {
	isolate(t)
	script, err := scripted.Parse([]byte(strings.Replace(sessionScript, "LONG", strings.Repeat("é", 150), 1)))
	if err != nil {
		t.Fatal(err)
	}
	srv := scripted.NewServer(script, scripted.Options{APIKey: "sk-session-test"})
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t.Setenv("OPENAI_BASE_URL", srv.URL()+"/v1")
	t.Setenv("OPENAI_API_KEY", "sk-session-test")
	t.Setenv("YOLOP_MODEL", "")

	p := startProc(t, "session", "--ext", echoPackage(t), "--no-enabled", "--model", "openai/scripted", "--workspace", t.TempDir())
	p.wait("model openai/scripted")
	p.send("count to 3, please")
	turn := p.wait("(2 model requests, 1 tool call")
	mustContain(t, "the turn", turn, "Counting.\n→ count {\"n\":3}\n1\n2\n3\n← count: ok\nCounted to 3 for you.\n")

	// A call's line shows the start of long arguments and their size.
	p.send("echo a long line")
	line := p.wait("→ echo")
	if want := `→ echo {"text":"` + strings.Repeat("é", 95) + `… (311 bytes)`; !strings.Contains(line, want+"\n") {
		t.Errorf("the long call's line is not clipped to %q:\n%s", want, line)
	}
	p.wait("Echoed.")

	p.send("count forever")
	p.wait(`→ count {"n":100000,"delay_ms":5}`)
	p.wait("3")
	p.cmd.Process.Signal(syscall.SIGINT)
	p.wait("← count: cancelled")
	p.wait("cancelled: the turn stopped")

	p.send("/echo:greet tester")
	p.wait("hello, tester")
	p.send("are you still there?")
	p.wait("Still here; the greeting said hello, tester.")
	p.send("/quit")
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("session exited with %v", err)
	}
	if err := srv.Verify(); err != nil {
		t.Fatal(err)
	}
	// The turn after the cancel went on from a consistent conversation:
	// the cancelled call was answered as such.
	reqs := srv.Requests()
	last := reqs[len(reqs)-1].Chat
	cancelled := false
	for _, m := range last.Messages {
		if m.Role == "tool" && strings.Contains(m.Text(), "cancelled") {
			cancelled = true
		}
	}
	if !cancelled {
		t.Errorf("the request after the cancel carries no cancelled tool result: %+v", last.Messages)
	}
}

// TestSessionWithoutAModel: a plain line says how to configure a model,
// and the session goes on; a configured model that does not resolve is a
// warning saying why, and the session runs without one; a --model that
// names no provider is refused before the session starts, saying what to
// write.
func TestSessionWithoutAModel(t *testing.T) {
	cfg := isolate(t)
	t.Setenv("YOLOP_MODEL", "")
	out, errOut, code := cli(t, "hello there\n/help\n/quit\n", "session", "--ext", echoPackage(t), "--no-enabled")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	mustContain(t, "session", out, "error: no model is configured", "`yolop model`", "[model] in settings.toml", "--model <provider>/<model>",
		"no model is configured: configure one")
	if strings.Contains(out, "read_file") {
		t.Errorf("a session without a model has the coding tools:\n%s", out)
	}
	os.WriteFile(filepath.Join(cfg, "settings.toml"), []byte("[model]\nprovider = \"openai\"\nmodel = \"gpt-4.1\"\nmax_tokens = \"lots\"\n"), 0o600)
	out, errOut, code = cli(t, "hello there\n/quit\n", "session", "--no-enabled")
	if code != 0 {
		t.Fatalf("a malformed [model] stopped the session: exit %d: %s", code, errOut)
	}
	mustContain(t, "session", out, "warning: no model for this session: ", "max_tokens", "error: no model is configured")
	os.Remove(filepath.Join(cfg, "settings.toml"))
	_, errOut, code = cli(t, "/quit\n", "session", "--no-enabled", "--model", "gpt-4.1")
	if code == 0 || !strings.Contains(errOut, "gpt-4.1") || !strings.Contains(errOut, "openai/") {
		t.Fatalf("--model gpt-4.1: exit %d: %s", code, errOut)
	}
}

// proc is the yolop binary (this test binary) running with piped stdin and
// stdout.
type proc struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.Writer
	lines chan string
}

func startProc(t *testing.T, args ...string) *proc {
	t.Helper()
	exe, _ := os.Executable()
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "YOLOP_TEST_CLI=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	p := &proc{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 1000)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	return p
}

func (p *proc) send(line string) { io.WriteString(p.stdin, line+"\n") }

// wait returns the output up to and including the first line holding
// want.
func (p *proc) wait(want string) string {
	p.t.Helper()
	var seen strings.Builder
	deadline := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("output ended before %q:\n%s", want, seen.String())
			}
			seen.WriteString(l + "\n")
			if strings.Contains(l, want) {
				return seen.String()
			}
		case <-deadline:
			p.t.Fatalf("no %q:\n%s", want, seen.String())
		}
	}
}

// askerPackage is a package directory whose python3 server (core/host's
// test server) has the ask tool and may ask the user (ui_ask).
func askerPackage(t *testing.T) string {
	t.Helper()
	script, err := filepath.Abs("../../core/host/testdata/server.py")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	manifest := `{"name":"asker","version":"0.1.0","yolop":{"protocol_version":"1.0",
	  "capabilityServer":{"command":"python3","args":["-u",` + strconv.Quote(script) + `],"env":{"YEP_TEST_SPEC":"{\"capabilities\":[\"tools\",\"ui_ask\"]}"}},
	  "sandbox":{"fs":[{"path":` + strconv.Quote(script) + `}]},
	  "ui_ask":true,"tools":[{"name":"ask","never_defer":true}]}}`
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
