package sdkotel_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
	sdkotel "yolop.dev/sdk/otel"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	hostTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	hostSpan  = "00f067aa0ba902b7"
	hostTP    = "00-" + hostTrace + "-" + hostSpan + "-01"
)

// serve runs s over in-memory pipes and returns the host's connection.
func serve(t *testing.T, s *sdk.Server) *jsonrpc.Conn {
	t.Helper()
	serverIn, hostOut := io.Pipe()
	hostIn, serverOut := io.Pipe()
	conn := jsonrpc.NewConn(hostIn, hostOut, jsonrpc.Options{Closer: closers{hostOut, hostIn}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.ServeConn(ctx, serverIn, serverOut)
		serverOut.Close()
	}()
	t.Cleanup(func() {
		cancel()
		conn.Close()
		conn.Wait()
		<-done
	})
	var res yep.InitializeResult
	if err := conn.Call(ctxT(t), yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: "1.0"}, &res); err != nil {
		t.Fatal(err)
	}
	return conn
}

type closers []io.Closer

func (c closers) Close() error {
	for _, x := range c {
		x.Close()
	}
	return nil
}

func ctxT(t *testing.T) context.Context {
	d, ok := t.Deadline()
	if !ok {
		d = time.Now().Add(time.Minute)
	}
	ctx, cancel := context.WithDeadline(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestToolSpanIsAChildOfTheHostSpan runs a real SDK server whose tool is
// wrapped by Tool and starts a span of its own inside, and checks both
// spans land in the host's trace: the server span under the host's tool
// span (a remote parent), the inner span under the server span.
func TestToolSpanIsAChildOfTheHostSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	tracer := tp.Tracer("test")

	s := sdk.NewServer(sdk.Info{Name: "traced"}, sdk.Options{Logger: hclog.NewNullLogger()})
	s.Tool("echo", sdkotel.Tool(tracer, func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
		_, span := tracer.Start(ctx, "render")
		span.End()
		return yep.ToolResult{Output: "ok"}, nil
	}))
	s.Tool("fail", sdkotel.Tool(tracer, func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
		return yep.ToolResult{}, errors.New("no such file")
	}))
	s.OnHook(yep.HookPreToolUse, "*", sdkotel.Hook(tracer, func(ctx context.Context, h *sdk.HookEvent) (yep.HookFireResult, error) {
		return yep.HookFireResult{Decision: yep.DecisionBlock, Reason: "not today"}, nil
	}))
	conn := serve(t, s)

	var res yep.ToolResult
	if err := conn.Call(ctxT(t), yep.MethodToolCall, yep.ToolCallParams{ToolCallID: "c1", Name: "echo", TraceParent: hostTP}, &res); err != nil {
		t.Fatal(err)
	}
	conn.Call(ctxT(t), yep.MethodToolCall, yep.ToolCallParams{Name: "fail", TraceParent: hostTP}, &res)
	var hr yep.HookFireResult
	if err := conn.Call(ctxT(t), yep.MethodHookFire, yep.HookFireParams{Event: yep.HookPreToolUse, ToolName: "echo", TraceParent: hostTP}, &hr); err != nil {
		t.Fatal(err)
	}

	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, sp := range rec.Ended() {
		byName[sp.Name()] = sp
	}
	server, inner := byName["tool/call echo"], byName["render"]
	if server == nil || inner == nil {
		t.Fatalf("spans: %v", names(rec.Ended()))
	}
	if got := server.SpanContext().TraceID().String(); got != hostTrace {
		t.Errorf("server span trace %s, want the host's %s", got, hostTrace)
	}
	if p := server.Parent(); p.SpanID().String() != hostSpan || !p.IsRemote() {
		t.Errorf("server span parent %s (remote %v), want the host's tool span %s", p.SpanID(), p.IsRemote(), hostSpan)
	}
	if server.SpanKind() != trace.SpanKindServer {
		t.Errorf("server span kind %v", server.SpanKind())
	}
	if inner.Parent().SpanID() != server.SpanContext().SpanID() || inner.SpanContext().TraceID().String() != hostTrace {
		t.Errorf("inner span parent %s, want the server span %s", inner.Parent().SpanID(), server.SpanContext().SpanID())
	}
	attrs := map[string]string{}
	for _, kv := range server.Attributes() {
		attrs[string(kv.Key)] = kv.Value.Emit()
	}
	if attrs["gen_ai.tool.name"] != "echo" || attrs["gen_ai.tool.call.id"] != "c1" || attrs["rpc.method"] != "tool/call" {
		t.Errorf("server span attributes %v", attrs)
	}
	if f := byName["tool/call fail"]; f == nil || f.Status().Code != codes.Error || f.Status().Description != "no such file" {
		t.Errorf("failing tool span: %+v", f)
	}
	h := byName["hook/fire pre_tool_use"]
	if h == nil || h.Parent().SpanID().String() != hostSpan || h.Status().Code == codes.Error {
		t.Fatalf("hook span: %+v", h)
	}
}

func TestExtractIgnoresWhatIsMissingOrMalformed(t *testing.T) {
	for _, tp := range []string{"", "garbage", "00-" + hostTrace + "-0000000000000000-01", "00-00000000000000000000000000000000-" + hostSpan + "-01"} {
		ctx := sdk.WithTraceContext(context.Background(), tp, "")
		if sc := sdkotel.HostSpan(ctx); sc.IsValid() {
			t.Errorf("traceparent %q gave a valid parent %v", tp, sc)
		}
	}
	ctx := sdk.WithTraceContext(context.Background(), hostTP, "vendor=x")
	sc := sdkotel.HostSpan(ctx)
	if !sc.IsValid() || !sc.IsSampled() || sc.TraceState().Get("vendor") != "x" {
		t.Errorf("HostSpan = %+v", sc)
	}
}

func names(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name())
	}
	return out
}
