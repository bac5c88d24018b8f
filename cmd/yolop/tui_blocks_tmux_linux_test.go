//go:build linux

package main

import (
	"regexp"
	"strings"
	"testing"

	"yolop.dev/agent/scripted"
)

// blocksScript is what the scripted model answers in TestTUIBlocksInTmux:
// a slow count, then an answer in markdown.
const blocksScript = `{"steps": [
	{"name": "count", "when": {"user": "count slowly"}, "reply": {"text": "Counting *slowly*.", "tool_calls": [{"name": "count", "arguments": {"n": 6, "delay_ms": 300}}]}},
	{"name": "answer", "when": {"tool_result": {"tool": "count", "contains": "counted to 6"}}, "reply": {"text": "## Counted\n\n- to **6**\n- by the echo example\n"}}
]}`

// spinning is a running count's row with a spinner frame past the first:
// the program's own ticks moved it.
var spinning = regexp.MustCompile(`[⠙⠹⠸⠼⠴⠦⠧⠇⠏] echo · count`)

// closed is the count's closing line with its duration.
var closed = regexp.MustCompile(`✓ count \(echo\) [0-9.]+m?s\n`)

// TestTUIBlocksInTmux: in a real terminal (tmux, colour on) a turn's tool
// call runs as a block — a spinner row that turns while the call runs
// and is gone when it ends, its header and streamed lines, its closing
// line with the duration — and the model's answer lands in the
// scrollback rendered as markdown, before the turn's line.
func TestTUIBlocksInTmux(t *testing.T) {
	cfg := isolate(t)
	for _, args := range [][]string{{"ext", "install", echoPackage(t), "--yes"}, {"ext", "enable", "echo"}} {
		if _, errOut, code := cli(t, "", args...); code != 0 {
			t.Fatalf("yolop %v: %s", args, errOut)
		}
	}
	script, err := scripted.Parse([]byte(blocksScript))
	if err != nil {
		t.Fatal(err)
	}
	srv := scripted.NewServer(script, scripted.Options{APIKey: "sk-tmux-test"})
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p := startPane(t, tmuxEnv(t, "YOLOP_CONFIG_DIR="+cfg, "YOLOP_MODEL=openai/scripted", "TERM=xterm-256color",
		"OPENAI_BASE_URL="+srv.URL()+"/v1", "OPENAI_API_KEY=sk-tmux-test"), t.TempDir(), "session", "--color", "always", "--no-mcp")
	p.waitText("model openai/scripted", 1)

	p.submit("count slowly")
	p.waitFor("the count's spinner turning", p.screen, spinning.MatchString)
	h := p.waitFor("the count's closing line", p.history, closed.MatchString)
	mustContain(t, "the block", h, "Counting slowly.\n→ count (echo): {\"delay_ms\":300,\"n\":6}\n  │ 1\n  │ 2\n")
	h = p.waitText("(2 model requests, 1 tool call", 1)
	answer := regexp.MustCompile(`## Counted\n\n• to 6\n• by the echo example\n\(2 model requests, 1 tool call`)
	if !answer.MatchString(h) {
		t.Errorf("the answer is not rendered as markdown before the turn's line:\n%s", h)
	}
	if s := p.screen(); strings.Contains(s, "echo · count") {
		t.Errorf("the finished call's row is still on the screen:\n%s", s)
	}

	p.keys("C-d")
	if code := p.exitStatus(); code != 0 {
		t.Errorf("yolop exited with %d:\n%s", code, p.history())
	}
	if err := srv.Verify(); err != nil {
		t.Error(err)
	}
}
