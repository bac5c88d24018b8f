package host

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"yolop.dev/core"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/yep"
)

var (
	echoOnce sync.Once
	echoBin  string
	echoErr  error
)

// echoServer builds the SDK echo example once per test binary.
func echoServer(tb testing.TB) string {
	tb.Helper()
	echoOnce.Do(func() {
		dir, err := os.MkdirTemp("", "yolop-host-bench-")
		if err != nil {
			echoErr = err
			return
		}
		echoBin = filepath.Join(dir, "yolop-extension-echo")
		out, err := exec.Command("go", "build", "-o", echoBin, "yolop.dev/core/examples/echo").CombinedOutput()
		if err != nil {
			echoErr = &buildError{out: string(out), err: err}
		}
	})
	if echoErr != nil {
		tb.Fatalf("building the echo example: %v", echoErr)
	}
	return echoBin
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

// echoGrant is the echo example's approved surface.
func echoGrant(tb testing.TB, name string) Grant {
	return Grant{
		Name:            name,
		ProtocolVersion: "1.0",
		Server:          core.ServerSpec{Name: name, Command: echoServer(tb)},
		Tools:           []ToolGrant{{Name: "echo", NeverDefer: true}, {Name: "count", NeverDefer: true, Streaming: true}},
		Hooks:           []HookGrant{{Event: "pre_tool_use", Matcher: "*", TimeoutMS: 500}},
		Prompt:          &PromptGrant{Text: "The echo extension is installed: call the echo tool to repeat text and count to watch streamed progress."},
		Commands:        []CommandGrant{{Name: "greet"}},
	}
}

func percentile(d []time.Duration, p int) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[(len(d)-1)*p/100]
}

// BenchmarkHookWarmVsBash compares a pre_tool_use decision made by the warm
// echo server over hook/fire with the same decision made by spawning bash
// per event, as user_hooks does: back to back (warm) and with the server
// idle for 10 ms before each event (idle). It reports the p50s and the
// ratios bash/warm and bash/idle.
func BenchmarkHookWarmVsBash(b *testing.B) {
	s := NewSession(SessionOptions{Grants: []Grant{echoGrant(b, "echo")}, Transport: execTransport{}})
	defer s.Close()
	if err := s.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	e, _ := s.Extension("echo")
	sub := e.Hooks()[0]
	payload := mustJSON(yep.HookPayload{Args: json.RawMessage(`{"text":"hello"}`)})
	params := yep.HookFireParams{Event: yep.HookPreToolUse, ToolName: "echo", Payload: payload}
	script := `read -r line; case "$line" in *forbidden*) echo '{"decision":"block"}';; *) echo '{"decision":"allow"}';; esac`
	// Measure each mechanism in its own block: a warm server is one the
	// agent is using, not one idling while bash processes start.
	warm := make([]time.Duration, 0, b.N)
	idle := make([]time.Duration, 0, b.N)
	bash := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		res, err := e.FireHook(context.Background(), sub, params)
		warm = append(warm, time.Since(t0))
		if err != nil || res.Decision != "allow" {
			b.Fatalf("warm hook = %+v, %v", res, err)
		}
	}
	// Idle: the server (and this process) sat for 10 ms before each
	// event, as between an agent's tool calls. An idle echo tool call to
	// the same server alternates with each hook, so the hook path's own
	// cost over a plain call (hook-idle/call-idle) is measured in the
	// same run; so does the floor: the same hook/fire line written by hand
	// to a second echo server and its answer line read back, no host in
	// between. bash/floor-idle is the most bash/idle can be on this
	// machine.
	bare := startBareEcho(b)
	fire, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": yep.MethodHookFire, "params": params})
	if err != nil {
		b.Fatal(err)
	}
	fire = append(fire, '\n')
	call := make([]time.Duration, 0, b.N)
	floor := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		time.Sleep(10 * time.Millisecond)
		b.StartTimer()
		t0 := time.Now()
		line := bare.roundTrip(b, fire)
		floor = append(floor, time.Since(t0))
		if !bytes.Contains(line, []byte(`"allow"`)) {
			b.Fatalf("bare hook/fire answered %s", line)
		}
		b.StopTimer()
		time.Sleep(10 * time.Millisecond)
		b.StartTimer()
		t0 = time.Now()
		res, err := e.FireHook(context.Background(), sub, params)
		idle = append(idle, time.Since(t0))
		if err != nil || res.Decision != "allow" {
			b.Fatalf("idle hook = %+v, %v", res, err)
		}
		b.StopTimer()
		time.Sleep(10 * time.Millisecond)
		b.StartTimer()
		t0 = time.Now()
		tr, err := e.CallTool(context.Background(), ToolCall{ID: "c", Name: "echo", Args: json.RawMessage(`{"text":"hello"}`)}, nil)
		call = append(call, time.Since(t0))
		if err != nil || tr.Output != "hello" {
			b.Fatalf("idle echo call = %+v, %v", tr, err)
		}
	}
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		cmd := exec.Command("bash", "-c", script)
		cmd.Stdin = bytes.NewReader(payload)
		out, err := cmd.Output()
		bash = append(bash, time.Since(t0))
		if err != nil || string(out) != "{\"decision\":\"allow\"}\n" {
			b.Fatalf("bash hook = %q, %v", out, err)
		}
	}
	b.StopTimer()
	w, id, sh := percentile(warm, 50), percentile(idle, 50), percentile(bash, 50)
	b.ReportMetric(float64(w.Microseconds()), "warm-p50-µs")
	b.ReportMetric(float64(id.Microseconds()), "idle-p50-µs")
	b.ReportMetric(float64(sh.Microseconds()), "bash-p50-µs")
	b.ReportMetric(float64(sh)/float64(w), "bash/warm")
	b.ReportMetric(float64(sh)/float64(id), "bash/idle")
	c := percentile(call, 50)
	b.ReportMetric(float64(c.Microseconds()), "call-idle-p50-µs")
	b.ReportMetric(float64(id)/float64(c), "hook-idle/call-idle")
	f := percentile(floor, 50)
	b.ReportMetric(float64(f.Microseconds()), "floor-idle-p50-µs")
	b.ReportMetric(float64(id)/float64(f), "hook-idle/floor-idle")
	b.ReportMetric(float64(sh)/float64(f), "bash/floor-idle")
}

