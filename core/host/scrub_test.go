package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"yolop.dev/core/yep"
)

// TestScrubCoversEveryPathOut runs a server that echoes a secret through
// every channel it has toward the host — tool output, status, log, a ui/ask
// question, its stderr in a crash — plus a host-generated trace event
// carrying it, and checks that only the scrubbed label comes out.
func TestScrubCoversEveryPathOut(t *testing.T) {
	const secret = "something broke" // also what the server's crash prints to stderr
	const label = "[redacted:py.token]"
	scrub := strings.NewReplacer(secret, label).Replace

	dir := t.TempDir()
	traceFile := filepath.Join(dir, "trace.jsonl")
	tr := pyGrant(t, "tracer", map[string]any{"capabilities": []string{"trace"}, "trace_file": traceFile})
	tr.Trace = true
	g := pyGrant(t, "py", map[string]any{"capabilities": []string{"tools", "ui_ask", "status"}}, "echo", "status", "log", "ask", "crash")
	g.UIAsk, g.Status = true, true
	var asked []string
	sink := askFunc(func(ext string, p yep.UIAskParams) yep.UIAskResult {
		asked = append(asked, p.Prompt)
		return yep.UIAskResult{Answer: "fine"}
	})
	st := &statusRec{}
	lg, logs := testLogger()
	s := newTestSession(t, SessionOptions{Grants: []Grant{tr, g}, Ask: sink, Logger: lg, Extension: ExtensionOptions{Scrub: scrub}})
	s.Subscribe(st.event)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	args := json.RawMessage(`{"text":"` + secret + `","message":"` + secret + `","prompt":"` + secret + `"}`)
	var outs []string
	s.BeginTurn(ctx)
	for _, tool := range []string{"echo", "status", "log", "ask"} {
		res, err := s.CallTool(ctx, tool, "c-"+tool, args, nil)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		outs = append(outs, res.Output)
	}
	if outs[0] != label {
		t.Errorf("echo output = %q, want %q", outs[0], label)
	}
	_, err := s.CallTool(ctx, "crash", "c-crash", nil, nil)
	if err == nil {
		t.Fatal("crash: no error")
	}
	s.EndTurn()
	status := st.get(t, s, "py")
	e, _ := s.Extension("py")
	// Traces are fire-and-forget: wait for the last one to be written.
	deadline := time.Now().Add(untilDeadline(t))
	var trace []byte
	for {
		trace, _ = os.ReadFile(traceFile)
		if strings.Contains(string(trace), "turn.completed") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("turn.completed never reached the trace consumer:\n%s", trace)
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, reason := e.State()
	seen := map[string]string{
		"status":       status,
		"log":          logs.String(),
		"ask prompt":   strings.Join(asked, "\n"),
		"crash error":  err.Error(),
		"state reason": reason,
		"trace":        string(trace),
		"outputs":      strings.Join(outs, "\n"),
	}
	for where, text := range seen {
		if strings.Contains(text, secret) {
			t.Errorf("%s leaks the secret: %s", where, text)
		}
	}
	for _, where := range []string{"status", "log", "ask prompt", "trace"} {
		if !strings.Contains(seen[where], label) {
			t.Errorf("%s lacks the label %s: %s", where, label, seen[where])
		}
	}
	if !strings.Contains(err.Error(), "panic: "+label) {
		t.Errorf("crash error lost its stderr tail: %v", err)
	}
}

// TestReconfigure checks that a changed environment restarts a running
// server with it, while an unchanged one goes through config/changed.
func TestReconfigure(t *testing.T) {
	dir := t.TempDir()
	initFile := filepath.Join(dir, "init.json")
	g := pyGrant(t, "py", map[string]any{"capabilities": []string{"tools", "config"}, "init_file": initFile}, "echo")
	g.Config = json.RawMessage(`{"a":1}`)
	s := newTestSession(t, SessionOptions{Grants: []Grant{g}})
	e, _ := s.Extension("py")
	ctx := context.Background()
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	pid := e.PID()
	type dump struct {
		Params yep.InitializeParams
		Env    map[string]string
	}
	read := func() dump {
		var d dump
		b, _ := os.ReadFile(initFile)
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("init file: %v", err)
		}
		return d
	}
	// Same environment: config/changed, answered ok, no restart.
	env := e.Grant().Server.Env
	restarted, err := e.Reconfigure(ctx, json.RawMessage(`{"a":2}`), env)
	if err != nil || restarted || e.PID() != pid {
		t.Fatalf("same env: restarted=%v err=%v pid %d→%d", restarted, err, pid, e.PID())
	}
	// A new variable: restart, and the new process has it.
	env2 := map[string]string{"NEW_VAR": "v2"}
	for k, v := range env {
		env2[k] = v
	}
	restarted, err = e.Reconfigure(ctx, json.RawMessage(`{"a":3}`), env2)
	if err != nil || !restarted || e.PID() == pid {
		t.Fatalf("new env: restarted=%v err=%v", restarted, err)
	}
	d := read()
	var cfg map[string]int
	_ = json.Unmarshal(d.Params.Config, &cfg)
	if d.Env["NEW_VAR"] != "v2" || cfg["a"] != 3 {
		t.Errorf("restarted server got env NEW_VAR=%q config %s", d.Env["NEW_VAR"], d.Params.Config)
	}
	if g := e.Grant(); g.Server.Env["NEW_VAR"] != "v2" || string(g.Config) != `{"a":3}` {
		t.Errorf("grant not updated: %+v", g.Server.Env)
	}
}
