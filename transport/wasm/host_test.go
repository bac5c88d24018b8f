package wasm_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"yolop.dev/core"
	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/transport/wasm"
)

// recorder is a core.Transport that remembers every instance it started.
type recorder struct {
	core.Transport
	mu        sync.Mutex
	instances []core.Instance
}

func (r *recorder) Start(ctx context.Context, spec core.ServerSpec) (core.Instance, error) {
	inst, err := r.Transport.Start(ctx, spec)
	if err == nil {
		r.mu.Lock()
		r.instances = append(r.instances, inst)
		r.mu.Unlock()
	}
	return inst, err
}

func (r *recorder) started() []core.Instance {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]core.Instance(nil), r.instances...)
}

// packageWith copies a module into a fresh package directory, where a
// grant names it relative to the package.
func packageWith(t *testing.T, module, as string) string {
	t.Helper()
	b, err := os.ReadFile(module)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, as), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// newSession starts a session over grants with the wasm transport. The
// handshake and stop budgets are the hang guard: a loaded machine may take
// seconds to load a guest, and the tests time nothing.
func newSession(t *testing.T, rec *recorder, grants ...host.Grant) *host.Session {
	t.Helper()
	s := host.NewSession(host.SessionOptions{
		Grants:    grants,
		Transport: rec,
		Extension: host.ExtensionOptions{
			HandshakeTimeout: hangGuard,
			HookTimeout:      hangGuard,
			PromptTimeout:    hangGuard,
			StopGrace:        hangGuard,
			MinBackoff:       time.Millisecond,
		},
	})
	t.Cleanup(s.Close)
	if err := s.Start(context.Background()); err != nil {
		t.Fatalf("session start: %v", err)
	}
	return s
}

