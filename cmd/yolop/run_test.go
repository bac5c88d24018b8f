package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"yolop.dev/agent/scripted"
)

// runEnv points the CLI at a new config directory and home and clears the
// model variables; it returns the config directory.
func runEnv(t *testing.T) string {
	t.Helper()
	cfg := t.TempDir()
	t.Setenv("YOLOP_CONFIG_DIR", cfg)
	t.Setenv("HOME", t.TempDir())
	for _, k := range []string{"YOLOP_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"} {
		t.Setenv(k, "")
	}
	return cfg
}

// modelServer serves script on loopback and points OPENAI_BASE_URL at it.
func modelServer(t *testing.T, script string, o scripted.Options) *scripted.Server {
	t.Helper()
	sc, err := scripted.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	srv := scripted.NewServer(sc, o)
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	t.Setenv("OPENAI_BASE_URL", srv.URL()+"/v1")
	return srv
}

// noteScript writes a file with write_file, reads it back with read_file
// and answers with what it read.
const noteScript = `{"steps": [
	{"name": "write", "when": {"user": "leave a note"},
	 "reply": {"tool_calls": [{"name": "write_file", "arguments": {"path": "note.txt", "content": "hello from the model\n"}}]}},
	{"name": "read", "when": {"tool_result": {"tool": "write_file"}},
	 "reply": {"tool_calls": [{"name": "read_file", "arguments": {"path": "note.txt"}}]}},
	{"name": "answer", "when": {"tool_result": {"tool": "read_file", "contains": "hello from the model"}},
	 "reply": {"text": "The note says: hello from the model", "usage": {"prompt_tokens": 120, "completion_tokens": 9, "cached_tokens": 64}}}
]}`

// TestRunPrintsTheAnswer: one headless turn against a scripted model
// calls two built-in tools in the workspace and prints the answer.
func TestRunPrintsTheAnswer(t *testing.T) {
	runEnv(t)
	srv := modelServer(t, noteScript, scripted.Options{})
	ws := t.TempDir()
	out, errOut, code := cli(t, "", "run", "-p", "leave a note", "--model", "openai/scripted", "--workspace", ws, "--no-mcp")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if want := "The note says: hello from the model\n"; out != want {
		t.Errorf("stdout = %q, want %q", out, want)
	}
	if got, err := os.ReadFile(filepath.Join(ws, "note.txt")); err != nil || string(got) != "hello from the model\n" {
		t.Errorf("note.txt = %q, %v", got, err)
	}
	if err := srv.Verify(); err != nil {
		t.Error(err)
	}
}

