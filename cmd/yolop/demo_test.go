package main

import (
	"slices"
	"strings"
	"testing"

	"yolop.dev/agent/scripted"
	"yolop.dev/cmd/yolop/demo"
)

// TestDemoShowsARealAgentTurn runs `yolop demo` as the quick start shows
// it and reads the transcript a new user reads: the model finds the
// deferred reverse with tool_search, calls it and count in one step while
// count streams, is blocked by echo's hook and says why, and answers with
// the result of the slash command the user ran. The demo checks the
// scripted model's script was played to its end (Verify), and fails
// otherwise: exit status 0 says every step answered.
func TestDemoShowsARealAgentTurn(t *testing.T) {
	isolate(t)
	out, errOut, code := cli(t, "", "demo")
	if code != 0 {
		t.Fatalf("demo exited %d: %s\n%s", code, errOut, out)
	}
	// In order, as they must appear.
	steps := []string{
		"2 extension(s), 10 tool(s), model ext:scripted/scripted-demo",
		"reverse                  ext:echo       Reverse the given text. (deferred: reach it through tool_search)",
		`> Reverse "yolop" and count to 3 at the same time`,
		"None of my tools reverses text, so I will search the deferred ones.\n→ tool_search {\"query\":\"reverse\"}\n← tool_search: ok\n",
		"tool_search found reverse. I will call it and count to 3 at the same time.\n",
		`"yolop" reversed is "poloy", and count streamed 1, 2, 3. Now the echo.` + "\n" + `→ echo {"text":"nothing is forbidden"}` + "\n",
		`← echo: blocked: tool "echo" blocked by ext:echo: echo: the arguments of echo contain the word "forbidden"` + "\n",
		"The echo extension's hook blocked that call: its arguments contain the word \"forbidden\".",
		"(4 model requests, 4 tool calls, ",
		"> /echo:greet yolop\nhello, yolop\n",
		"> What did the greeting say?\nIt said \"hello, yolop\". I did not run it myself",
		"(1 model request, 0 tool calls, ",
		"> /status\necho         ready",
		"\nscripted     ready", // the extension serving the model
	}
	rest := out
	for _, s := range steps {
		i := strings.Index(rest, s)
		if i < 0 {
			t.Fatalf("the transcript lacks %q after what came before it:\n%s", s, out)
		}
		rest = rest[i+len(s):]
	}
	// The step that called both tools: both ran and finished, and count's
	// numbers streamed between its start and its end.
	parallel := between(t, out, "I will call it and count to 3 at the same time.\n", `"yolop" reversed is`)
	lines := strings.Split(strings.TrimSpace(parallel), "\n")
	for _, want := range []string{`→ reverse {"text":"yolop"}`, `→ count {"n":3}`, "← reverse: ok", "← count: ok"} {
		if !slices.Contains(lines, want) {
			t.Errorf("the parallel step lacks %q:\n%s", want, parallel)
		}
	}
	if counted := between(t, parallel, `→ count {"n":3}`, "← count: ok"); !strings.Contains(strings.ReplaceAll(counted, "← reverse: ok\n", ""), "\n1\n2\n3\n") {
		t.Errorf("count did not stream 1 2 3 between its start and its end:\n%s", parallel)
	}
	if strings.Contains(out, "error:") || strings.Contains(errOut, "error") {
		t.Errorf("the demo reported an error:\n%s\n%s", out, errOut)
	}
}

// between is the text of s after from and before the next to.
func between(t *testing.T, s, from, to string) string {
	t.Helper()
	_, after, ok := strings.Cut(s, from)
	if !ok {
		t.Fatalf("no %q in:\n%s", from, s)
	}
	part, _, ok := strings.Cut(after, to)
	if !ok {
		t.Fatalf("no %q after %q in:\n%s", to, from, s)
	}
	return part
}

// TestDemoJSON: with --json the demo's turns are the session's typed
// events, one per line: turn, reason with its llm.generation, act, the
// tool calls under their act span, the text as it streamed, and a "turn"
// event with the outcome.
func TestDemoJSON(t *testing.T) {
	isolate(t)
	out, errOut, code := cli(t, "", "demo", "--json")
	if code != 0 {
		t.Fatalf("demo exited %d: %s\n%s", code, errOut, out)
	}
	n := map[string]int{}
	var text strings.Builder
	var updates []string
	started := map[string]map[string]any{} // tool → tool.started
	var blocked, turns []map[string]any
	for _, ev := range events(t, out) {
		kind, _ := ev["event"].(string)
		n[kind]++
		d, _ := ev["data"].(map[string]any)
		switch kind {
		case "text.delta":
			text.WriteString(d["text"].(string))
		case "tool.update":
			updates = append(updates, d["tool"].(string)+":"+d["output"].(string))
		case "tool.started":
			started[d["tool"].(string)] = ev
		case "tool.completed":
			if d["status"] == "blocked" {
				blocked = append(blocked, d)
			}
		case "llm.generation":
			if d["provider"] != "ext:scripted" || d["model"] != "scripted-demo" || d["output_tokens"] == nil {
				t.Errorf("llm.generation = %v", d)
			}
		case "turn":
			turns = append(turns, ev)
		}
	}
	want := map[string]int{"turn.started": 2, "turn.completed": 2, "reason.started": 5, "reason.completed": 5, "llm.generation": 5,
		"act.started": 3, "act.completed": 3, "tool.started": 4, "tool.completed": 4, "turn": 2, "command_result": 1}
	for kind, w := range want {
		if n[kind] != w {
			t.Errorf("%d %s events, want %d", n[kind], kind, w)
		}
	}
	if !strings.Contains(text.String(), "tool_search found reverse.") || !strings.Contains(text.String(), `It said "hello, yolop".`) {
		t.Errorf("the streamed text: %q", text.String())
	}
	if !slices.Equal(updates, []string{"count:1", "count:2", "count:3"}) {
		t.Errorf("tool.update = %v, want count's 1 2 3", updates)
	}
	// The two calls of one reply share its act span.
	r, c := started["reverse"], started["count"]
	if r == nil || c == nil || r["parent_id"] == nil || r["parent_id"] != c["parent_id"] || r["turn_id"] != c["turn_id"] {
		t.Errorf("reverse and count did not run in one act: %v / %v", r, c)
	}
	if len(blocked) != 1 || blocked[0]["tool"] != "echo" || !strings.Contains(blocked[0]["error"].(string), `contain the word "forbidden"`) {
		t.Errorf("blocked calls = %v", blocked)
	}
	if len(turns) == 2 && (turns[0]["stop"] != "stop" || turns[0]["tool_calls"].(float64) != 4 || turns[1]["tool_calls"].(float64) != 0) {
		t.Errorf("turn events = %v", turns)
	}
}

// TestDemoScriptIsValid: the embedded script parses, and each step the
// demo's turns need is in it, in order.
func TestDemoScriptIsValid(t *testing.T) {
	s, err := scripted.Parse(demo.ModelScript)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range s.Steps {
		names = append(names, st.Name)
	}
	want := []string{"search for a deferred tool", "call two tools in parallel", "echo a word the hook blocks", "react to the block", "answer with the slash command's result"}
	if !slices.Equal(names, want) {
		t.Fatalf("steps %v, want %v", names, want)
	}
	if len(s.Steps[1].Reply.ToolCalls) != 2 {
		t.Fatalf("the parallel step makes %d calls", len(s.Steps[1].Reply.ToolCalls))
	}
}
