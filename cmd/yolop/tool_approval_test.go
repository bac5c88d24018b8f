package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"yolop.dev/agent/scripted"
)

// approvalPackage writes an echo package whose reverse tool says
// approval "always" with a narration, its server this test binary behind
// a wrapper that copies every line the host sends it to a log. It returns
// the package directory and the log's path.
func approvalPackage(t *testing.T) (dir, log string) {
	t.Helper()
	dir = t.TempDir()
	log = filepath.Join(t.TempDir(), "received.jsonl")
	raw, err := os.ReadFile("demo/plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, tl := range m["yolop"].(map[string]any)["tools"].([]any) {
		if tool := tl.(map[string]any); tool["name"] == "reverse" {
			tool["approval"] = "always"
			tool["narration"] = `Reversing "{text}"`
			tool["never_defer"] = true
		}
	}
	m["yolop"].(map[string]any)["sandbox"] = wrapperSandbox(t, filepath.Dir(log))
	raw, _ = json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "bin"), 0o755)
	// tee writes its outputs in order: the log first, then the pipe
	// (fd 3), so a line the server answered is already in the log.
	script := "#!/bin/sh\ntee -a '" + log + "' /dev/fd/3 3>&1 >/dev/null | exec '" + exe + "' serve-echo \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "bin", "yolop-extension-echo"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, log
}

// toolCalls are the tool/call requests the server received, as logged.
func toolCalls(t *testing.T, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var calls []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, `"method":"tool/call"`) {
			calls = append(calls, l)
		}
	}
	return calls
}

// TestSessionAsksBeforeAnAlwaysTool: yolop session puts a call of a tool
// whose manifest says approval "always" to the user, naming ext@version,
// the tool, its narration and its arguments; "deny" refuses it (the
// server never gets it) and "a" (allow) runs it.
func TestSessionAsksBeforeAnAlwaysTool(t *testing.T) {
	runEnv(t)
	pkg, log := approvalPackage(t)
	in := "/call reverse {\"text\":\"abc\"}\ndeny\n/call reverse {\"text\":\"xyz\"}\na\n/quit\n"
	out, errOut, code := cli(t, in, "session", "--ext", pkg, "--no-enabled")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		`[echo asks] Allow echo@0.1.0 to run "reverse" (Reversing "abc"; risk low) with {"text":"abc"}?`,
		"1) allow\n  2) deny\n",
		"denied: reverse (echo@0.1.0) by user: the user denied the call",
		`tool "reverse" of echo@0.1.0 was not run`,
		"approved: reverse (echo@0.1.0) by user",
		"zyx\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "cba") {
		t.Errorf("the denied call ran:\n%s", out)
	}
	if calls := toolCalls(t, log); len(calls) != 1 || !strings.Contains(calls[0], "xyz") {
		t.Errorf("the server got tool/call %q; want only the allowed one", calls)
	}
}

// reverseScript calls reverse and answers once the call's result
// contains want.
func reverseScript(want, answer string) string {
	return `{"steps": [
	{"when": {"user": "reverse abc"}, "reply": {"tool_calls": [{"name": "reverse", "arguments": {"text": "abc"}}]}},
	{"when": {"tool_result": {"tool": "reverse", "contains": ` + strconv.Quote(want) + `}}, "reply": {"text": ` + strconv.Quote(answer) + `}}
]}`
}

// TestRunApprovals: yolop run denies a call that needs approval, tells
// the model to rerun with --yes, and exits 3 naming the tool; --yes
// approves it (and says so on stderr); a policy deny in settings.toml
// stands even with --yes. The server never gets a denied call.
func TestRunApprovals(t *testing.T) {
	cfg := runEnv(t)
	pkg, log := approvalPackage(t)
	args := []string{"run", "-p", "reverse abc", "--model", "openai/scripted", "--ext", pkg, "--no-enabled", "--no-mcp", "--workspace", t.TempDir()}

	modelServer(t, reverseScript("rerun with --yes", "That needs your approval."), scripted.Options{})
	out, errOut, code := cli(t, "", args...)
	if code != 3 || out != "That needs your approval.\n" ||
		!strings.Contains(errOut, "yolop run: 1 tool call needed approval and was denied: reverse (echo@0.1.0); rerun with --yes to approve them") {
		t.Fatalf("without --yes: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if calls := toolCalls(t, log); len(calls) != 0 {
		t.Fatalf("the server got %q without --yes", calls)
	}

	modelServer(t, reverseScript("cba", "Reversed: cba"), scripted.Options{})
	out, errOut, code = cli(t, "", append(args, "--yes")...)
	if code != 0 || out != "Reversed: cba\n" || !strings.Contains(errOut, `yolop run: approved with --yes: Allow echo@0.1.0 to run "reverse" (Reversing "abc"; risk low)`) {
		t.Fatalf("with --yes: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if calls := toolCalls(t, log); len(calls) != 1 {
		t.Fatalf("the server got %d tool calls with --yes, want 1", len(calls))
	}

	if err := os.WriteFile(filepath.Join(cfg, "settings.toml"), []byte("[approval.tools]\n\"echo.reverse\" = \"deny\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	modelServer(t, reverseScript("denied by your policy", "Your policy forbids it."), scripted.Options{})
	out, errOut, code = cli(t, "", append(args, "--yes", "--json")...)
	if code != 0 {
		t.Fatalf("policy deny with --yes: exit %d: %s", code, errOut)
	}
	var denied bool
	for _, ev := range events(t, out) {
		if ev["event"] == "tool.approval" {
			d, _ := ev["data"].(map[string]any)
			denied = d["decision"] == "denied" && d["by"] == "policy" && d["extension"] == "echo"
		}
		if ev["event"] == "result" && ev["answer"] != "Your policy forbids it." {
			t.Errorf("result = %v", ev)
		}
	}
	if !denied {
		t.Errorf("no tool.approval denied by policy in:\n%s", out)
	}
	if calls := toolCalls(t, log); len(calls) != 1 {
		t.Fatalf("the server got %d tool calls in all, want 1 (the policy's deny never reached it)", len(calls))
	}
}
