package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/agent/scripted"
	"yolop.dev/harness/settings"
	"yolop.dev/packaging"
)

// The self-writing loop end to end: the real `yolop session` binary (this
// test binary as yolop), a scripted model on loopback, a real git
// repository as the workspace, and a python extension the model writes
// for itself.

// guardV1 is the hook body the model writes first: bash calls that run
// `git status` are blocked, with a reason.
const guardV1 = `    command = str(args.get("command", ""))
    if "git status" in command:
        return block("guard v1: git status is off limits in this repository")
    return allow()
`

// guardV2 is its second version: git status runs, git push is blocked.
const guardV2 = `    command = str(args.get("command", ""))
    if "git push" in command:
        return block("guard v2: pushing is off limits; git status is fine now")
    return allow()
`

func step(name string, when scripted.When, text string, calls ...scripted.ToolCall) scripted.Step {
	return scripted.Step{Name: name, When: when, Reply: scripted.Reply{Text: text, ToolCalls: calls}}
}

func toolCall(name string, args any) scripted.ToolCall {
	b, _ := json.Marshal(args)
	return scripted.ToolCall{Name: name, Arguments: b}
}

func afterTool(tool, contains string) scripted.When {
	return scripted.When{ToolResult: &scripted.ToolResultMatch{Tool: tool, Contains: contains}}
}

func user(s string) scripted.When { return scripted.When{User: &s} }

// selfWriteScript is the model's side of the loop. Each step answers
// only the tool result it expects, so a result that says something else
// (the hook's reason missing, say) stops the script and fails the test.
func selfWriteScript(ws string) *scripted.Script {
	dir := filepath.Join(ws, "guard")
	server := "guard/bin/yolop-extension-guard"
	return &scripted.Script{Steps: []scripted.Step{
		// Turn 1: write the extension, install it (the user approves),
		// check it, enable it.
		step("scaffold", user("write yourself a guard"), "I'll scaffold a hook extension.",
			toolCall("scaffold_extension", map[string]any{"name": "guard", "lang": "python", "hooks": []string{"pre_tool_use:bash"}})),
		step("implement", afterTool("scaffold_extension", "handle_pre_tool_use"), "",
			toolCall("edit_file", map[string]any{"path": server, "old_string": "    return allow()\n", "new_string": guardV1})),
		step("install", afterTool("edit_file", ""), "",
			toolCall("install_extension", map[string]any{"source": dir})),
		step("doctor", afterTool("install_extension", "installed guard 0.1.0"), "",
			toolCall("doctor_extension", map[string]any{"name": "guard"})),
		step("enable", afterTool("doctor_extension", "0 failed"), "",
			toolCall("enable_extension", map[string]any{"name": "guard"})),
		step("done writing", afterTool("enable_extension", "enabled guard"), "The guard is written and enabled."),
		// Turn 2: the hook blocks git status; the model changes the
		// handler, reloads, and the next calls show the new behaviour.
		step("status blocked", user("check the repository"), "",
			toolCall("bash", map[string]any{"command": "git status"})),
		step("edit the guard", afterTool("bash", "guard v1: git status is off limits in this repository"), "Blocked by my own guard; I'll loosen it.",
			toolCall("edit_file", map[string]any{"path": server, "old_string": guardV1, "new_string": guardV2})),
		step("reload", afterTool("edit_file", ""), "",
			toolCall("reload_extension", map[string]any{"name": "guard"})),
		step("status again", afterTool("reload_extension", "reloaded guard"), "",
			toolCall("bash", map[string]any{"command": "git status"})),
		step("push", afterTool("bash", "On branch main"), "",
			toolCall("bash", map[string]any{"command": "git push origin main"})),
		step("push blocked", afterTool("bash", "guard v2: pushing is off limits"), "git status works now; pushing is blocked by the guard."),
	}}
}

