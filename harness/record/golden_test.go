package record_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"yolop.dev/core"
	"yolop.dev/core/host"
	"yolop.dev/core/sdk"
	"yolop.dev/core/tap"
	"yolop.dev/core/transporttest"
	"yolop.dev/core/yep"
	"yolop.dev/harness/record"
)

var update = flag.Bool("update", false, "rewrite the dialogue goldens in "+goldenDir)

// goldenDir holds the YEP dialogue goldens: one recorded exchange per
// protocol feature, between the host and an SDK server.
const goldenDir = "../../schema/yep/v1/dialogues"

// A scenario is one golden: a server, its grant and what the host does.
type scenario struct {
	name   string
	about  string   // the golden's prose header
	info   sdk.Info // Name and Version are set
	server func(s *sdk.Server)
	grant  func(g *host.Grant)
	ask    host.AskSink
	drive  func(ctx context.Context, t *testing.T, s *host.Session, w *wire)
}

// A wire lets a scenario wait until a line has crossed the tap: the host
// does not wait for everything it causes (a cancelled call returns before
// the server has answered it).
type wire struct {
	mu      sync.Mutex
	lines   []string
	changed chan struct{}
}

func (w *wire) observe(l tap.Line) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, string(l.Data))
	close(w.changed)
	w.changed = make(chan struct{})
}

// await waits for a line containing s.
func (w *wire) await(s string) {
	for {
		w.mu.Lock()
		for _, l := range w.lines {
			if strings.Contains(l, s) {
				w.mu.Unlock()
				return
			}
		}
		ch := w.changed
		w.mu.Unlock()
		<-ch
	}
}

