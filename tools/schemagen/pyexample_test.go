package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/yep"
)

// lineLog records the bytes one direction of a session carried.
type lineLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lineLog) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range strings.Split(l.buf.String(), "\n") {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

// pythonExample extracts the Python server from docs/protocol.md.
func pythonExample(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```python\n")
	if !ok {
		t.Fatal("docs/protocol.md has no ```python block")
	}
	code, _, ok := strings.Cut(rest, "\n```")
	if !ok {
		t.Fatal("the ```python block in docs/protocol.md is not closed")
	}
	return code + "\n"
}

// pySession runs the documented Python server as a real subprocess over
// a core/jsonrpc connection.
type pySession struct {
	t        *testing.T
	conn     *jsonrpc.Conn
	cmd      *exec.Cmd
	stdin    io.Closer
	stderr   bytes.Buffer
	sent     lineLog
	received lineLog
	mu       sync.Mutex
	methods  map[string]string // request id → method, for the host's calls
}

func startPython(t *testing.T) *pySession {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		if testing.Short() {
			t.Skip("python3 not on PATH (-short)")
		}
		t.Fatal("python3 is needed to check the Python example of docs/protocol.md: install it (apt-get install python3)")
	}
	script := filepath.Join(t.TempDir(), "pyecho.py")
	if err := os.WriteFile(script, []byte(pythonExample(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &pySession{t: t, methods: map[string]string{}}
	s.cmd = exec.Command(py, script)
	s.cmd.Stderr = &s.stderr
	stdin, err := s.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.stdin = stdin
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.conn = jsonrpc.NewConn(io.TeeReader(stdout, &s.received), io.MultiWriter(stdin, &s.sent), jsonrpc.Options{Closer: stdin})
	t.Cleanup(func() {
		s.conn.Close()
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		s.conn.Wait()
	})
	return s
}

func (s *pySession) call(method string, params, result any, onNotify func(string, json.RawMessage)) error {
	return s.conn.CallWith(context.Background(), method, params, result, jsonrpc.CallOptions{
		OnNotify: onNotify,
		OnID: func(id yep.ID) {
			s.mu.Lock()
			s.methods[id.String()] = method
			s.mu.Unlock()
		},
	})
}

// finish waits for the server to exit with status 0 and validates every
// message of the session, both directions, against schema.json.
func (s *pySession) finish() {
	t := s.t
	t.Helper()
	<-s.conn.Done() // read to the end before Wait closes the pipe
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("the Python server did not exit cleanly: %v\nstderr:\n%s", err, s.stderr.String())
	}
	if !errors.Is(s.conn.Err(), io.EOF) {
		t.Errorf("connection ended with %v, want end of stream", s.conn.Err())
	}
	comp, _ := loadSchema(t)
	s.mu.Lock()
	methods := maps.Clone(s.methods)
	s.mu.Unlock()
	n := validateMessages(t, comp, "host", s.sent.lines(), methods)
	n += validateMessages(t, comp, "server", s.received.lines(), methods)
	if n == 0 {
		t.Error("no messages were recorded")
	}
}

// TestPythonExampleFromProtocolDoc runs the Python server printed in
// docs/protocol.md against the Go connection: the handshake, a streaming
// tool call, a benign cancel, errors, shutdown and exit. Every message is
// validated against the schema, so the documentation cannot rot.
func TestPythonExampleFromProtocolDoc(t *testing.T) {
	s := startPython(t)

	var init yep.InitializeResult
	if err := s.call(yep.MethodInitialize, yep.InitializeParams{
		ProtocolVersion: yep.ProtocolVersion,
		SessionID:       "s-1",
		Capabilities:    yep.Capabilities{yep.CapStreaming, yep.CapCancel},
	}, &init, nil); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if _, err := yep.Negotiate(yep.Current, init.ProtocolVersion); err != nil {
		t.Fatal(err)
	}
	var tools []yep.ToolDecl
	if ok, err := init.CapabilityParams.Decode(yep.CapTools, &tools); !ok || err != nil || len(tools) != 1 || tools[0].Name != "echo" || !init.Capabilities.Has(yep.CapTools) {
		t.Fatalf("handshake = %+v (tools %v, %v)", init, tools, err)
	}
	if err := s.conn.Notify(context.Background(), yep.MethodInitialized, yep.InitializedParams{}); err != nil {
		t.Fatal(err)
	}

	var callID yep.ID
	var updates []yep.ToolUpdateParams
	var res yep.ToolResult
	err := s.conn.CallWith(context.Background(), yep.MethodToolCall,
		yep.ToolCallParams{ToolCallID: "t1", Name: "echo", Args: json.RawMessage(`{"text":"hello brave world"}`)}, &res,
		jsonrpc.CallOptions{
			OnID: func(id yep.ID) {
				callID = id
				s.mu.Lock()
				s.methods[id.String()] = yep.MethodToolCall
				s.mu.Unlock()
			},
			OnNotify: func(method string, params json.RawMessage) {
				var u yep.ToolUpdateParams
				if method != yep.MethodToolUpdate || json.Unmarshal(params, &u) != nil {
					t.Errorf("unexpected correlated notification %s %s", method, params)
				}
				updates = append(updates, u)
			},
		})
	if err != nil || res.Output != "hello brave world" || res.IsError {
		t.Fatalf("tool/call = %+v, %v", res, err)
	}
	if len(updates) != 3 || updates[0].Output != "hello " || updates[2].Output != "world " || updates[1].RequestID.String() != callID.String() {
		t.Fatalf("updates = %+v, want one per word correlated to id %s", updates, callID)
	}

	var cr yep.CancelResult
	if err := s.call(yep.MethodCancel, yep.CancelParams{ID: yep.IntID(999)}, &cr, nil); err != nil || cr.Cancelled {
		t.Fatalf("cancel of an unknown id = %+v, %v; want cancelled false", cr, err)
	}
	var we *yep.Error
	if err := s.call("teleport", map[string]any{}, nil, nil); !errors.As(err, &we) || we.Code != yep.CodeMethodNotFound {
		t.Fatalf("unknown method: %v, want code %d", err, yep.CodeMethodNotFound)
	}
	if err := s.call(yep.MethodToolCall, yep.ToolCallParams{Name: "nope"}, nil, nil); !errors.As(err, &we) || we.Code != yep.CodeInvalidParams {
		t.Fatalf("unknown tool: %v, want code %d", err, yep.CodeInvalidParams)
	}
	if err := s.call(yep.MethodShutdown, yep.ShutdownParams{}, &yep.ShutdownResult{}, nil); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := s.conn.Notify(context.Background(), yep.MethodExit, yep.ExitParams{}); err != nil {
		t.Fatal(err)
	}
	s.finish()
}

// TestPythonExampleHonoursGatesAndEOF: without the host's streaming token
// the documented server sends no tool/update, and it exits cleanly when
// stdin ends without shutdown.
func TestPythonExampleHonoursGatesAndEOF(t *testing.T) {
	s := startPython(t)
	var init yep.InitializeResult
	if err := s.call(yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: "1.2"}, &init, nil); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	notified := 0
	var res yep.ToolResult
	if err := s.call(yep.MethodToolCall, yep.ToolCallParams{Name: "echo", Args: json.RawMessage(`{"text":"a b"}`)}, &res,
		func(string, json.RawMessage) { notified++ }); err != nil || res.Output != "a b" {
		t.Fatalf("tool/call = %+v, %v", res, err)
	}
	if notified != 0 {
		t.Fatalf("the server streamed %d updates to a host that did not advertise streaming", notified)
	}
	var we *yep.Error
	s2 := startPython(t)
	if err := s2.call(yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: "2.0"}, nil, nil); !errors.As(err, &we) {
		t.Fatalf("initialize with major 2 = %v, want an error response", err)
	}
	s2.stdin.Close()
	s2.finish()

	s.stdin.Close() // end of stream, without shutdown or exit
	s.finish()
}