// bareEcho is an echo server driven by hand: lines written to its stdin,
// answer lines read from its stdout, no connection or session.
type bareEcho struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// startBareEcho starts the echo example and runs the handshake by hand.
func startBareEcho(b *testing.B) *bareEcho {
	cmd := exec.Command(echoServer(b))
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	e := &bareEcho{cmd: cmd, in: in, out: bufio.NewReader(out)}
	b.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	e.roundTrip(b, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":"1.0","capabilities":["hooks"]}}`+"\n"))
	if _, err := in.Write([]byte(`{"jsonrpc":"2.0","method":"initialized","params":{}}` + "\n")); err != nil {
		b.Fatal(err)
	}
	return e
}

// roundTrip writes one request line and returns the answer line.
func (e *bareEcho) roundTrip(b *testing.B, line []byte) []byte {
	if _, err := e.in.Write(line); err != nil {
		b.Fatal(err)
	}
	ans, err := e.out.ReadBytes('\n')
	if err != nil {
		b.Fatal(err)
	}
	return ans
}

// BenchmarkSessionStartEager compares starting a session with ten eager
// extensions against one: spawns run in parallel, so ten should cost far
// less than ten times one.
func BenchmarkSessionStartEager(b *testing.B) {
	start := func(n int) time.Duration {
		var grants []Grant
		for i := 0; i < n; i++ {
			grants = append(grants, echoGrant(b, "echo"+string(rune('a'+i))))
		}
		t0 := time.Now()
		s := NewSession(SessionOptions{Grants: grants, Transport: execTransport{}})
		if err := s.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		s.Close()
		return d
	}
	start(1) // warm the page cache
	one := make([]time.Duration, 0, b.N)
	ten := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		one = append(one, start(1))
		ten = append(ten, start(10))
	}
	b.StopTimer()
	o, t := percentile(one, 50), percentile(ten, 50)
	b.ReportMetric(float64(o.Microseconds()), "one-p50-µs")
	b.ReportMetric(float64(t.Microseconds()), "ten-p50-µs")
	b.ReportMetric(float64(t)/float64(o), "ten/one")
}

// BenchmarkToolCallSessionVsBare compares a tool call through the session
// (registry lookup, hooks, adapter, stats) with the same call made by a
// bare jsonrpc client on its own echo server process.
func BenchmarkToolCallSessionVsBare(b *testing.B) {
	g := echoGrant(b, "echo")
	g.Hooks = nil // measure the call path; hooks are benchmarked above
	s := NewSession(SessionOptions{Grants: []Grant{g}, Transport: execTransport{}})
	defer s.Close()
	if err := s.Start(context.Background()); err != nil {
		b.Fatal(err)
	}

	inst, err := execTransport{}.Start(context.Background(), core.ServerSpec{Name: "bare", Command: echoServer(b)})
	if err != nil {
		b.Fatal(err)
	}
	conn := jsonrpc.NewConn(inst.Stdout(), inst.Stdin(), jsonrpc.Options{Closer: inst.Stdin()})
	defer func() { conn.Close(); inst.Kill(); conn.Wait() }()
	var ir yep.InitializeResult
	if err := conn.Call(context.Background(), yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: "1.0", Capabilities: yep.Capabilities{"cancel"}}, &ir); err != nil {
		b.Fatal(err)
	}
	conn.Notify(context.Background(), yep.MethodInitialized, yep.InitializedParams{})

	args := json.RawMessage(`{"text":"hello"}`)
	for i := 0; i < 200; i++ { // warm both
		s.CallTool(context.Background(), "echo", "w", args, nil)
		conn.Call(context.Background(), yep.MethodToolCall, yep.ToolCallParams{Name: "echo", Args: args}, nil)
	}
	sess := make([]time.Duration, 0, b.N)
	bare := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		res, err := s.CallTool(context.Background(), "echo", "c", args, nil)
		sess = append(sess, time.Since(t0))
		if err != nil || res.Output != "hello" {
			b.Fatalf("session call = %+v, %v", res, err)
		}
		t0 = time.Now()
		var r yep.ToolResult
		err = conn.Call(context.Background(), yep.MethodToolCall, yep.ToolCallParams{Name: "echo", Args: args}, &r)
		bare = append(bare, time.Since(t0))
		if err != nil || r.Output != "hello" {
			b.Fatalf("bare call = %+v, %v", r, err)
		}
	}
	b.StopTimer()
	sp, bp := percentile(sess, 50), percentile(bare, 50)
	b.ReportMetric(float64(sp.Microseconds()), "session-p50-µs")
	b.ReportMetric(float64(bp.Microseconds()), "bare-p50-µs")
	b.ReportMetric(float64(sp)/float64(bp), "session/bare")
}