var scenarios = []scenario{
	{
		name: "lifecycle",
		about: `The lifecycle: initialize with the host's capabilities and the server's
answer, initialized, then shutdown and exit when the session closes.`,
		server: func(s *sdk.Server) {},
		drive:  func(ctx context.Context, t *testing.T, s *host.Session, w *wire) { startExtension(ctx, t, s) },
	},
	{
		name: "tool_call",
		about: `A tool call whose server streams tool/update notifications correlated by
request_id, then a call the host cancels after its first update: the
host sends cancel, the server answers the call with -32800.`,
		server: func(s *sdk.Server) {
			s.StreamingTool("count", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
				for _, n := range []string{"1", "2", "3"} {
					if err := call.Update(n); err != nil {
						return yep.ToolResult{}, err
					}
				}
				return yep.ToolResult{Output: "counted to 3"}, nil
			})
			s.StreamingTool("wait", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
				if err := call.Update("waiting"); err != nil {
					return yep.ToolResult{}, err
				}
				<-ctx.Done()
				return yep.ToolResult{}, ctx.Err()
			})
		},
		grant: func(g *host.Grant) {
			g.Tools = []host.ToolGrant{{Name: "count", Streaming: true}, {Name: "wait", Streaming: true}}
		},
		drive: func(ctx context.Context, t *testing.T, s *host.Session, w *wire) {
			var updates []string
			res, err := s.CallTool(ctx, "count", "call-1", json.RawMessage(`{}`), func(u yep.ToolUpdateParams) { updates = append(updates, u.Output) })
			if err != nil || res.Output != "counted to 3" || strings.Join(updates, ",") != "1,2,3" {
				t.Fatalf("count = %+v, %v, updates %q; want counted to 3 after 1,2,3", res, err, updates)
			}
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			_, err = s.CallTool(cctx, "wait", "call-2", json.RawMessage(`{}`), func(yep.ToolUpdateParams) { cancel() })
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("the cancelled call returned %v, want context.Canceled", err)
			}
			w.await(`"code":-32800`) // the server's answer to the cancelled call
		},
	},
	{
		name: "hook",
		about: `A pre_tool_use hook: before the call, the host fires hook/fire at the
server's subscription; the server blocks the first call (the tool never
runs) and allows the second.`,
		server: func(s *sdk.Server) {
			s.Tool("rm", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
				return yep.ToolResult{Output: "removed"}, nil
			})
			s.OnHook(yep.HookPreToolUse, "rm", func(ctx context.Context, h *sdk.HookEvent) (yep.HookFireResult, error) {
				if strings.Contains(string(h.Args), `"path":"/"`) {
					return yep.HookFireResult{Decision: yep.DecisionBlock, Reason: "not the root"}, nil
				}
				return yep.HookFireResult{Decision: yep.DecisionAllow}, nil
			})
		},
		grant: func(g *host.Grant) {
			g.Tools = []host.ToolGrant{{Name: "rm"}}
			g.Hooks = []host.HookGrant{{Event: yep.HookPreToolUse, Matcher: "rm", TimeoutMS: 600000, OnError: "block"}}
		},
		drive: func(ctx context.Context, t *testing.T, s *host.Session, w *wire) {
			if _, err := s.CallTool(ctx, "rm", "call-1", json.RawMessage(`{"path":"/"}`), nil); err == nil || !strings.Contains(err.Error(), "not the root") {
				t.Fatalf("the denied call returned %v, want the hook's reason", err)
			}
			if res, err := s.CallTool(ctx, "rm", "call-2", json.RawMessage(`{"path":"/tmp/x"}`), nil); err != nil || res.Output != "removed" {
				t.Fatalf("the allowed call = %+v, %v", res, err)
			}
		},
	},
	{
		name: "ui_ask",
		about: `ui/ask: during a tool call the server asks the host a question; the host's
answer is the response to the server's request, and the call ends.`,
		info: sdk.Info{UIAsk: true},
		server: func(s *sdk.Server) {
			s.Tool("greet", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
				a, err := s.Ask(ctx, yep.UIAskParams{Prompt: "Your name?"})
				if err != nil {
					return yep.ToolResult{}, err
				}
				return yep.ToolResult{Output: "hello, " + a.Answer}, nil
			})
		},
		grant: func(g *host.Grant) {
			g.UIAsk = true
			g.Tools = []host.ToolGrant{{Name: "greet"}}
		},
		ask: askFunc(func(ctx context.Context, ext string, p yep.UIAskParams) (yep.UIAskResult, error) {
			return yep.UIAskResult{Answer: "Ada"}, nil
		}),
		drive: func(ctx context.Context, t *testing.T, s *host.Session, w *wire) {
			if res, err := s.CallTool(ctx, "greet", "call-1", json.RawMessage(`{}`), nil); err != nil || res.Output != "hello, Ada" {
				t.Fatalf("greet = %+v, %v; want hello, Ada", res, err)
			}
		},
	},
	{
		name: "config_changed",
		about: `config/changed: the host pushes a changed config to a running server,
which takes it without a restart.`,
		server: func(s *sdk.Server) {
			s.OnConfigChanged(func(ctx context.Context, cfg json.RawMessage) (bool, error) { return false, nil })
		},
		grant: func(g *host.Grant) {
			g.ConfigSchema = json.RawMessage(`{"type":"object","properties":{"level":{"type":"string"}}}`)
			g.Config = json.RawMessage(`{"level":"info"}`)
		},
		drive: func(ctx context.Context, t *testing.T, s *host.Session, w *wire) {
			e := startExtension(ctx, t, s)
			if restarted, err := e.UpdateConfig(ctx, json.RawMessage(`{"level":"debug"}`)); err != nil || restarted {
				t.Fatalf("UpdateConfig = restarted %v, %v; want applied in place", restarted, err)
			}
		},
	},
	{
		name: "trace_event",
		about: `trace/event: the host forwards the session's trace events to a server
that declares "trace", in order, a turn's events batched into one write
(a batch goes when the turn completes; the lines are the same however the
writes fall).`,
		server: func(s *sdk.Server) {
			s.OnTrace(func(ev yep.TraceEventParams) {})
		},
		grant: func(g *host.Grant) { g.Trace = true },
		drive: func(ctx context.Context, t *testing.T, s *host.Session, w *wire) {
			s.Trace(yep.TraceEventParams{Type: "tool.started", TurnID: "1", SpanID: "a1", Data: json.RawMessage(`{"tool":"echo"}`)})
			s.Trace(yep.TraceEventParams{Type: "tool.completed", TurnID: "1", SpanID: "a1", Data: json.RawMessage(`{"tool":"echo","duration_ms":3}`)})
			s.Trace(yep.TraceEventParams{Type: yep.TraceTurnCompleted, TurnID: "1"})
			w.await(`"type":"` + yep.TraceTurnCompleted + `"`)
		},
	},
}

// startExtension starts the scenario's extension, whose grant is lazy.
func startExtension(ctx context.Context, t *testing.T, s *host.Session) *host.Extension {
	e, _ := s.Extension("golden")
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return e
}

type askFunc func(ctx context.Context, ext string, p yep.UIAskParams) (yep.UIAskResult, error)

