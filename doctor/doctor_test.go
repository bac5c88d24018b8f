package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"yolop.dev/core"
	"yolop.dev/core/yep"
)

func TestEmbeddedSchemaMatchesTheRepository(t *testing.T) {
	want, err := os.ReadFile("../schema/yep/v1/schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(SchemaJSON, want) {
		t.Fatal("doctor/schema.json differs from schema/yep/v1/schema.json; copy the repository file over it")
	}
}

// TestWireValidatesTheConformanceCorpus wraps every payload of the
// corpus in schema/yep/v1/conformance in a message travelling the way its
// method does, and checks that the wire flags exactly the invalid ones.
func TestWireValidatesTheConformanceCorpus(t *testing.T) {
	s, err := compiledSchemas()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../schema/yep/v1/conformance/*.txtar")
	if len(files) < len(yep.Methods) {
		t.Fatalf("found %d corpus files", len(files))
	}
	checked := 0
	for _, f := range files {
		method := strings.ReplaceAll(strings.TrimSuffix(filepath.Base(f), ".txtar"), "_", "/")
		info, known := yep.Method(method)
		if !known {
			continue // error.txtar, capability_params.txtar
		}
		ar, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, sec := range ar.Files {
			part, rest, _ := strings.Cut(sec.Name, "/")
			valid := strings.HasPrefix(rest, "valid/")
			payload := bytes.TrimSpace(sec.Data)
			sender, receiver := toServer, toHost
			if info.Direction == yep.ToHost {
				sender, receiver = toHost, toServer
			}
			w := newWire(nil, s)
			inst := &tapInstance{w: w, pending: [2]map[string]string{{}, {}}}
			switch part {
			case "params":
				if info.Kind == yep.Request {
					w.observe(inst, sender, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, method, payload))
				} else {
					w.observe(inst, sender, fmt.Appendf(nil, `{"jsonrpc":"2.0","method":%q,"params":%s}`, method, payload))
				}
			case "result":
				w.observe(inst, sender, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"r","method":%q,"params":{}}`, method))
				w.problems = nil // the empty params may be invalid; only the result counts
				w.observe(inst, receiver, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"r","result":%s}`, payload))
			default:
				continue
			}
			probs := w.problemList()
			if valid && len(probs) > 0 {
				t.Errorf("%s %s: flagged a valid payload: %+v", filepath.Base(f), sec.Name, probs)
			}
			if !valid && len(probs) == 0 {
				t.Errorf("%s %s: an invalid payload passed", filepath.Base(f), sec.Name)
			}
			checked++
		}
	}
	if checked < 50 {
		t.Fatalf("only %d payloads checked", checked)
	}
}

func TestWireFlagsEnvelopeProblems(t *testing.T) {
	s, err := compiledSchemas()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		dir   direction
		line  string
		want  string // substring of the problem; "" means none
		minor bool
	}{
		{"not JSON on stdout", toHost, `starting server...`, "not a JSON-RPC message", false},
		{"wrong jsonrpc", toHost, `{"jsonrpc":"1.0","method":"log","params":{"message":"m"}}`, `must be "2.0"`, false},
		{"missing jsonrpc", toHost, `{"method":"log","params":{"message":"m"}}`, `without "jsonrpc"`, true},
		{"host method from the server", toHost, `{"jsonrpc":"2.0","id":1,"method":"tool/call","params":{"name":"x"}}`, "never by the server", false},
		{"notification sent as a request", toHost, `{"jsonrpc":"2.0","id":1,"method":"log","params":{"message":"m"}}`, "is a notification but was sent as a request", false},
		{"fractional id", toServer, `{"jsonrpc":"2.0","id":1.5,"method":"shutdown","params":{}}`, "not a string or an integer", false},
		{"unknown method", toHost, `{"jsonrpc":"2.0","method":"teleport","params":{}}`, "unknown method", true},
		{"stray response", toHost, `{"jsonrpc":"2.0","id":99,"result":{}}`, "names no request in flight", true},
		{"both result and error", toHost, `{"jsonrpc":"2.0","id":98,"result":{},"error":{"message":"x"}}`, `both "result" and "error"`, false},
		{"error without message", toHost, `{"jsonrpc":"2.0","id":97,"error":{"code":1}}`, "message", false},
		{"a valid log", toHost, `{"jsonrpc":"2.0","method":"log","params":{"level":"info","message":"hi"}}`, "", false},
		{"a blank line", toHost, `   `, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWire(nil, s)
			inst := &tapInstance{w: w, pending: [2]map[string]string{{}, {}}}
			w.observe(inst, tc.dir, []byte(tc.line))
			probs := w.problemList()
			if tc.want == "" {
				if len(probs) != 0 {
					t.Fatalf("problems = %+v", probs)
				}
				return
			}
			for _, p := range probs {
				if strings.Contains(p.detail, tc.want) && p.minor == tc.minor {
					return
				}
			}
			t.Fatalf("want a problem with %q (minor %v), got %+v", tc.want, tc.minor, probs)
		})
	}
}

func TestWireMatchesResponsesToRequestsPerDirection(t *testing.T) {
	s, _ := compiledSchemas()
	w := newWire(nil, s)
	inst := &tapInstance{w: w, pending: [2]map[string]string{{}, {}}}
	// Both sides use id 1 at once: each response answers its own side.
	w.observe(inst, toServer, []byte(`{"jsonrpc":"2.0","id":1,"method":"tool/call","params":{"name":"t"}}`))
	w.observe(inst, toHost, []byte(`{"jsonrpc":"2.0","id":1,"method":"ui/ask","params":{"prompt":"?"}}`))
	w.observe(inst, toServer, []byte(`{"jsonrpc":"2.0","id":1,"result":{"answer":"yes"}}`))
	w.observe(inst, toHost, []byte(`{"jsonrpc":"2.0","id":1,"result":{"output":7}}`))
	msgs := w.since(0)
	if msgs[2].answers != yep.MethodUIAsk || msgs[3].answers != yep.MethodToolCall {
		t.Fatalf("answers = %q, %q", msgs[2].answers, msgs[3].answers)
	}
	probs := w.problemList()
	if len(probs) != 1 || probs[0].what != "response to tool/call" || !strings.Contains(probs[0].detail, "at /output") {
		t.Fatalf("problems = %+v", probs)
	}
}

func TestProbeNameMatchesItsGlob(t *testing.T) {
	for _, m := range []string{"bash", "git*", "*_file", "lsp_?ename", "[abc]at", `a\*b`, "x[!a-y]z", "*"} {
		name, ok := probeName(m)
		if !ok {
			t.Errorf("%q: no name", m)
			continue
		}
		if m != "*" {
			if match, _ := path.Match(m, name); !match {
				t.Errorf("%q: %q does not match", m, name)
			}
		}
	}
	if _, ok := probeName("[^a-zA-Z0-9_-]"); ok {
		t.Error("a class no tool-name character fits gave a name")
	}
}

// pipeInstance is a core.Instance over in-memory pipes, for the reader
// tests.
type pipeInstance struct {
	core.Instance
	r io.Reader
}

func (p pipeInstance) Stdout() io.Reader     { return p.r }
func (p pipeInstance) Stdin() io.WriteCloser { return nopCloser{io.Discard} }

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

type pipeTransport struct{ r io.Reader }

func (p pipeTransport) Start(context.Context, core.ServerSpec) (core.Instance, error) {
	return pipeInstance{r: p.r}, nil
}

func TestTapReaderHoldsAndDrops(t *testing.T) {
	s, _ := compiledSchemas()
	pr, pw := io.Pipe()
	w := newWire(pipeTransport{pr}, s)
	ci, err := w.Start(context.Background(), core.ServerSpec{})
	if err != nil {
		t.Fatal(err)
	}
	out := ci.Stdout()
	inst := w.latest()

	lines := make(chan string, 4)
	readErr := make(chan error, 1)
	go func() {
		buf := make([]byte, 256)
		for {
			n, err := out.Read(buf)
			if n > 0 {
				lines <- string(buf[:n])
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()
	io.WriteString(pw, "{\"jsonrpc\":\"2.0\",\"method\":\"log\",\"params\":{\"message\":\"one\"}}\n")
	if l := <-lines; !strings.Contains(l, "one") {
		t.Fatalf("got %q", l)
	}

	inst.out.hold()
	// The held line is neither delivered nor read while the hold lasts.
	go io.WriteString(pw, "{\"jsonrpc\":\"2.0\",\"method\":\"log\",\"params\":{\"message\":\"two\"}}\n")
	select {
	case l := <-lines:
		t.Fatalf("a held line was delivered: %q", l)
	case <-time.After(50 * time.Millisecond):
	}
	inst.out.resume()
	if l := <-lines; !strings.Contains(l, "two") {
		t.Fatalf("got %q", l)
	}

	// Dropping discards everything up to the end of the stream.
	inst.out.hold()
	go func() {
		io.WriteString(pw, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"decision\":\"allow\"}}\n")
		pw.Close()
	}()
	inst.out.drop()
	if err := <-readErr; !errors.Is(err, io.EOF) {
		t.Fatalf("read error = %v", err)
	}
	select {
	case l := <-lines:
		t.Fatalf("a dropped line was delivered: %q", l)
	default:
	}
	for _, m := range w.since(0) {
		if strings.Contains(string(m.raw), "allow") {
			t.Fatal("a dropped line was observed as delivered")
		}
	}
}

func TestReportTableAndJSON(t *testing.T) {
	r := &Report{Extension: "x", Version: "1.0.0"}
	r.add(GroupClamp, "tool rm_rf", Fail, "refused")
	r.add(GroupTool, "tool echo", Pass, "ok")
	r.add(GroupTool, "tool stream", Warn, "no example; skipped")
	r.Hooks = []HookProbe{{Event: "pre_tool_use", Matcher: "bash", OnError: "block", Tool: "bash",
		Steps: []HookStep{{Condition: condNormal, Decision: "block", Outcome: outBlocked, Status: Pass}}}}
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"FAIL  clamp", "tool rm_rf", "pre_tool_use bash → bash", "FAILED: 1 passed, 1 warnings, 1 failed"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back.Failed != 1 || back.OK() || len(back.Hooks[0].Steps) != 1 {
		t.Fatalf("round trip: %v %+v", err, back)
	}
}

func TestTapReaderPassesAnOversizedLineWithoutBufferingIt(t *testing.T) {
	s, _ := compiledSchemas()
	pr, pw := io.Pipe()
	w := newWire(pipeTransport{pr}, s)
	ci, err := w.Start(context.Background(), core.ServerSpec{})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		io.WriteString(pw, `{"jsonrpc":"2.0","method":"log","params":{"message":"`)
		pw.Write(bytes.Repeat([]byte("x"), maxObservedLine))
		io.WriteString(pw, "\"}}\n{\"jsonrpc\":\"2.0\",\"method\":\"log\",\"params\":{\"message\":\"after\"}}\n")
		pw.Close()
	}()
	n, err := io.Copy(io.Discard, ci.Stdout())
	if err != nil {
		t.Fatal(err)
	}
	if n < maxObservedLine {
		t.Fatalf("delivered %d bytes; the oversized line must still reach the host", n)
	}
	probs := w.problemList()
	if len(probs) != 1 || !strings.Contains(probs[0].detail, "longer than") {
		t.Fatalf("problems = %+v", probs)
	}
	msgs := w.since(0)
	if last := msgs[len(msgs)-1]; last.method != yep.MethodLog || !strings.Contains(string(last.params), "after") {
		t.Fatalf("the line after the oversized one was not observed: %+v", last)
	}
}

// FuzzWireObserve feeds arbitrary server output to the wire: it must never
// panic, and every non-blank line is either a recorded message or a
// problem.
func FuzzWireObserve(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"output":"hi"}}`,
		`{"jsonrpc":"2.0","method":"tool/update","params":{"request_id":1,"output":"x"}}`,
		`{"jsonrpc":"2.0","id":[1],"method":"ui/ask","params":{"prompt":"?"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}`,
		`{"method":null}`,
		`[1,2,3]`,
		`not json`,
		`{"jsonrpc":"2.0","id":1e3,"method":"log"}`,
		"",
	} {
		f.Add(seed)
	}
	s, err := compiledSchemas()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line string) {
		w := newWire(nil, s)
		inst := &tapInstance{w: w, pending: [2]map[string]string{{}, {}}}
		w.observe(inst, toServer, []byte(`{"jsonrpc":"2.0","id":1,"method":"tool/call","params":{"name":"t"}}`))
		w.observe(inst, toHost, []byte(line))
		if strings.TrimSpace(strings.TrimRight(line, "\r")) == "" {
			return
		}
		if len(w.since(0)) != 2 {
			t.Fatalf("line %q was not recorded", line)
		}
	})
}
