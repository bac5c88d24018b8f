package scaffold_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	. "yolop.dev/harness/scaffold" // the tests read as the package's own code

	"github.com/santhosh-tekuri/jsonschema/v6"

	"yolop.dev/core/yep"
)

// The conformance corpus (schema/yep/v1/conformance, one txtar file per
// method) is what the Go SDK's types are checked against in
// tools/schemagen. checkCorpus drives a scaffolded server through it on
// the wire: every host→server payload of the corpus is sent as the
// method's request or notification, every ui/ask result of the corpus
// answers the server's question, and every line the server writes is
// validated against schema/yep/v1/schema.json.
//
// The rules, for every language:
//   - a request is answered exactly once, with its id exactly as sent
//     (a string stays a string), and a notification never is;
//   - valid params get a result, or (for a tool or command this server
//     does not have) an error, but never invalid_request, internal_error
//     or parse_error;
//   - invalid params get an answer that is itself valid; the raw
//     templates answer a field of the wrong type with invalid_params (the
//     Go SDK may default it), and a malformed cancel with cancelled false;
//   - the server keeps serving after all of it, and exits 0 on exit and at
//     the end of stdin.

const corpusDir = "../../schema/yep/v1/conformance"

type corpusCase struct {
	name  string // the section, e.g. "params/invalid/missing-name.json"
	part  string // "params" or "result"
	valid bool
	data  json.RawMessage
}

// parseTxtar reads the sections of a txtar file ("-- name --" lines).
func parseTxtar(data []byte) map[string][]byte {
	out := map[string][]byte{}
	var name string
	var body bytes.Buffer
	flush := func() {
		if name != "" {
			out[name] = bytes.Clone(bytes.TrimSpace(body.Bytes()))
		}
		body.Reset()
	}
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if t := strings.TrimRight(l, "\n"); strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") {
			flush()
			name = strings.TrimSuffix(strings.TrimPrefix(t, "-- "), " --")
			continue
		}
		if name != "" {
			body.WriteString(l)
		}
	}
	flush()
	return out
}

// loadCorpus returns the cases of every method, keyed by method name.
func loadCorpus(t *testing.T) map[string][]corpusCase {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.txtar"))
	out := map[string][]corpusCase{}
	for _, f := range files {
		method := strings.ReplaceAll(strings.TrimSuffix(filepath.Base(f), ".txtar"), "_", "/")
		if _, known := yep.Method(method); !known {
			continue // error.txtar and capability_params.txtar are shapes
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for name, payload := range parseTxtar(data) {
			// The corpus is pretty-printed; the wire is one message a line.
			var line bytes.Buffer
			if err := json.Compact(&line, payload); err != nil {
				t.Fatalf("%s: %s is not JSON: %v", f, name, err)
			}
			part, rest, _ := strings.Cut(name, "/")
			out[method] = append(out[method], corpusCase{name: name, part: part, valid: strings.HasPrefix(rest, "valid/"), data: line.Bytes()})
		}
	}
	if len(out) < len(yep.Methods) {
		t.Fatalf("found the corpus of %d methods in %s, want %d", len(out), corpusDir, len(yep.Methods))
	}
	for _, cs := range out {
		slicesSortCases(cs)
	}
	return out
}

func slicesSortCases(cs []corpusCase) {
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].name < cs[j-1].name; j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

// schemas validates payloads against schema/yep/v1/schema.json.
type schemas struct {
	c  *jsonschema.Compiler
	id string
	mu sync.Mutex
	by map[string]*jsonschema.Schema
}

func loadSchemas(t *testing.T) *schemas {
	t.Helper()
	raw, err := os.ReadFile("../../schema/yep/v1/schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	id, _ := doc.(map[string]any)["$id"].(string)
	c := jsonschema.NewCompiler()
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	return &schemas{c: c, id: id, by: map[string]*jsonschema.Schema{}}
}

// validate checks v against the schema at ptr ("/messages/tool~1call/params").
func (s *schemas) validate(ptr string, v json.RawMessage) error {
	s.mu.Lock()
	sch, ok := s.by[ptr]
	if !ok {
		var err error
		if sch, err = s.c.Compile(s.id + "#" + ptr); err != nil {
			s.mu.Unlock()
			return fmt.Errorf("compiling %s: %w", ptr, err)
		}
		s.by[ptr] = sch
	}
	s.mu.Unlock()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(v))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

func msgPtr(method, part string) string {
	return "/messages/" + strings.ReplaceAll(method, "/", "~1") + "/" + part
}

// envelope is one message the server wrote.
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *yep.Error      `json:"error"`
	raw     string
}

// server is a scaffolded server under test, spoken to on the wire.
type server struct {
	t        *testing.T
	sch      *schemas
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	lines    chan string
	exited   chan struct{}
	stderr   syncBuf
	methods  map[string]string   // our request id → method
	answered map[string]bool     // our request ids answered
	seen     map[string][]string // server notifications by method → params
	got      map[string]envelope // responses by our request id
	asks     []envelope          // ui/ask requests held back (answerAsks false)
	// answerAsks answers each ui/ask at once with the next of askResults,
	// the corpus's ui/ask results.
	answerAsks bool
	askResults [][]byte
	askN       int
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// wait bounds every wait for the server. It catches a hang; it is not a
// speed requirement.
const wait = 2 * time.Minute

func startServer(t *testing.T, r *Result, sch *schemas, askResults [][]byte) *server {
	t.Helper()
	s := &server{t: t, sch: sch, lines: make(chan string, 256), exited: make(chan struct{}), askResults: askResults,
		methods: map[string]string{}, answered: map[string]bool{}, seen: map[string][]string{}, got: map[string]envelope{}, answerAsks: true}
	s.cmd = exec.Command(filepath.Join(r.Dir, r.Server))
	s.cmd.Dir = r.Dir
	s.cmd.Stderr = &s.stderr
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	// An os.Pipe rather than StdoutPipe: Wait must not close the read end
	// under the reader, which reads to the end of the stream.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stdout = pw
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	go func() {
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		for range s.lines {
		}
		<-s.exited
		pr.Close()
	})
	return s
}

func (s *server) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		s.t.Fatalf("writing to the server: %v\nstderr:\n%s", err, s.stderr.String())
	}
}

