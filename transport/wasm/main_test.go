package wasm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.uber.org/goleak"

	"yolop.dev/core"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/yep"
	"yolop.dev/transport/wasm"
)

// helperEnv selects what a re-executed test binary does (see helper).
const helperEnv = "YOLOP_WASM_HELPER"

// Guests built once per test binary, in TestMain.
var (
	buildDir string // holds the guests and the shared compile cache
	// echoWasm is the SDK's echo example, core/examples/echo.
	echoWasm string
	// guestWasm is internal/testguest, the sandbox prober.
	guestWasm string
	// loopWasm is core's ndjsonloop, the benchmark's floor, built for
	// wasip1: the smallest guest, for tests that compile many times.
	loopWasm string
	// sharedCache is the compile cache most tests share, so that each
	// guest is compiled once per test binary rather than once per test.
	sharedCache string
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helper(mode))
	}
	dir, err := os.MkdirTemp("", "yolop-wasm-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	sharedCache = filepath.Join(dir, "cache")
	echoWasm = filepath.Join(dir, "echo.wasm")
	guestWasm = filepath.Join(dir, "testguest.wasm")
	loopWasm = filepath.Join(dir, "ndjsonloop.wasm")
	for _, b := range []struct{ pkg, out string }{
		{"yolop.dev/core/examples/echo", echoWasm},
		{"yolop.dev/transport/wasm/internal/testguest", guestWasm},
		{"yolop.dev/core/internal/testservers/ndjsonloop", loopWasm},
	} {
		if err := buildGuest(b.pkg, b.out); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(dir)
		os.Exit(code)
	}))
}

// goTool is the go command running the tests.
func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// buildGuest compiles the main package pkg for wasip1 into out.
func buildGuest(pkg, out string) error {
	cmd := exec.Command(goTool(), "build", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("GOOS=wasip1 GOARCH=wasm go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// hangGuard bounds waits only so that a broken test fails instead of
// hanging; it is no performance threshold, and generous because compiling
// a guest can take many seconds on a loaded machine.
const hangGuard = 3 * time.Minute

// within runs f and fails the test if it has not returned within
// hangGuard (a hang guard, not a timing assertion).
func within(t testing.TB, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(hangGuard):
		t.Fatalf("%s did not return within %s", what, hangGuard)
	}
}

// waitDone waits for an instance to end, for up to hangGuard.
func waitDone(t testing.TB, inst core.Instance, what string) {
	t.Helper()
	select {
	case <-inst.Done():
	case <-time.After(hangGuard):
		t.Fatalf("%s: the instance did not end within %s", what, hangGuard)
	}
}

// logBuffer is a goroutine-safe log sink.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func captureLogger() (hclog.Logger, *logBuffer) {
	buf := &logBuffer{}
	return hclog.New(&hclog.LoggerOptions{Name: "host", Output: buf, Level: hclog.Trace}), buf
}

// newTransport returns a Transport closed when the test ends. An empty
// CacheDir means the shared cache; "-" means none.
func newTransport(t testing.TB, opts wasm.Options) *wasm.Transport {
	t.Helper()
	switch opts.CacheDir {
	case "":
		opts.CacheDir = sharedCache
	case "-":
		opts.CacheDir = ""
	}
	tr := wasm.New(opts)
	t.Cleanup(func() { tr.Close() })
	return tr
}

// start starts the module at path and kills the instance when the test
// ends.
func start(t testing.TB, tr *wasm.Transport, name, path string, env map[string]string) core.Instance {
	t.Helper()
	inst, err := tr.Start(context.Background(), core.ServerSpec{Name: name, Command: path, Env: env})
	if err != nil {
		t.Fatalf("Start %s: %v", filepath.Base(path), err)
	}
	t.Cleanup(func() { inst.Kill() })
	return inst
}

// A client is a jsonrpc connection to one instance, handshaken.
type client struct {
	t    testing.TB
	inst core.Instance
	conn *jsonrpc.Conn
}

// connect opens a connection to inst and runs the initialize handshake.
func connect(t testing.TB, inst core.Instance, log hclog.Logger) *client {
	t.Helper()
	conn := jsonrpc.NewConn(inst.Stdout(), inst.Stdin(), jsonrpc.Options{Closer: inst.Stdin(), Logger: log})
	t.Cleanup(func() {
		conn.Close()
		inst.Kill()
		conn.Wait()
	})
	c := &client{t: t, inst: inst, conn: conn}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var res yep.InitializeResult
	err := conn.Call(ctx, yep.MethodInitialize, yep.InitializeParams{
		ProtocolVersion: yep.ProtocolVersion,
		Capabilities:    yep.Capabilities{yep.CapCancel, yep.CapStreaming},
	}, &res)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if err := conn.Notify(ctx, yep.MethodInitialized, yep.InitializedParams{}); err != nil {
		t.Fatalf("initialized: %v", err)
	}
	return c
}

// call calls a tool and returns its output.
func (c *client) call(tool string, args any) (string, error) {
	return c.callCtx(context.Background(), tool, args, nil)
}

func (c *client) callCtx(ctx context.Context, tool string, args any, onUpdate func(string)) (string, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	var res yep.ToolResult
	err = c.conn.CallWith(ctx, yep.MethodToolCall, yep.ToolCallParams{ToolCallID: "t", Name: tool, Args: raw}, &res, jsonrpc.CallOptions{
		OnNotify: func(method string, params json.RawMessage) {
			var u yep.ToolUpdateParams
			if onUpdate != nil && method == yep.MethodToolUpdate && json.Unmarshal(params, &u) == nil {
				onUpdate(u.Output)
			}
		},
	})
	if err == nil && res.IsError {
		return res.Output, fmt.Errorf("tool error: %s", res.Output)
	}
	return res.Output, err
}

// mustCall calls a tool and fails the test on an error.
func (c *client) mustCall(tool string, args any) string {
	c.t.Helper()
	out, err := c.call(tool, args)
	if err != nil {
		c.t.Fatalf("%s: %v", tool, err)
	}
	return out
}

// shutdown sends shutdown and exit, then stops the instance.
func (c *client) shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	if err := c.conn.Call(ctx, yep.MethodShutdown, yep.ShutdownParams{}, nil); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	_ = c.conn.Notify(ctx, yep.MethodExit, yep.ExitParams{})
	return c.inst.Stop(hangGuard)
}
