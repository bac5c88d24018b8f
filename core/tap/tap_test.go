package tap_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"yolop.dev/core"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/sdk"
	"yolop.dev/core/tap"
	"yolop.dev/core/transporttest"
	"yolop.dev/core/yep"
)

// lines collects what a tap observes.
type lines struct {
	mu  sync.Mutex
	got []tap.Line
}

func (l *lines) observe(x tap.Line) {
	l.mu.Lock()
	defer l.mu.Unlock()
	x.Data = append([]byte(nil), x.Data...)
	l.got = append(l.got, x)
}

func (l *lines) text() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, x := range l.got {
		s := string(x.Data)
		if x.Oversize {
			s = "<oversize>"
		}
		out = append(out, fmt.Sprintf("%d %s %s: %s", x.Instance, x.Name, x.Dir, s))
	}
	return out
}

// A real YEP exchange through the tap: every message is observed once, in
// the order the host and the server sent it, and the connection works as
// without the tap.
func TestTransportObservesADialogue(t *testing.T) {
	var l lines
	tr := &tap.Transport{Observe: l.observe, Inner: &transporttest.Transport{Servers: map[string]transporttest.Server{
		"greeter": transporttest.SDK(sdk.Info{}, func(s *sdk.Server) {
			s.Tool("greet", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
				return yep.ToolResult{Output: "hello"}, nil
			})
		}),
	}}}
	ctx := context.Background()
	inst, err := tr.Start(ctx, core.ServerSpec{Name: "greeter"})
	if err != nil {
		t.Fatal(err)
	}
	conn := jsonrpc.NewConn(inst.Stdout(), inst.Stdin(), jsonrpc.Options{Closer: inst.Stdin()})
	var init yep.InitializeResult
	if err := conn.Call(ctx, yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: yep.ProtocolVersion}, &init); err != nil {
		t.Fatal(err)
	}
	var res yep.ToolResult
	if err := conn.Call(ctx, yep.MethodToolCall, yep.ToolCallParams{Name: "greet"}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Output != "hello" {
		t.Fatalf("tool output through the tap = %q, want hello", res.Output)
	}
	conn.Close()
	_ = inst.Stop(time.Minute)
	conn.Wait()

	got := l.text()
	want := []string{
		`0 greeter host→server: {"jsonrpc":"2.0","id":1,"method":"initialize"`,
		`0 greeter server→host: {"jsonrpc":"2.0","id":1,"result":`,
		`0 greeter host→server: {"jsonrpc":"2.0","id":2,"method":"tool/call"`,
		`0 greeter server→host: {"jsonrpc":"2.0","id":2,"result":`,
	}
	if len(got) != len(want) {
		t.Fatalf("observed %d lines, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("line %d = %s\nwant prefix %s", i, got[i], want[i])
		}
	}
}

// Lines split across writes and reads, joined in one write, ended
// without a newline or longer than MaxLine are observed as lines, and the
// bytes pass through unchanged.
func TestTransportSplitsLines(t *testing.T) {
	big := strings.Repeat("x", tap.MaxLine+1)
	var l lines
	tr := &tap.Transport{Observe: l.observe, Inner: &transporttest.Transport{Servers: map[string]transporttest.Server{
		"raw": func(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
			in, err := io.ReadAll(stdin)
			if err != nil {
				return err
			}
			for _, chunk := range []string{`{"a":`, "1}\n{\"b\":2}\n\n{\"c\"", ":3}\r\n", big, "\n", `{"d":4}`} {
				if _, err := io.WriteString(stdout, chunk); err != nil {
					return err
				}
			}
			_, err = stdout.Write(in[:0])
			return err
		},
	}}}
	inst, err := tr.Start(context.Background(), core.ServerSpec{Name: "raw"})
	if err != nil {
		t.Fatal(err)
	}
	for _, chunk := range []string{"{\"h\":", "1}\n{\"h\":2}\n", `{"h":3}`} {
		if _, err := io.WriteString(inst.Stdin(), chunk); err != nil {
			t.Fatal(err)
		}
	}
	inst.Stdin().Close()
	r := bufio.NewReader(inst.Stdout())
	all, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"a\":1}\n{\"b\":2}\n\n{\"c\":3}\r\n" + big + "\n{\"d\":4}"; string(all) != want {
		t.Fatalf("the tap changed the server's bytes: got %d bytes, want %d", len(all), len(want))
	}
	_ = inst.Stop(time.Minute)
	got := l.text()
	want := []string{
		`0 raw host→server: {"h":1}`,
		`0 raw host→server: {"h":2}`,
		`0 raw host→server: {"h":3}`,
		`0 raw server→host: {"a":1}`,
		`0 raw server→host: {"b":2}`,
		`0 raw server→host: {"c":3}`,
		`0 raw server→host: <oversize>`,
		`0 raw server→host: {"d":4}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("observed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The host closes a server's stdin while another goroutine may still be
// writing to it (a cancel sent as a call is abandoned while the session
// closes): the tap must take both without a data race, and observe every
// line that was written whole.
func TestStdinWriteAndCloseConcurrently(t *testing.T) {
	var l lines
	tr := &tap.Transport{Observe: l.observe, Inner: &transporttest.Transport{Servers: map[string]transporttest.Server{
		"sink": func(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
			_, err := io.Copy(io.Discard, stdin)
			return err
		},
	}}}
	for range 50 {
		inst, err := tr.Start(context.Background(), core.ServerSpec{Name: "sink"})
		if err != nil {
			t.Fatal(err)
		}
		in := inst.Stdin()
		var wg sync.WaitGroup
		wg.Go(func() {
			for range 20 {
				if _, err := io.WriteString(in, "{\"partial\":"); err != nil {
					return
				}
				if _, err := io.WriteString(in, "1}\n"); err != nil {
					return
				}
			}
		})
		wg.Go(func() { _ = in.Close() })
		wg.Wait()
		_ = inst.Stop(time.Minute)
	}
	for _, s := range l.text() {
		if !strings.HasSuffix(s, `{"partial":1}`) && !strings.HasSuffix(s, `{"partial":`) {
			t.Fatalf("observed a line that was never written: %s", s)
		}
	}
}