// TestRunJSON: --json prints the turn's typed events, one per line, then
// the result.
func TestRunJSON(t *testing.T) {
	runEnv(t)
	modelServer(t, noteScript, scripted.Options{})
	out, errOut, code := cli(t, "", "run", "-p", "leave a note", "--model", "openai/scripted", "--workspace", t.TempDir(), "--no-mcp", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	evs := events(t, out)
	seen := map[string]int{}
	var tools []string
	for _, ev := range evs {
		kind, _ := ev["event"].(string)
		seen[kind]++
		if kind == "tool.started" {
			d, _ := ev["data"].(map[string]any)
			name, _ := d["tool"].(string)
			tools = append(tools, name)
		}
	}
	for _, want := range []string{"turn.started", "reason.started", "reason.completed", "llm.generation", "act.started", "act.completed", "tool.started", "tool.completed", "text.delta", "turn.completed", "result"} {
		if seen[want] == 0 {
			t.Errorf("no %s event in:\n%s", want, out)
		}
	}
	if seen["reason.started"] != 3 || seen["llm.generation"] != 3 || seen["act.started"] != 2 {
		t.Errorf("3 model requests and 2 acts expected: %v", seen)
	}
	if strings.Join(tools, ",") != "write_file,read_file" {
		t.Errorf("tool.started for %v", tools)
	}
	last := evs[len(evs)-1]
	if last["event"] != "result" || last["answer"] != "The note says: hello from the model" || last["stop"] != "stop" ||
		last["steps"] != 3.0 || last["tool_calls"] != 2.0 || last["model"] != "openai/scripted" {
		t.Errorf("result line = %v", last)
	}
	if u, _ := last["usage"].(map[string]any); u["output_tokens"] == 0.0 || u["cached_input_tokens"] != 64.0 {
		t.Errorf("result usage = %v", last["usage"])
	}
	// Same shape as yolop session --json: the trace/event params plus
	// "event".
	for _, ev := range evs[:len(evs)-1] {
		if ev["event"] != "warning" && ev["type"] != ev["event"] {
			t.Errorf("event %v has type %v", ev["event"], ev["type"])
		}
	}
}

// TestRunAuthFailure: a key the provider refuses exits 1 with the
// provider's advice and where the key came from on stderr.
func TestRunAuthFailure(t *testing.T) {
	runEnv(t)
	modelServer(t, noteScript, scripted.Options{APIKey: "the-right-key"})
	t.Setenv("OPENAI_API_KEY", "a-wrong-key")
	out, errOut, code := cli(t, "", "run", "-p", "leave a note", "--model", "openai/scripted", "--workspace", t.TempDir(), "--no-mcp")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stdout %q stderr %q", code, out, errOut)
	}
	for _, want := range []string{"refused the key", "401", "OPENAI_API_KEY"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q: %s", want, errOut)
		}
	}
	if strings.Contains(errOut+out, "a-wrong-key") {
		t.Fatal("the key was printed")
	}

	t.Setenv("OPENAI_API_KEY", "")
	_, errOut, code = cli(t, "", "run", "-p", "leave a note", "--model", "openai/scripted", "--workspace", t.TempDir(), "--no-mcp", "--json")
	if code != 1 || !strings.Contains(errOut, "no API key is set") || !strings.Contains(errOut, "yolop model key openai") {
		t.Fatalf("no key: exit %d, stderr %s", code, errOut)
	}
}