func (f askFunc) Ask(ctx context.Context, ext string, p yep.UIAskParams) (yep.UIAskResult, error) {
	return f(ctx, ext, p)
}

// TestDialogueGoldens records each scenario through a tapped transport and
// compares the dialogue with its golden, ignoring what the golden declares
// volatile; -update rewrites the goldens. Each golden is then replayed
// against a new instance of its server, which must match it.
func TestDialogueGoldens(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			info := sc.info
			info.Name, info.Version = "golden", "1.0.0"
			tr := &transporttest.Transport{Servers: map[string]transporttest.Server{
				"golden": transporttest.SDK(info, sc.server),
			}}
			got := recordScenario(t, tr, sc)
			path := filepath.Join(goldenDir, sc.name+".txtar")
			if *update {
				if err := os.WriteFile(path, got.Format(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (write the golden with: go test ./record -run TestDialogueGoldens -update)", err)
			}
			want, err := record.Parse(path, data)
			if err != nil {
				t.Fatal(err)
			}
			if d := compareFiles(want, got); d != "" {
				t.Fatalf("%s: %s\n(if the change is intended, rerun with -update)\ngot:\n%s", path, d, got.Format())
			}
			for _, d := range want.Dialogues {
				inst, err := tr.Start(context.Background(), core.ServerSpec{Name: "golden"})
				if err != nil {
					t.Fatal(err)
				}
				if err := record.Replay(context.Background(), inst, d, record.Options{Volatile: want.Volatile}); err != nil {
					t.Fatalf("replaying %s: %v", path, err)
				}
			}
		})
	}
}

func recordScenario(t *testing.T, tr core.Transport, sc scenario) *record.File {
	t.Helper()
	var rec record.Recorder
	w := &wire{changed: make(chan struct{})}
	g := host.Grant{Name: "golden", Version: "1.0.0", ProtocolVersion: yep.ProtocolVersion, Server: core.ServerSpec{Name: "golden"}}
	if sc.grant != nil {
		sc.grant(&g)
	}
	s := host.NewSession(host.SessionOptions{
		Grants:        []host.Grant{g},
		Transport:     &tap.Transport{Inner: tr, Observe: func(l tap.Line) { rec.Observe(l); w.observe(l) }},
		SessionID:     "golden",
		WorkspaceRoot: "/workspace",
		Ask:           sc.ask,
	})
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		s.Close()
		t.Fatal(err)
	}
	sc.drive(ctx, t, s, w)
	s.Close()
	return rec.File(sc.about)
}

// compareFiles describes the first difference between two recordings,
// ignoring want's volatile members; "" when they match. The host's lines
// must come in the same order; the server's may come in another (a
// cancel's answer and the cancelled call's error race), as in a replay.
func compareFiles(want, got *record.File) string {
	if len(want.Dialogues) != len(got.Dialogues) {
		return fmt.Sprintf("%d dialogues, want %d", len(got.Dialogues), len(want.Dialogues))
	}
	for i, w := range want.Dialogues {
		g := got.Dialogues[i]
		if w.Name != g.Name {
			return fmt.Sprintf("dialogue %d is %s, want %s", i, g.Name, w.Name)
		}
		for _, dir := range []tap.Direction{tap.ToServer, tap.ToHost} {
			wm, gm := only(w.Messages, dir), only(g.Messages, dir)
			matched := make([]bool, len(wm))
			for k, m := range gm {
				j := -1
				for x := range wm {
					if !matched[x] && record.Compare(wm[x].Data, m.Data, want.Volatile) == "" {
						j = x
						break
					}
					if dir == tap.ToServer && !matched[x] {
						break // the host's lines keep their order
					}
				}
				if j < 0 {
					first := slices.Index(matched, false)
					if first < 0 {
						return fmt.Sprintf("dialogue %s: an extra %s line: %s", w.Name, dir, m.Data)
					}
					return fmt.Sprintf("line %d: %s line %d differs: %s\n  want %s\n  got  %s", wm[first].Line, dir, k+1, record.Compare(wm[first].Data, m.Data, want.Volatile), wm[first].Data, m.Data)
				}
				matched[j] = true
			}
			if first := slices.Index(matched, false); first >= 0 {
				return fmt.Sprintf("line %d: missing %s", wm[first].Line, wm[first].Data)
			}
		}
	}
	return ""
}

func only(ms []record.Message, dir tap.Direction) []record.Message {
	var out []record.Message
	for _, m := range ms {
		if m.Dir == dir {
			out = append(out, m)
		}
	}
	return out
}
