package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core"
	"yolop.dev/core/examples/echo/echoext"
	"yolop.dev/core/internal/leakcheck"
	"yolop.dev/core/internal/testdeadline"
	"yolop.dev/core/internal/testservers"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/transporttest"
	"yolop.dev/core/yep"
)

// manifest is the part of plugin.json the test checks against the
// handshake.
type manifest struct {
	Name  string `json:"name"`
	Yolop struct {
		ProtocolVersion  string `json:"protocol_version"`
		CapabilityServer struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"capabilityServer"`
		Tools []struct {
			Name       string `json:"name"`
			NeverDefer bool   `json:"never_defer"`
			Streaming  bool   `json:"streaming"`
		} `json:"tools"`
		Hooks    []yep.HookSubscription `json:"hooks"`
		Prompt   string                 `json:"prompt"`
		Commands []yep.CommandDecl      `json:"commands"`
	} `json:"yolop"`
}

// installPackage copies the package (plugin.json) into a temporary package
// directory and builds the server into its bin/, where the host looks for
// a bare capabilityServer.command first.
func installPackage(t *testing.T) (dir string, m manifest) {
	t.Helper()
	raw, err := os.ReadFile("plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("plugin.json: %v", err)
	}
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	testservers.Build(t, "yolop.dev/core/examples/echo", filepath.Join(dir, "bin", m.Yolop.CapabilityServer.Command))
	return dir, m
}

// resolve finds a bare server command as the host does: the package's bin/
// first, then PATH.
func resolve(t *testing.T, pkgDir, command string) string {
	t.Helper()
	if p := filepath.Join(pkgDir, "bin", command); fileIsExec(p) {
		return p
	}
	p, err := exec.LookPath(command)
	if err != nil {
		t.Fatalf("capabilityServer.command %q: not in %s/bin nor on PATH", command, pkgDir)
	}
	return p
}

func fileIsExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// strays records notifications that reached the client's handler instead
// of a call's OnNotify.
type strays struct {
	mu  sync.Mutex
	got []string
}

func (s *strays) Handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, req.Method+" "+string(req.Params))
	if req.IsNotification() {
		return nil, nil
	}
	return nil, yep.ErrMethodNotFound
}

func (s *strays) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.got)
}

func (s *strays) snapshot() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

func start(t *testing.T, pkgDir string, m manifest) (*testservers.Process, *strays) {
	t.Helper()
	st := &strays{}
	bin := resolve(t, pkgDir, m.Yolop.CapabilityServer.Command)
	p := testservers.Start(t, jsonrpc.Options{Handler: st}, append([]string{bin}, m.Yolop.CapabilityServer.Args...)...)
	return p, st
}

func initialize(t *testing.T, ctx context.Context, c *jsonrpc.Conn) yep.InitializeResult {
	t.Helper()
	var res yep.InitializeResult
	err := c.Call(ctx, yep.MethodInitialize, yep.InitializeParams{
		ProtocolVersion: yep.ProtocolVersion,
		SessionID:       "s1",
		WorkspaceRoot:   "/tmp/ws",
		Capabilities:    yep.Capabilities{yep.CapStreaming, yep.CapCancel, yep.CapHooks},
	}, &res)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if err := c.Notify(ctx, yep.MethodInitialized, yep.InitializedParams{}); err != nil {
		t.Fatalf("initialized: %v", err)
	}
	return res
}

func callTool(ctx context.Context, c *jsonrpc.Conn, name string, args any, co jsonrpc.CallOptions) (yep.ToolResult, error) {
	raw, _ := json.Marshal(args)
	var res yep.ToolResult
	err := c.CallWith(ctx, yep.MethodToolCall, yep.ToolCallParams{ToolCallID: "tc-" + name, Name: name, Args: raw}, &res, co)
	return res, err
}

// TestEchoServer drives every facet of the echo server, spawned as a real
// subprocess from its package's bin/, through core/jsonrpc.
func TestEchoServer(t *testing.T) {
	leakcheck.Check(t)
	pkgDir, m := installPackage(t)
	p, st := start(t, pkgDir, m)
	ctx, cancel := context.WithTimeout(context.Background(), testdeadline.Left(t))
	defer cancel()
	c := p.Conn

	res := initialize(t, ctx, c)
	var cancelledID yep.ID // the request id of the cancelled count

	t.Run("handshake", func(t *testing.T) {
		// The manifest may declare an older minor than the SDK speaks:
		// minors only add.
		if res.ProtocolVersion != yep.ProtocolVersion || res.Name != m.Name {
			t.Errorf("identity = %q %q, want %q %q", res.Name, res.ProtocolVersion, m.Name, yep.ProtocolVersion)
		}
		wantCaps := yep.Capabilities{yep.CapTools, yep.CapStreaming, yep.CapHooks, yep.CapPrompt, yep.CapCommands, yep.CapCancel}
		if !slices.Equal(res.Capabilities, wantCaps) {
			t.Errorf("capabilities = %v, want %v", res.Capabilities, wantCaps)
		}
		// D4: the handshake must stay within the manifest.
		var tools []yep.ToolDecl
		mustDecode(t, res.CapabilityParams, yep.CapTools, &tools)
		var served, declared []string
		for _, tl := range tools {
			served = append(served, tl.Name)
		}
		for _, tl := range m.Yolop.Tools {
			declared = append(declared, tl.Name)
			// reverse is the deferred one: a model finds it with
			// tool_search.
			if tl.NeverDefer != (tl.Name != "reverse") {
				t.Errorf("manifest tool %s: never_defer = %v", tl.Name, tl.NeverDefer)
			}
			if tl.Streaming != (tl.Name == "count") {
				t.Errorf("manifest tool %s: streaming = %v", tl.Name, tl.Streaming)
			}
		}
		if !slices.Equal(served, declared) {
			t.Errorf("served tools %v, manifest tools %v", served, declared)
		}
		var prompt yep.PromptDecl
		mustDecode(t, res.CapabilityParams, yep.CapPrompt, &prompt)
		if prompt.Static != m.Yolop.Prompt || prompt.Static != echoext.Prompt || prompt.Dynamic {
			t.Errorf("prompt = %+v, manifest %q", prompt, m.Yolop.Prompt)
		}
		var hooks []yep.HookSubscription
		mustDecode(t, res.CapabilityParams, yep.CapHooks, &hooks)
		if !reflect.DeepEqual(hooks, m.Yolop.Hooks) {
			t.Errorf("hooks = %+v, manifest %+v", hooks, m.Yolop.Hooks)
		}
		var commands []yep.CommandDecl
		mustDecode(t, res.CapabilityParams, yep.CapCommands, &commands)
		if !reflect.DeepEqual(commands, m.Yolop.Commands) {
			t.Errorf("commands = %+v, manifest %+v", commands, m.Yolop.Commands)
		}
	})

	t.Run("plain call", func(t *testing.T) {
		out, err := callTool(ctx, c, "echo", map[string]string{"text": "héllo \"world\"\n"}, jsonrpc.CallOptions{})
		if err != nil || out.Output != "héllo \"world\"\n" || out.IsError {
			t.Fatalf("echo = %+v, %v", out, err)
		}
	})

	t.Run("deferred call", func(t *testing.T) {
		out, err := callTool(ctx, c, "reverse", map[string]string{"text": "héllo, yolop"}, jsonrpc.CallOptions{})
		if err != nil || out.Output != "poloy ,olléh" || out.IsError {
			t.Fatalf("reverse = %+v, %v", out, err)
		}
	})

	t.Run("unknown tool", func(t *testing.T) {
		_, err := callTool(ctx, c, "nope", nil, jsonrpc.CallOptions{})
		var we *yep.Error
		if !errors.As(err, &we) || we.Code != yep.CodeInvalidParams || !contains(we.Message, `"nope"`) {
			t.Fatalf("unknown tool: %v", err)
		}
	})

	t.Run("streaming call", func(t *testing.T) {
		var updates []string
		var ids []string
		var callID yep.ID
		out, err := callTool(ctx, c, "count", map[string]int{"n": 5, "delay_ms": 1}, jsonrpc.CallOptions{
			OnID: func(id yep.ID) { callID = id },
			OnNotify: func(method string, params json.RawMessage) {
				var u yep.ToolUpdateParams
				if method != yep.MethodToolUpdate || json.Unmarshal(params, &u) != nil {
					t.Errorf("unexpected notification %s %s", method, params)
					return
				}
				updates = append(updates, u.Output)
				ids = append(ids, u.RequestID.String()+"/"+u.ToolCallID)
			},
		})
		if err != nil || out.Output != "counted to 5" {
			t.Fatalf("count = %+v, %v", out, err)
		}
		if want := []string{"1", "2", "3", "4", "5"}; !slices.Equal(updates, want) {
			t.Errorf("updates before the result = %v, want %v", updates, want)
		}
		for _, id := range ids {
			if id != callID.String()+"/tc-count" {
				t.Errorf("update correlates to %s, want %s/tc-count", id, callID)
			}
		}
	})

	t.Run("cancel streaming call", func(t *testing.T) {
		before := st.count()
		cctx, ccancel := context.WithCancel(ctx)
		defer ccancel()
		var n int
		_, err := callTool(cctx, c, "count", map[string]int{"n": 100000, "delay_ms": 1}, jsonrpc.CallOptions{
			OnID: func(id yep.ID) { cancelledID = id },
			OnNotify: func(string, json.RawMessage) {
				if n++; n == 3 {
					ccancel()
				}
			},
		})
		if !errors.Is(err, yep.ErrCancelled) {
			t.Fatalf("cancelled count: err = %v, want cancelled", err)
		}
		if n < 3 {
			t.Fatalf("only %d updates before the cancel", n)
		}
		// The server still answers, and the count stops: the updates that
		// were on their way when the cancel was sent reach the stray
		// handler, and then no more come. (How many slip through depends on
		// how fast the cancel travels; TestCountStopsAtTheCancel pins it on
		// a fake clock.) A count that never stopped would add one every
		// millisecond until the test's deadline.
		if out, err := callTool(ctx, c, "echo", map[string]string{"text": "still here"}, jsonrpc.CallOptions{}); err != nil || out.Output != "still here" {
			t.Fatalf("echo after cancel = %+v, %v", out, err)
		}
		deadline := time.Now().Add(testdeadline.Left(t))
		for last := st.count(); ; {
			time.Sleep(100 * time.Millisecond)
			n := st.count()
			if n == last {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d tool/update arrived after the cancel, and they keep coming", n-before)
			}
			last = n
		}
	})

	t.Run("hooks", func(t *testing.T) {
		fire := func(tool string, args any) yep.HookFireResult {
			t.Helper()
			a, _ := json.Marshal(args)
			payload, _ := json.Marshal(yep.HookPayload{ToolCallID: "t9", Args: a})
			var res yep.HookFireResult
			if err := c.Call(ctx, yep.MethodHookFire, yep.HookFireParams{Event: yep.HookPreToolUse, ToolName: tool, Matcher: "*", Payload: payload}, &res); err != nil {
				t.Fatalf("hook/fire: %v", err)
			}
			return res
		}
		if res := fire("bash", map[string]string{"cmd": "ls"}); res.Decision != yep.DecisionAllow {
			t.Errorf("harmless call: %+v, want allow", res)
		}
		res := fire("bash", map[string]string{"cmd": "cat Forbidden.txt"})
		if res.Decision != yep.DecisionBlock || !contains(res.Reason, "bash") || !contains(res.Reason, "forbidden") {
			t.Errorf("forbidden call: %+v, want block naming the tool", res)
		}
	})

	t.Run("command", func(t *testing.T) {
		for _, name := range []string{"greet", "echo:greet"} {
			var res yep.CommandExecuteResult
			if err := c.Call(ctx, yep.MethodCommandExecute, yep.CommandExecuteParams{Name: name, Arguments: " yolop "}, &res); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !res.Success || res.Message != "hello, yolop" {
				t.Errorf("%s: %+v", name, res)
			}
		}
	})

	t.Run("shutdown and exit", func(t *testing.T) {
		if err := c.Call(ctx, yep.MethodShutdown, yep.ShutdownParams{}, nil); err != nil {
			t.Fatalf("shutdown: %v", err)
		}
		_, err := callTool(ctx, c, "echo", map[string]string{"text": "late"}, jsonrpc.CallOptions{})
		if we := new(yep.Error); !errors.As(err, &we) || we.Code != yep.CodeInvalidRequest {
			t.Errorf("call after shutdown: %v, want an invalid-request error", err)
		}
		if err := c.Notify(ctx, yep.MethodExit, yep.ExitParams{}); err != nil {
			t.Fatalf("exit: %v", err)
		}
		if err := p.Wait(ctx); err != nil {
			t.Fatalf("process after exit: %v, want exit status 0\n%s", err, p.Stderr())
		}
		if code := p.Cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("exit code %d", code)
		}
		select {
		case <-c.Done():
		case <-ctx.Done():
			t.Fatal("connection still open after the server exited")
		}
	})
	// Besides the updates of the cancelled count, nothing reached the
	// client's handler.
	var unexpected []string
	for _, g := range st.snapshot() {
		method, params, _ := strings.Cut(g, " ")
		var u yep.ToolUpdateParams
		if method == yep.MethodToolUpdate && json.Unmarshal([]byte(params), &u) == nil && u.RequestID.String() == cancelledID.String() {
			continue
		}
		unexpected = append(unexpected, g)
	}
	if len(unexpected) > 0 {
		t.Errorf("the client received %d unexpected messages: %v", len(unexpected), unexpected)
	}
}

// TestEchoServerStdinEOF checks that closing stdin ends the server cleanly
// even with a call in flight, which fails at once with the closed error.
func TestEchoServerStdinEOF(t *testing.T) {
	leakcheck.Check(t)
	pkgDir, m := installPackage(t)
	p, _ := start(t, pkgDir, m)
	ctx, cancel := context.WithTimeout(context.Background(), testdeadline.Left(t))
	defer cancel()
	initialize(t, ctx, p.Conn)

	started := make(chan struct{})
	var once sync.Once
	errc := make(chan error, 1)
	go func() {
		_, err := callTool(ctx, p.Conn, "count", map[string]int{"n": 100000, "delay_ms": 1}, jsonrpc.CallOptions{
			OnNotify: func(string, json.RawMessage) { once.Do(func() { close(started) }) },
		})
		errc <- err
	}()
	<-started
	if err := p.CloseStdin(); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(ctx); err != nil {
		t.Fatalf("process after stdin EOF: %v, want exit status 0\n%s", err, p.Stderr())
	}
	err := <-errc
	if !errors.Is(err, jsonrpc.ErrClosed) && !errors.Is(err, yep.ErrCancelled) {
		t.Errorf("in-flight call after EOF: %v, want closed or cancelled", err)
	}
}

func mustDecode(t *testing.T, p yep.CapabilityParams, token string, v any) {
	t.Helper()
	ok, err := p.Decode(token, v)
	if !ok || err != nil {
		t.Fatalf("capability_params.%s: present=%v err=%v (params %v)", token, ok, err, p)
	}
}

func contains(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// TestCountStopsAtTheCancel runs the echo server in-process on a fake
// clock, where a cancel travels in no time: once the call that was
// cancelled has returned, not one more update of it arrives.
func TestCountStopsAtTheCancel(t *testing.T) {
	leakcheck.Check(t)
	synctest.Test(t, func(t *testing.T) {
		tr := &transporttest.Transport{Servers: map[string]transporttest.Server{
			"echo": func(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
				return echoext.New(hclog.NewNullLogger()).ServeConn(ctx, stdin, stdout)
			},
		}}
		inst, err := tr.Start(context.Background(), core.ServerSpec{Name: "echo"})
		if err != nil {
			t.Fatal(err)
		}
		st := &strays{}
		c := jsonrpc.NewConn(inst.Stdout(), inst.Stdin(), jsonrpc.Options{Handler: st, Closer: inst.Stdin()})
		ctx := context.Background()
		initialize(t, ctx, c)

		cctx, ccancel := context.WithCancel(ctx)
		defer ccancel()
		var n int
		start := time.Now()
		_, err = callTool(cctx, c, "count", map[string]int{"n": 100000, "delay_ms": 1}, jsonrpc.CallOptions{
			OnNotify: func(string, json.RawMessage) {
				if n++; n == 3 {
					ccancel()
				}
			},
		})
		if !errors.Is(err, yep.ErrCancelled) || n != 3 || time.Since(start) != 3*time.Millisecond {
			t.Fatalf("count = %v after %d updates and %s, want cancelled after 3 in 3ms", err, n, time.Since(start))
		}
		time.Sleep(time.Second) // a count still running would send a thousand updates
		if got := st.count(); got != 0 {
			t.Errorf("%d updates arrived after the cancelled call returned: %q", got, st.snapshot())
		}
		c.Close()
		if err := inst.Stop(time.Second); err != nil {
			t.Errorf("Stop = %v", err)
		}
		c.Wait()
	})
}