// TestRunStopsAtMaxSteps: a turn that reaches --max-steps ends with exit
// status 0, a warning, and stop "max_steps" in the result.
func TestRunStopsAtMaxSteps(t *testing.T) {
	runEnv(t)
	modelServer(t, `{"steps": [{"when": {"any": true}, "repeat": true,
		"reply": {"text": "Looking.", "tool_calls": [{"name": "list_files", "arguments": {}}]}}]}`, scripted.Options{})
	out, errOut, code := cli(t, "", "run", "-p", "look around", "--model", "openai/scripted", "--workspace", t.TempDir(), "--no-mcp", "--max-steps", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	evs := events(t, out)
	last := evs[len(evs)-1]
	if last["stop"] != "max_steps" || last["steps"] != 2.0 {
		t.Errorf("result = %v", last)
	}
	warned := false
	for _, ev := range evs {
		if ev["event"] == "warning" && strings.Contains(ev["message"].(string), "--max-steps") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no --max-steps warning in:\n%s", out)
	}
	out, errOut, code = cli(t, "", "run", "-p", "look around", "--model", "openai/scripted", "--workspace", t.TempDir(), "--no-mcp", "--max-steps", "1")
	if code != 0 || !strings.Contains(errOut, "--max-steps") || out != "Looking.\n" {
		t.Errorf("text mode: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestRunRefusesBadInput: no message, and a model that cannot be built,
// fail with what to do (before anything starts, but for an extension's
// model, which is looked up in the session).
func TestRunRefusesBadInput(t *testing.T) {
	runEnv(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--model", "openai/x"}, `-p "<message>"`},
		{[]string{"run", "-p", "hi"}, "no model is configured"},
		{[]string{"run", "-p", "hi", "--model", "ext:local/llama"}, `extension "local" is not in this session: it is not installed`},
		{[]string{"run", "-p", "hi", "--model", "gemini/pro"}, `unknown provider "gemini"`},
	} {
		_, errOut, code := cli(t, "", tc.args...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestRunInterrupted runs the real binary (this test binary as yolop):
// SIGINT while the model's bash call runs cancels the turn, and yolop
// exits 130.
func TestRunInterrupted(t *testing.T) {
	runEnv(t)
	modelServer(t, `{"steps": [{"when": {"user": "wait"},
		"reply": {"tool_calls": [{"name": "bash", "arguments": {"command": "echo started; sleep 600"}}]}}]}`, scripted.Options{})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "run", "-p", "wait", "--model", "openai/scripted", "--workspace", t.TempDir(), "--no-mcp", "--json")
	cmd.Env = append(os.Environ(), "YOLOP_TEST_CLI=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stdout)
	var last map[string]any
	signalled := false
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("non-JSON line %q", sc.Text())
		}
		last = ev
		// The command is running once its first output streams.
		if ev["event"] == "tool.update" && !signalled {
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			signalled = true
		}
	}
	io.Copy(io.Discard, stdout)
	err = cmd.Wait()
	if !signalled {
		t.Fatalf("the bash call never streamed; stderr: %s", stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit = %v, want status 130; stderr: %s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr = %q", stderr.String())
	}
	if last["event"] != "result" || last["stop"] != "error" {
		t.Errorf("last line = %v, want the result", last)
	}
}

// TestRunAnswersQuestionsCancelled: nothing waits for a terminal. An
// extension's ui/ask during the turn is answered cancelled at once, even
// with a terminal-less stdin left open, and the model reads that.
func TestRunAnswersQuestionsCancelled(t *testing.T) {
	runEnv(t)
	dir := askerPackage(t)
	srv := modelServer(t, `{"steps": [
		{"when": {"user": "ask me"}, "reply": {"tool_calls": [{"name": "ask", "arguments": {"prompt": "favourite colour?"}}]}},
		{"when": {"tool_result": {"tool": "ask", "contains": "cancelled"}}, "reply": {"text": "You did not answer."}}
	]}`, scripted.Options{})
	pr, pw := io.Pipe() // stdin that never ends: a read of it would hang
	defer pw.Close()
	var out, errb syncBuf
	code := run(t.Context(), []string{"run", "-p", "ask me", "--model", "openai/scripted", "--ext", dir, "--no-enabled", "--no-mcp", "--workspace", t.TempDir()}, pr, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if out.String() != "You did not answer.\n" {
		t.Errorf("stdout = %q", out.String())
	}
	if err := srv.Verify(); err != nil {
		t.Error(err)
	}
}

// TestRunWorkspaceMCPNeedsYes: the workspace's .mcp.json servers do not
// start without a terminal, with a warning saying how to approve them;
// --yes approves them and the model's call reaches the server.
func TestRunWorkspaceMCPNeedsYes(t *testing.T) {
	runEnv(t)
	mcpSrv := buildMCPTestServer(t)
	const script = `{"steps": [
		{"when": {"user": "echo"}, "reply": {"tool_calls": [{"name": "mcp__repo__echo", "arguments": {"text": "the repo server ran"}}]}},
		{"when": {"tool_result": {"tool": "mcp__repo__echo"}}, "reply": {"text": "done"}}
	]}`
	for _, yes := range []bool{false, true} {
		srv := modelServer(t, script, scripted.Options{})
		ws := t.TempDir()
		writeWorkspaceMCP(t, ws, map[string]any{"repo": map[string]any{"command": mcpSrv}})
		args := []string{"run", "-p", "echo", "--model", "openai/scripted", "--no-enabled", "--workspace", ws}
		if yes {
			args = append(args, "--yes")
		}
		out, errOut, code := cli(t, "", args...)
		if code != 0 || out != "done\n" {
			t.Fatalf("--yes=%v: exit %d, stdout %q, stderr %s", yes, code, out, errOut)
		}
		reqs := srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("--yes=%v: %d model requests", yes, len(reqs))
		}
		result := ""
		for _, m := range reqs[1].Chat.Messages {
			if m.Role == "tool" {
				result = m.Text()
			}
		}
		ran := strings.Contains(result, "the repo server ran")
		if ran != yes {
			t.Errorf("--yes=%v: the server ran: %v (tool result %q)", yes, ran, result)
		}
		if !yes && (!strings.Contains(errOut, "not approved") || !strings.Contains(errOut, "yolop mcp approve")) {
			t.Errorf("no approval warning on stderr: %s", errOut)
		}
		if yes && !strings.Contains(errOut, "approved with --yes") {
			t.Errorf("--yes did not say what it approved: %s", errOut)
		}
	}
}