// TestSelfWritingLoop is the acceptance test of the self-writing loop:
// in one `yolop session` the model scaffolds a python extension with a
// pre_tool_use hook, writes its handler with edit_file, installs it (the
// user approves on stdin), checks it with doctor_extension, enables it;
// in the next turn its hook blocks `git status` and the model reads the
// reason; the model edits the handler and calls reload_extension, and
// the next bash calls show the new behaviour — no restart.
func TestSelfWritingLoop(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is not on PATH; .ci/run installs it")
	}
	cfg := isolate(t)
	ws := t.TempDir()
	gitRun(t, ws, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(ws, "README.md"), []byte("a repository the agent guards\n"), 0o644)
	gitCommit(t, ws, "initial")

	srv := scripted.NewServer(selfWriteScript(ws), scripted.Options{APIKey: "sk-selfwrite"})
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t.Setenv("OPENAI_BASE_URL", srv.URL()+"/v1")
	t.Setenv("OPENAI_API_KEY", "sk-selfwrite")
	t.Setenv("YOLOP_MODEL", "")

	p := startProc(t, "session", "--json", "--no-enabled", "--no-mcp", "--model", "openai/scripted", "--workspace", ws)
	var events []map[string]any
	collect := func(out string) {
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			var ev map[string]any
			if err := json.Unmarshal([]byte(l), &ev); err != nil {
				t.Fatalf("--json printed a line that is not JSON: %q", l)
			}
			events = append(events, ev)
		}
	}
	collect(p.wait(`"ready"`))
	p.send("write yourself a guard")
	// The install's consent question comes to the user, who says yes.
	collect(p.wait("Install guard? [y/N]"))
	p.send("y")
	collect(p.wait(`"event":"turn"`))
	p.send("check the repository")
	collect(p.wait(`"event":"turn"`))
	p.send("/quit")
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("session exited with %v", err)
	}
	if err := srv.Verify(); err != nil {
		t.Fatalf("the script did not play to its end: %v", err)
	}

	// What the model saw: the blocked reason of v1, then git status
	// running, then v2's reason — all in one session.
	var results []string
	for _, r := range srv.Requests() {
		if r.Chat == nil {
			continue
		}
		msgs := r.Chat.Messages
		if m := msgs[len(msgs)-1]; m.Role == "tool" {
			results = append(results, m.Text())
		}
	}
	all := strings.Join(results, "\n---\n")
	for _, want := range []string{"scaffolded extension guard (python)", "installed guard 0.1.0", "OK: ", "enabled guard",
		"guard v1: git status is off limits in this repository", "reloaded guard", "On branch main", "guard v2: pushing is off limits"} {
		if !strings.Contains(all, want) {
			t.Errorf("no tool result the model saw holds %q:\n%s", want, all)
		}
	}

	// The events: each tool completed in order, the hook's blocks among
	// them; the user was asked once; both turns ended with the model's
	// text.
	var seq, turns []string
	asks := 0
	for _, ev := range events {
		data, _ := ev["data"].(map[string]any)
		switch ev["event"] {
		case "ask":
			asks++
			if p, _ := ev["prompt"].(string); !strings.Contains(p, "pre_tool_use") || !strings.Contains(p, "bash") {
				t.Errorf("the consent question does not show the hook: %q", p)
			}
		case "tool.completed":
			seq = append(seq, fmt.Sprintf("%v:%v", data["tool"], data["status"]))
		case "turn":
			turns = append(turns, fmt.Sprint(ev["text"]))
		}
	}
	if asks != 1 {
		t.Errorf("the user was asked %d times, want once (the install)", asks)
	}
	want := "scaffold_extension:ok edit_file:ok install_extension:ok doctor_extension:ok enable_extension:ok " +
		"bash:blocked edit_file:ok reload_extension:ok bash:ok bash:blocked"
	if got := strings.Join(seq, " "); got != want {
		t.Errorf("tool calls = %s\nwant %s", got, want)
	}
	if got := strings.Join(turns, "|"); got != "The guard is written and enabled.|git status works now; pushing is blocked by the guard." {
		t.Errorf("turn texts = %q", got)
	}

	// What is left on disk: installed from the workspace, enabled.
	l, err := packaging.ReadLockFile(filepath.Join(cfg, packaging.LockFileName))
	if err != nil || l.Entry("guard") == nil || l.Entry("guard").Kind != packaging.SourcePath {
		t.Fatalf("lock = %+v, %v", l, err)
	}
	b, _ := os.ReadFile(filepath.Join(cfg, settings.FileName))
	if !strings.Contains(string(b), "ext:guard") {
		t.Errorf("settings.toml does not enable guard:\n%s", b)
	}
}

// TestExtInstallEnable: `yolop ext install --enable` installs after the
// approval and enables the extension in settings.toml in one command; a
// refused install enables nothing.
func TestExtInstallEnable(t *testing.T) {
	cfg := isolate(t)
	pkg := echoPackage(t)
	_, errOut, code := cli(t, "", "ext", "install", pkg, "--enable")
	if code == 0 || !strings.Contains(errOut, "yolop ext install "+pkg+" --enable --yes") {
		t.Fatalf("install --enable without --yes and without a terminal: exit %d: %s", code, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(cfg, settings.FileName)); strings.Contains(string(b), "ext:echo") {
		t.Fatalf("a refused install enabled echo:\n%s", b)
	}
	out, errOut, code := cli(t, "", "ext", "install", pkg, "--enable", "--yes")
	if code != 0 {
		t.Fatalf("install --enable --yes: exit %d: %s", code, errOut)
	}
	mustContain(t, "install --enable", out, "installed echo", "enabled echo (")
	if strings.Contains(out, "enable it with") {
		t.Errorf("install --enable still says how to enable it:\n%s", out)
	}
	out, _, _ = cli(t, "", "ext", "list")
	mustContain(t, "ext list", out, "echo", "enabled")
}