// TestEchoThroughSession runs the SDK's echo example as a wasm guest
// behind core/host: the handshake and the clamp, a tool call, a streamed
// count, the pre_tool_use hook, the prompt, a slash command, a cancelled
// count, and a protocol shutdown that ends the guest cleanly.
func TestEchoThroughSession(t *testing.T) {
	rec := &recorder{Transport: newTransport(t, wasm.Options{})}
	s := newSession(t, rec, host.Grant{
		Name:            "echo",
		ProtocolVersion: "1.0",
		Server:          core.ServerSpec{Command: "echo.wasm", PackageDir: packageWith(t, echoWasm, "echo.wasm")},
		Tools:           []host.ToolGrant{{Name: "echo", NeverDefer: true}, {Name: "count", NeverDefer: true, Streaming: true}},
		Hooks:           []host.HookGrant{{Event: "pre_tool_use", Matcher: "*", TimeoutMS: 500}},
		Prompt:          &host.PromptGrant{Text: "The echo extension is installed: call the echo tool to repeat text and count to watch streamed progress."},
		Commands:        []host.CommandGrant{{Name: "greet"}},
	})
	ctx := context.Background()
	s.BeginTurn(ctx)
	if p := s.SystemPrompt(ctx, "base"); !strings.Contains(p, "The echo extension is installed") {
		t.Errorf("prompt = %q", p)
	}
	res, err := s.CallTool(ctx, "echo", "c1", json.RawMessage(`{"text":"through the host"}`), nil)
	if err != nil || res.Output != "through the host" {
		t.Fatalf("echo = %+v, %v", res, err)
	}
	var updates []string
	res, err = s.CallTool(ctx, "count", "c2", json.RawMessage(`{"n":3,"delay_ms":1}`), func(u yep.ToolUpdateParams) {
		updates = append(updates, u.Output)
	})
	if err != nil || res.Output != "counted to 3" || strings.Join(updates, ",") != "1,2,3" {
		t.Fatalf("count = %+v, %v, updates %v", res, err, updates)
	}
	var blocked *host.HookBlockedError
	if _, err := s.CallTool(ctx, "echo", "c3", json.RawMessage(`{"text":"forbidden"}`), nil); !errors.As(err, &blocked) {
		t.Errorf("the hook did not block: %v", err)
	}
	if cr, err := s.ExecuteCommand(ctx, "echo:greet", "wasm"); err != nil || cr.Message != "hello, wasm" {
		t.Errorf("greet = %+v, %v", cr, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	_, err = s.CallTool(cctx, "count", "c4", json.RawMessage(`{"n":100000,"delay_ms":1}`), func(yep.ToolUpdateParams) { cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled count = %v", err)
	}
	if res, err := s.CallTool(ctx, "echo", "c5", json.RawMessage(`{"text":"after cancel"}`), nil); err != nil || res.Output != "after cancel" {
		t.Errorf("echo after cancel = %+v, %v", res, err)
	}
	s.EndTurn()

	s.Close()
	insts := rec.started()
	if len(insts) != 1 {
		t.Fatalf("%d instances started, want 1", len(insts))
	}
	waitDone(t, insts[0], "session close")
	if err := insts[0].Err(); err != nil {
		t.Errorf("after shutdown and exit the guest ended with %v, want a clean exit", err)
	}
}

// TestExitThroughSession checks a guest that calls exit(3) in the middle
// of a tool call: the pending call fails naming the extension and the
// status, and the next call starts a fresh instance.
func TestExitThroughSession(t *testing.T) {
	rec := &recorder{Transport: newTransport(t, wasm.Options{})}
	s := newSession(t, rec, host.Grant{
		Name:            "hostile",
		ProtocolVersion: "1.0",
		Server:          core.ServerSpec{Command: "guest.wasm", PackageDir: packageWith(t, guestWasm, "guest.wasm")},
		Tools:           []host.ToolGrant{{Name: "exit"}, {Name: "echo"}},
	})
	ctx := context.Background()
	_, err := s.CallTool(ctx, "exit", "c1", json.RawMessage(`{"code":3}`), nil)
	if err == nil {
		t.Fatal("a call whose server exits succeeded")
	}
	t.Logf("the failed call: %v", err)
	for _, want := range []string{`extension "hostile"`, "exit status 3", "exiting with status 3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	var ee *core.ExitError
	if !errors.As(err, &ee) || ee.Code != 3 {
		t.Errorf("error %v does not carry the ExitError with Code 3", err)
	}
	res, err := s.CallTool(ctx, "echo", "c2", json.RawMessage(`{"text":"respawned"}`), nil)
	if err != nil || res.Output != "respawned" {
		t.Fatalf("the call after the exit = %+v, %v", res, err)
	}
	insts := rec.started()
	if len(insts) != 2 {
		t.Fatalf("%d instances started, want a second one after the exit", len(insts))
	}
	if !errors.As(insts[0].Err(), &ee) || ee.Code != 3 {
		t.Errorf("the first instance ended with %v, want exit status 3", insts[0].Err())
	}
}

// A guest stuck in a loop cannot read the cancel of its call; the host
// probes it after the cancel and, getting no answer within the grace,
// restarts it, so the next call is answered instead of hanging behind the
// loop.
func TestCancelledLoopingGuestIsRestarted(t *testing.T) {
	rec := &recorder{Transport: newTransport(t, wasm.Options{})}
	s := host.NewSession(host.SessionOptions{
		Grants: []host.Grant{{
			Name: "spinner", ProtocolVersion: "1.0",
			Server: core.ServerSpec{Command: "guest.wasm", PackageDir: packageWith(t, guestWasm, "guest.wasm")},
			Tools:  []host.ToolGrant{{Name: "spin", NeverDefer: true, Streaming: true}, {Name: "echo", NeverDefer: true}},
		}},
		Transport: rec,
		Extension: host.ExtensionOptions{HandshakeTimeout: hangGuard, StopGrace: hangGuard, MinBackoff: time.Millisecond, CancelGrace: 500 * time.Millisecond},
	})
	t.Cleanup(s.Close)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := s.CallTool(ctx, "spin", "c1", nil, func(u yep.ToolUpdateParams) {
		if u.Output == "spinning" {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled spin = %v", err)
	}
	res, err := s.CallTool(context.Background(), "echo", "c2", json.RawMessage(`{"text":"after the loop"}`), nil)
	if err != nil || res.Output != "after the loop" {
		t.Fatalf("call after a cancelled loop = %+v, %v; want it answered by a restarted guest", res, err)
	}
	insts := rec.started()
	if len(insts) != 2 {
		t.Fatalf("%d instances started, want the stuck one and its replacement", len(insts))
	}
	<-insts[0].Done()
	var ee *core.ExitError
	if !errors.As(insts[0].Err(), &ee) || ee.Signal != wasm.SignalKill {
		t.Errorf("the stuck guest ended with %v, want it killed", insts[0].Err())
	}
}
