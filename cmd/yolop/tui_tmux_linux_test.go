//go:build linux

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"yolop.dev/agent/scripted"
)

// tmuxPane is yolop running in the only pane of a tmux server of its own
// (its own socket, no user configuration), 100×30, kept after yolop
// exits so its exit status and its scrollback can be read.
type tmuxPane struct {
	t      *testing.T
	tmux   string
	socket string
	env    []string
	// statusFile receives yolop's exit status when it exits.
	statusFile string
}

// startPane runs this test binary as yolop with args in a new tmux
// server, in dir, with env as its whole environment.
func startPane(t *testing.T, env []string, dir string, args ...string) *tmuxPane {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatalf("tmux is needed to drive the terminal UI in a real terminal (.ci/run installs it): %v", err)
	}
	conf := filepath.Join(t.TempDir(), "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g remain-on-exit on\nset -g history-limit 50000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	status := filepath.Join(t.TempDir(), "status")
	command := shellQuote(exe)
	for _, a := range args {
		command += " " + shellQuote(a)
	}
	command += "; echo $? >" + shellQuote(status)
	p := &tmuxPane{t: t, tmux: tmux, socket: fmt.Sprintf("yolop-test-%d-%d", os.Getpid(), time.Now().UnixNano()), env: env, statusFile: status}
	p.run("-f", conf, "new-session", "-d", "-s", "yolop", "-x", "100", "-y", "30", "-c", dir, command)
	t.Cleanup(func() { exec.Command(tmux, "-L", p.socket, "kill-server").Run() })
	return p
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// run runs a tmux command against the pane's server and returns its
// output.
func (p *tmuxPane) run(args ...string) string {
	p.t.Helper()
	cmd := exec.Command(p.tmux, append([]string{"-L", p.socket}, args...)...)
	cmd.Env = p.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// keys presses tmux key names (Enter, Down, C-c, …) in the pane.
func (p *tmuxPane) keys(keys ...string) {
	p.t.Helper()
	p.run(append([]string{"send-keys", "-t", "yolop"}, keys...)...)
}

// typ types text literally.
func (p *tmuxPane) typ(text string) {
	p.t.Helper()
	p.run("send-keys", "-t", "yolop", "-l", text)
}

// screen is what the pane shows now; history is everything it has shown
// that is still on the screen or in its scrollback. Wrapped rows are
// joined, trailing spaces dropped.
func (p *tmuxPane) screen() string { return trimRows(p.run("capture-pane", "-p", "-J", "-t", "yolop")) }
func (p *tmuxPane) history() string {
	return trimRows(p.run("capture-pane", "-p", "-J", "-S", "-", "-t", "yolop"))
}

func trimRows(s string) string {
	rows := strings.Split(s, "\n")
	for i, r := range rows {
		rows[i] = strings.TrimRight(r, " ")
	}
	return strings.Join(rows, "\n")
}

// waitFor polls capture (screen or history) until ok holds of it and
// returns what it captured; the deadline only ends a hung test.
func (p *tmuxPane) waitFor(what string, capture func() string, ok func(string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := capture()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the pane never showed %s (last %q):\n%s", what, s, p.history())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// submit types line and presses Enter until the UI takes it (it is
// echoed into the transcript as "> line"). An Enter that comes before
// the session is ready, or while the previous line still runs, leaves
// the line in the input with a hint saying so; Enter is pressed again.
func (p *tmuxPane) submit(line string) {
	p.t.Helper()
	echo := "> " + line + "\n"
	n := strings.Count(p.history(), echo)
	p.typ(line)
	p.keys("Enter")
	p.waitFor(strconv.Quote(echo), p.history, func(s string) bool {
		if strings.Count(s, echo) > n {
			return true
		}
		if sc := p.screen(); strings.Contains(sc, "the session is still starting") || strings.Contains(sc, "a command is running") {
			p.keys("Enter")
		}
		return false
	})
}

// waitText waits until the pane's history holds want n times.
func (p *tmuxPane) waitText(want string, n int) string {
	p.t.Helper()
	return p.waitFor(strconv.Quote(want), p.history, func(s string) bool { return strings.Count(s, want) >= n })
}

// exitStatus waits for yolop to exit and returns its status, which the
// pane's shell writes to a file (tmux's pane_dead_status can stay empty
// when the terminal closes before the process is reaped).
func (p *tmuxPane) exitStatus() int {
	p.t.Helper()
	var status string
	p.waitFor("yolop exit", func() string { b, _ := os.ReadFile(p.statusFile); return string(b) },
		func(s string) bool { status = strings.TrimSpace(s); return strings.HasSuffix(s, "\n") })
	code, err := strconv.Atoi(status)
	if err != nil {
		p.t.Fatalf("exit status %q: %v", status, err)
	}
	return code
}

// lastLine is the last non-empty row of a screen.
func lastLine(screen string) string {
	rows := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	return rows[len(rows)-1]
}

// realPython is the python3 interpreter itself.
func realPython(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// tuiExtPackage is testdata/tuiext.py as a package: a Python extension
// whose tools push status and ask. Its server is a script in bin/ that
// runs the interpreter itself (a version manager's shim may need the
// user's HOME).
func tuiExtPackage(t *testing.T) string {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "tuiext.py"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "bin"), 0o755)
	python := realPython(t)
	server := "#!/bin/sh\nexec " + shellQuote(python) + " -u " + shellQuote(script) + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "bin", "tuiext"), []byte(server), 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := `{"name":"tuiext","version":"0.1.0","description":"Pushes status and asks, for the terminal UI's test.","yolop":{"protocol_version":"1.0",
	  "capabilityServer":{"command":"tuiext"},
	  "sandbox":{"exec":true,"fs":[{"path":` + strconv.Quote(filepath.Dir(filepath.Dir(python))) + `},{"path":` + strconv.Quote(script) + `}]},
	  "ui_ask":true,"status":true,"tools":[
	    {"name":"ask","description":"Ask the user.","never_defer":true,"input_schema":{"type":"object","properties":{
	      "prompt":{"type":"string"},"secret":{"type":"boolean"},"options":{"type":"array","items":{"type":"string"}}},"required":["prompt"]}},
	    {"name":"status","description":"Set the status text.","never_defer":true,"input_schema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}}`
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// tmuxScript is what the scripted model answers in TestTUIInTmux.
const tmuxScript = `{"steps": [
	{"name": "count", "when": {"user": "count to 3"}, "reply": {"text": "Counting.", "tool_calls": [{"name": "count", "arguments": {"n": 3}}]}},
	{"name": "counted", "when": {"tool_result": {"tool": "count", "contains": "counted to 3"}}, "reply": {"text": "Counted to 3 for you."}},
	{"name": "forever", "when": {"user": "count forever"}, "reply": {"text": "Here goes.", "tool_calls": [{"name": "count", "arguments": {"n": 100000, "delay_ms": 20}}]}}
]}`

// tmuxEnv is the environment yolop runs with in tmux: the test's, with
// a HOME and XDG directories of its own, and no outer tmux.
func tmuxEnv(t *testing.T, extra ...string) []string {
	home := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "TMUX", "TMUX_PANE", "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "YOLOP_MODEL", "NO_COLOR":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "YOLOP_TEST_CLI=1", "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"))
	return append(env, extra...)
}

// TestTUIInTmux drives `yolop` alone — the terminal UI, the default on a
// terminal — in a real terminal (tmux) over the echo example and a
// Python extension, with a scripted model: a message to the model shows
// its streamed tool output and its reply; the status bar shows the
// extension's status text; a masked question's answer reaches the
// extension while the secret never shows on the screen or in the
// scrollback; an option is picked with the arrow keys; Ctrl-C ends a
// turn whose count is running and the prompt takes the next line; Ctrl-D
// quits with status 0 and leaves the transcript in the scrollback.
func TestTUIInTmux(t *testing.T) {
	cfg := isolate(t)
	for _, args := range [][]string{
		{"ext", "install", echoPackage(t), "--yes"}, {"ext", "install", tuiExtPackage(t), "--yes"},
		{"ext", "enable", "echo"}, {"ext", "enable", "tuiext"},
	} {
		if _, errOut, code := cli(t, "", args...); code != 0 {
			t.Fatalf("yolop %v: %s", args, errOut)
		}
	}
	script, err := scripted.Parse([]byte(tmuxScript))
	if err != nil {
		t.Fatal(err)
	}
	srv := scripted.NewServer(script, scripted.Options{APIKey: "sk-tmux-test"})
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p := startPane(t, tmuxEnv(t, "YOLOP_CONFIG_DIR="+cfg, "YOLOP_MODEL=openai/scripted",
		"OPENAI_BASE_URL="+srv.URL()+"/v1", "OPENAI_API_KEY=sk-tmux-test"), t.TempDir())

	p.waitText("yolop session: 2 extension(s)", 1)
	p.waitText("model openai/scripted", 1)

	// A message: the model's tool call streams its numbers under the
	// call, then the model's reply.
	p.submit("count to 3")
	h := p.waitText("Counted to 3 for you.", 1)
	for _, n := range []string{"1", "2", "3"} {
		if !strings.Contains(h, "│ "+n+"\n") {
			t.Errorf("no streamed %s under the call:\n%s", n, h)
		}
	}

	// The status bar, the last row of the live area, shows the
	// extension's status text.
	p.submit(`/call status {"text":"indexing 42 files"}`)
	bar := p.waitFor("the status text in the status bar", p.screen, func(s string) bool {
		return strings.Contains(lastLine(s), "indexing 42 files")
	})
	if l := lastLine(bar); !strings.Contains(l, "tuiext") || !strings.Contains(l, "openai/scripted") {
		t.Errorf("the status bar names neither the extension nor the model: %q", l)
	}

	// A masked question: the secret typed is masked, and only its
	// length and digest come back.
	const secret = "hunter2-in-tmux"
	sum := sha256.Sum256([]byte(secret))
	p.submit(`/call ask {"prompt":"API token","secret":true}`)
	p.waitFor("the secret question", p.screen, func(s string) bool {
		return strings.Contains(s, "[tuiext asks] API token") && strings.Contains(s, "secret>")
	})
	p.typ(secret)
	p.waitFor("the masked answer", p.screen, func(s string) bool { return strings.Contains(s, "secret> "+strings.Repeat("*", len(secret))) })
	p.keys("Enter")
	h = p.waitText(fmt.Sprintf("got a secret of %d characters, sha256 %s", len(secret), hex.EncodeToString(sum[:])[:12]), 1)
	if !strings.Contains(h, "(saved)") {
		t.Errorf("no (saved) for the secret:\n%s", h)
	}
	if strings.Contains(h, secret) {
		t.Fatalf("the secret is on the screen or in the scrollback:\n%s", h)
	}

	// A selector: Down moves to the second option, Enter picks it.
	p.submit(`/call ask {"prompt":"Pick a colour","options":["red","green","blue"]}`)
	p.waitFor("the selector", p.screen, func(s string) bool {
		return strings.Contains(s, "[tuiext asks] Pick a colour") && strings.Contains(s, "blue")
	})
	p.keys("Down")
	p.keys("Enter")
	p.waitText("answer: green", 1)

	// Ctrl-C while the model's count runs ends the turn; the prompt
	// takes the next line.
	p.submit("count forever")
	p.waitText("│ 5\n", 1)
	p.keys("C-c")
	p.waitText("cancelled: the turn stopped", 1)
	p.submit(`/call echo {"text":"after the cancel"}`)
	p.waitText("\nafter the cancel\n", 1) // the result's own line

	p.keys("C-d")
	if code := p.exitStatus(); code != 0 {
		t.Errorf("yolop exited with %d:\n%s", code, p.history())
	}
	h = p.history()
	if strings.Contains(h, secret) {
		t.Fatalf("the secret is in the scrollback:\n%s", h)
	}
	mustContain(t, "the scrollback after the session", h, "> count to 3", "Counted to 3 for you.", "answer: green")
	if err := srv.Verify(); err != nil {
		t.Error(err)
	}
}

// TestTUIFullscreenInTmux: `yolop session --fullscreen` runs on the
// alternate screen, showing its transcript there; when it ends the
// terminal's own screen comes back and the session left nothing in the
// scrollback.
func TestTUIFullscreenInTmux(t *testing.T) {
	cfg := isolate(t)
	p := startPane(t, tmuxEnv(t, "YOLOP_CONFIG_DIR="+cfg), t.TempDir(), "session", "--fullscreen", "--no-enabled", "--no-mcp")
	p.waitFor("the ready line", p.screen, func(s string) bool { return strings.Contains(s, "yolop session: 0 extension(s)") })
	if mode := p.run("display-message", "-p", "-t", "yolop", "#{alternate_on}"); strings.TrimSpace(mode) != "1" {
		t.Errorf("the pane is not on the alternate screen (alternate_on %q)", mode)
	}
	p.submit("/help")
	p.waitFor("the help", p.screen, func(s string) bool { return strings.Contains(s, "Esc cancels") })
	p.keys("C-d")
	if code := p.exitStatus(); code != 0 {
		t.Errorf("yolop exited with %d:\n%s", code, p.history())
	}
	if h := p.history(); strings.Contains(h, "yolop session:") || strings.Contains(h, "Esc cancels") {
		t.Errorf("the fullscreen session left its transcript on the terminal's screen:\n%s", h)
	}
}