// next reads and checks one line from the server; ok is false at EOF.
func (s *server) next() (envelope, bool) {
	s.t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			return envelope{}, false
		}
		return s.check(l), true
	case <-time.After(wait):
		s.t.Fatalf("the server wrote nothing for %s\nstderr:\n%s", wait, s.stderr.String())
	}
	return envelope{}, false
}

// check validates one line the server wrote and handles server requests.
func (s *server) check(line string) envelope {
	t := s.t
	t.Helper()
	var e envelope
	if err := json.Unmarshal([]byte(line), &e); err != nil {
		t.Errorf("the server wrote a line that is not a JSON object: %q", line)
		return e
	}
	e.raw = line
	if e.JSONRPC != "2.0" {
		t.Errorf(`a message without "jsonrpc": "2.0": %s`, line)
	}
	switch {
	case e.Method != "":
		info, known := yep.Method(e.Method)
		if !known || info.Direction == yep.ToServer {
			t.Errorf("the server sent %s, which is not a server→host method: %s", e.Method, line)
			return e
		}
		if err := s.sch.validate(msgPtr(e.Method, "params"), paramsOr(e.Params)); err != nil {
			t.Errorf("%s params do not conform: %v\n%s", e.Method, err, line)
		}
		isReq := e.ID != nil && string(e.ID) != "null"
		if isReq != (info.Kind == yep.Request) {
			t.Errorf("%s sent as the wrong kind (request: %v): %s", e.Method, isReq, line)
		}
		if !isReq {
			s.seen[e.Method] = append(s.seen[e.Method], string(e.Params))
			return e
		}
		switch e.Method {
		case yep.MethodUIAsk:
			if s.answerAsks {
				s.answerAsk(e)
			} else {
				s.asks = append(s.asks, e)
			}
		case yep.MethodCancel:
			s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"cancelled":true}}`, e.ID))
		}
	default:
		id := string(e.ID)
		method, ours := s.methods[id]
		switch {
		case !ours:
			t.Errorf("the server answered id %s, which the host never sent: %s", id, line)
		case s.answered[id]:
			t.Errorf("the server answered id %s twice: %s", id, line)
		}
		s.answered[id] = true
		s.got[id] = e
		if (e.Result != nil) == (e.Error != nil) {
			t.Errorf("a response needs exactly one of result and error: %s", line)
		}
		if e.Error != nil {
			var raw struct {
				Error json.RawMessage `json:"error"`
			}
			json.Unmarshal([]byte(line), &raw)
			if err := s.sch.validate("/error", raw.Error); err != nil {
				t.Errorf("the error does not conform: %v\n%s", err, line)
			}
		} else if ours {
			if err := s.sch.validate(msgPtr(method, "result"), e.Result); err != nil {
				t.Errorf("%s result does not conform: %v\n%s", method, err, line)
			}
		}
	}
	return e
}

func paramsOr(p json.RawMessage) json.RawMessage {
	if p == nil {
		return json.RawMessage("{}")
	}
	return p
}

// answerAsk answers a ui/ask with the next result of the corpus.
func (s *server) answerAsk(e envelope) {
	res := s.askResults[s.askN%len(s.askResults)]
	s.askN++
	s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, e.ID, res))
}

// call sends a request and returns its response, handling whatever the
// server sends meanwhile.
func (s *server) call(id, method string, params json.RawMessage) envelope {
	s.t.Helper()
	s.methods[id] = method
	line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q`, id, method)
	if params != nil {
		line += `,"params":` + string(params)
	}
	s.send(line + "}")
	return s.await(id)
}