// validateMessages validates the payload of every JSON-RPC message in
// lines against schema.json; methods maps a request id to its method, to
// find the schema of a result. It returns how many messages it checked.
func validateMessages(t *testing.T, comp *jsonschema.Compiler, who string, lines []string, methods map[string]string) int {
	t.Helper()
	validate := func(line, ptr string, v json.RawMessage) {
		if v == nil {
			return
		}
		if err := compile(t, comp, ptr).Validate(instance(t, v)); err != nil {
			t.Errorf("%s message does not conform to %s: %v\n%s", who, ptr, err, line)
		}
	}
	n := 0
	for _, line := range lines {
		var env struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &env); err != nil {
			t.Errorf("%s: a line that is not a JSON object: %q", who, line)
			continue
		}
		if env.JSONRPC != "2.0" {
			t.Errorf("%s: message without \"jsonrpc\": \"2.0\": %s", who, line)
		}
		n++
		switch {
		case env.Method != "":
			if _, known := yep.Method(env.Method); known {
				validate(line, "/messages/"+strings.ReplaceAll(env.Method, "/", "~1")+"/params", env.Params)
			}
		case env.Error != nil:
			validate(line, "/error", env.Error)
		default:
			method := methods[string(env.ID)]
			if _, known := yep.Method(method); !known {
				t.Errorf("%s answered id %s, which names no request of a known method: %s", who, env.ID, line)
				continue
			}
			validate(line, "/messages/"+strings.ReplaceAll(method, "/", "~1")+"/result", env.Result)
		}
	}
	return n
}

// TestProtocolDocExamples validates every JSON message printed in
// docs/protocol.md against schema.json. A message may be wrapped over
// several indented lines and prefixed with an arrow (→ host to server,
// ← server to host); a result is checked against the method of the
// request with its id in the same block.
func TestProtocolDocExamples(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	comp, _ := loadSchema(t)
	blocks := strings.Split(string(doc), "```json\n")[1:]
	total := 0
	for i, b := range blocks {
		body, _, _ := strings.Cut(b, "```")
		var msgs []string
		for _, l := range strings.Split(body, "\n") {
			switch {
			case strings.TrimSpace(l) == "":
			case strings.HasPrefix(l, " ") && len(msgs) > 0:
				msgs[len(msgs)-1] += strings.TrimSpace(l)
			default:
				l = strings.TrimPrefix(strings.TrimPrefix(l, "→ "), "← ")
				msgs = append(msgs, l)
			}
		}
		methods := map[string]string{}
		for _, m := range msgs {
			var env struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal([]byte(m), &env) == nil && env.Method != "" && env.ID != nil {
				methods[string(env.ID)] = env.Method
			}
		}
		total += validateMessages(t, comp, fmt.Sprintf("json block %d of docs/protocol.md", i+1), msgs, methods)
	}
	if total < 2*len(yep.Methods) {
		t.Errorf("docs/protocol.md shows %d messages, want at least two per method", total)
	}
	for _, m := range yep.Methods {
		if !strings.Contains(string(doc), `"method":"`+m.Name+`"`) {
			t.Errorf("docs/protocol.md has no example message for %s", m.Name)
		}
	}
}