// await reads until the response to id has arrived.
func (s *server) await(id string) envelope {
	s.t.Helper()
	for {
		if e, ok := s.got[id]; ok {
			return e
		}
		if _, ok := s.next(); !ok {
			s.t.Fatalf("the server ended before answering %s %s\nstderr:\n%s", s.methods[id], id, s.stderr.String())
		}
	}
}

func (s *server) notify(method string, params json.RawMessage) {
	s.t.Helper()
	s.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s}`, method, params))
}

// expectExit waits for the server to exit with status 0.
func (s *server) expectExit(why string) {
	s.t.Helper()
	for {
		select {
		case l, ok := <-s.lines:
			if ok {
				s.check(l)
				continue
			}
		case <-time.After(wait):
			s.t.Fatalf("the server did not exit within %s after %s", wait, why)
		}
		break
	}
	select {
	case <-s.exited:
	case <-time.After(wait):
		s.t.Fatalf("the server did not exit within %s after %s", wait, why)
	}
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		s.t.Errorf("the server exited %d after %s, want 0\nstderr:\n%s", code, why, s.stderr.String())
	}
}

// typeViolation tells a corpus case whose field has the wrong JSON type.
func typeViolation(name string) bool {
	return strings.Contains(name, "not-a") || strings.Contains(name, "wrong-type")
}

const fullInit = `{"protocol_version":"1.0","session_id":"corpus","workspace_root":"/tmp","capabilities":["streaming","hooks","ui_ask","cancel","status","log","config","workspace"]}`

func checkCorpus(t *testing.T, r *Result) {
	sch := loadSchemas(t)
	corpus := loadCorpus(t)
	var askResults [][]byte
	for _, c := range corpus[yep.MethodUIAsk] {
		if c.part == "result" {
			askResults = append(askResults, c.data)
		}
	}
	strict := r.Lang != Go // the raw templates; the Go SDK may default a wrongly typed field
	ext := r.Name

	// initialize: one server per case, each ended by closing stdin.
	for _, c := range corpus[yep.MethodInitialize] {
		if c.part != "params" {
			continue
		}
		s := startServer(t, r, sch, askResults)
		e := s.call("1", yep.MethodInitialize, c.data)
		switch {
		case c.valid && e.Error != nil:
			t.Errorf("initialize %s: %s", c.name, e.raw)
		case c.valid:
			var res yep.InitializeResult
			json.Unmarshal(e.Result, &res)
			// The server answers a 1.x no newer than the host offered: the
			// raw templates speak 1.0, the Go SDK ours.
			var p yep.InitializeParams
			json.Unmarshal(c.data, &p)
			offered, _ := yep.ParseVersion(p.ProtocolVersion)
			got, err := yep.ParseVersion(res.ProtocolVersion)
			if err != nil || got.Major != yep.ProtocolMajor || got.Minor > offered.Minor || res.Name != ext || !res.Capabilities.Has(yep.CapCancel) {
				t.Errorf("initialize %s: %s", c.name, e.raw)
			}
		case typeViolation(c.name) && (e.Error == nil || e.Error.Code != yep.CodeInvalidParams):
			t.Errorf("initialize %s: want invalid_params, got %s", c.name, e.raw)
		}
		s.stdin.Close()
		s.expectExit("the end of stdin")
	}

	// Before the handshake, and exit whatever its params.
	s := startServer(t, r, sch, askResults)
	if e := s.call(`"early"`, yep.MethodToolCall, json.RawMessage(`{"name":"hello"}`)); e.Error == nil || e.Error.Code != yep.CodeNotInitialized {
		t.Errorf("tool/call before initialize: want not_initialized, got %s", e.raw)
	}
	s.call("1", yep.MethodInitialize, json.RawMessage(fullInit))
	if e := s.call("2", yep.MethodInitialize, json.RawMessage(fullInit)); e.Error == nil {
		t.Errorf("a second initialize: want an error, got %s", e.raw)
	}
	s.send(`{"jsonrpc":"2.0","method":"exit","params":0}`)
	s.expectExit("exit with params 0")

	// The main session.
	s = startServer(t, r, sch, askResults)
	if e := s.call("1", yep.MethodInitialize, json.RawMessage(fullInit)); e.Error != nil {
		t.Fatalf("initialize: %s", e.raw)
	}
	n := 100
	nextID := func() string {
		n++
		if n%2 == 0 {
			return fmt.Sprintf(`"id-%d"`, n) // string ids stay strings
		}
		return fmt.Sprint(n)
	}
	for _, c := range corpus[yep.MethodInitialized] {
		s.notify(yep.MethodInitialized, c.data)
	}
	for _, method := range []string{yep.MethodToolCall, yep.MethodHookFire, yep.MethodPromptContribution, yep.MethodCommandExecute, yep.MethodConfigChanged, yep.MethodCancel} {
		for _, c := range corpus[method] {
			if c.part != "params" {
				continue
			}
			id := nextID()
			e := s.call(id, method, c.data)
			what := method + " " + c.name
			if string(e.ID) != id {
				t.Errorf("%s: answered id %s, sent %s", what, e.ID, id)
			}
			switch {
			case c.valid && e.Error != nil && (e.Error.Code == yep.CodeInvalidRequest || e.Error.Code == yep.CodeInternalError || e.Error.Code == yep.CodeParseError):
				t.Errorf("%s: valid params answered %s", what, e.raw)
			case method == yep.MethodCancel && !c.valid && (e.Error != nil || !strings.Contains(string(e.Result), `"cancelled":false`)):
				t.Errorf("%s: a malformed cancel is answered cancelled false; got %s", what, e.raw)
			case strict && !c.valid && typeViolation(c.name) && (e.Error == nil || e.Error.Code != yep.CodeInvalidParams):
				t.Errorf("%s: want invalid_params, got %s", what, e.raw)
			}
		}
	}
	for _, method := range []string{yep.MethodTraceEvent, yep.MethodWorkspaceChanged} {
		for _, c := range corpus[method] {
			s.notify(method, c.data)
		}
	}

	// Envelopes, classified by their fields.
	for _, tc := range []struct{ line, id, want string }{
		{`{"jsonrpc":"1.0","id":"e1","method":"prompt/contribution","params":{}}`, `"e1"`, "invalid_request"},
		{`{"jsonrpc":"2.0","id":"e2","method":"prompt/contribution","params":{},"result":{}}`, `"e2"`, "invalid_request"},
		{`{"jsonrpc":"2.0","id":"e3","method":"prompt/contribution","Params":{}}`, `"e3"`, "invalid_request"},
		{`{"jsonrpc":"2.0","id":"e4","method":"teleport","params":{}}`, `"e4"`, "method_not_found"},
		{`{"jsonrpc":"2.0","id":"e5","method":"prompt/contribution"}`, `"e5"`, "result"},
		{`{"id":6,"method":"prompt/contribution","params":{"turn":1},"future":{"x":[1]}}`, "6", "result"},
	} {
		s.methods[tc.id] = yep.MethodPromptContribution
		s.send(tc.line)
		e := s.await(tc.id)
		got := "result"
		if e.Error != nil {
			got = map[int64]string{yep.CodeInvalidRequest: "invalid_request", yep.CodeMethodNotFound: "method_not_found"}[e.Error.Code]
		}
		if got != tc.want {
			t.Errorf("%s: want %s, got %s", tc.line, tc.want, e.raw)
		}
	}
	for _, line := range []string{
		`{"jsonrpc":"2.0","method":"teleport","params":{}}`,
		`{"jsonrpc":"2.0","id":null,"method":"initialized","params":{}}`,
		`this is not JSON`,
		`   `,
		`[{"jsonrpc":"2.0","id":"batch","method":"shutdown","params":{}}]`,
		`{"jsonrpc":"2.0","id":7777,"result":{}}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"shutdown","params":{}}`,
	} {
		s.send(line) // never answered; the next call proves the server still serves
	}

	// Real calls: streaming, the corpus's ui/ask results, status, commands,
	// hooks and the prompt.
	for range askResults {
		id := nextID()
		e := s.call(id, yep.MethodToolCall, json.RawMessage(`{"tool_call_id":"t1","name":"hello","args":{"text":"corpus"}}`))
		var res yep.ToolResult
		if json.Unmarshal(e.Result, &res); e.Error != nil || res.IsError || !strings.Contains(res.Output, "corpus") {
			t.Errorf("tool/call hello: %s", e.raw)
		}
	}
	var streamed bool
	for _, p := range s.seen[yep.MethodToolUpdate] {
		var u yep.ToolUpdateParams
		json.Unmarshal([]byte(p), &u)
		streamed = streamed || (u.ToolCallID == "t1" && u.Output != "")
	}
	if !streamed || len(s.seen[yep.MethodStatusChanged]) == 0 {
		t.Errorf("updates %q, statuses %q", s.seen[yep.MethodToolUpdate], s.seen[yep.MethodStatusChanged])
	}
	if e := s.call(nextID(), yep.MethodCommandExecute, json.RawMessage(`{"name":"`+ext+`:greet","arguments":"a b"}`)); !strings.Contains(string(e.Result), `"success":true`) {
		t.Errorf("command/execute %s:greet: %s", ext, e.raw)
	}
	if e := s.call(nextID(), yep.MethodHookFire, json.RawMessage(`{"event":"pre_tool_use","toolName":"bash","matcher":"bash","payload":{"tool_call_id":"t9","args":{"command":"ls"}}}`)); e.Error != nil || strings.Contains(string(e.Result), "block") {
		t.Errorf("hook/fire: %s", e.raw)
	}
	if e := s.call(nextID(), yep.MethodPromptContribution, json.RawMessage(`{"turn":3}`)); !strings.Contains(string(e.Result), "turn 3") {
		t.Errorf("prompt/contribution: %s", e.raw)
	}

	// Concurrency and cancel: a call waiting on its ui/ask does not hold up
	// another request, and cancelling it answers it cancelled.
	s.answerAsks = false
	held := nextID()
	s.methods[held] = yep.MethodToolCall
	s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tool/call","params":{"name":"hello","args":{"text":"held"}}}`, held))
	for len(s.asks) == 0 {
		if _, ok := s.next(); !ok {
			t.Fatal("the server ended")
		}
		if e, done := s.got[held]; done {
			t.Fatalf("the call answered before asking: %s", e.raw)
		}
	}
	if e := s.call(nextID(), yep.MethodPromptContribution, json.RawMessage(`{"turn":4}`)); e.Error != nil {
		t.Errorf("a request while a call is in flight: %s", e.raw)
	}
	cancelID := nextID()
	if e := s.call(cancelID, yep.MethodCancel, json.RawMessage(`{"id":`+held+`}`)); !strings.Contains(string(e.Result), `"cancelled":true`) {
		t.Errorf("cancel of an in-flight call: %s", e.raw)
	}
	if e := s.await(held); e.Error == nil || e.Error.Code != yep.CodeCancelled {
		t.Errorf("the cancelled call: want cancelled (-32800), got %s", e.raw)
	}
	for _, a := range s.asks {
		s.answerAsk(a) // too late: dropped by the server
	}
	s.answerAsks = true

	// Shutdown: the malformed one first (the raw templates refuse it), then
	// the valid ones; after it nothing but exit.
	var shut []corpusCase
	for _, c := range corpus[yep.MethodShutdown] {
		if c.part == "params" && !c.valid {
			shut = append(shut, c)
		}
	}
	for _, c := range corpus[yep.MethodShutdown] {
		if c.part == "params" && c.valid {
			shut = append(shut, c)
		}
	}
	for _, c := range shut {
		e := s.call(nextID(), yep.MethodShutdown, c.data)
		switch {
		case c.valid && (e.Error != nil || strings.TrimSpace(string(e.Result)) != "{}"):
			t.Errorf("shutdown %s: %s", c.name, e.raw)
		case !c.valid && strict && (e.Error == nil || e.Error.Code != yep.CodeInvalidParams):
			t.Errorf("shutdown %s: want invalid_params, got %s", c.name, e.raw)
		}
	}
	if e := s.call(nextID(), yep.MethodToolCall, json.RawMessage(`{"name":"hello"}`)); e.Error == nil {
		t.Errorf("tool/call after shutdown: want an error, got %s", e.raw)
	}
	s.notify(yep.MethodExit, json.RawMessage(`{}`))
	s.expectExit("exit")
}
