package sdk

import "context"

// The host sends the W3C Trace Context of its span for each tool/call and
// hook/fire (the traceparent and tracestate params). The SDK carries the
// raw strings in the handler's context, so core needs no tracing library:
// an author who traces extracts them with the propagator of their choice
// (yolop.dev/sdk/otel does it for OpenTelemetry).

type traceCtxKey struct{}

type traceCtx struct{ parent, state string }

// WithTraceContext returns a copy of ctx that carries a W3C traceparent and
// tracestate, as the SDK does for the context of a [ToolHandler] or
// [HookHandler] when the host sent them. Empty strings leave ctx as it is.
// It is for tests and for code that calls handlers in-process.
func WithTraceContext(ctx context.Context, traceparent, tracestate string) context.Context {
	if traceparent == "" && tracestate == "" {
		return ctx
	}
	return context.WithValue(ctx, traceCtxKey{}, traceCtx{traceparent, tracestate})
}

// TraceParent returns the W3C traceparent the host sent with the request
// whose handler ctx belongs to ("00-<trace id>-<parent span id>-<flags>"),
// or "" when it sent none. The parent span is the host's span for the tool
// call: a span an extension starts under it joins the session's trace.
// The string is passed on as received; validate it before use.
func TraceParent(ctx context.Context) string {
	tc, _ := ctx.Value(traceCtxKey{}).(traceCtx)
	return tc.parent
}

// TraceState returns the W3C tracestate that came with [TraceParent], or
// "".
func TraceState(ctx context.Context) string {
	tc, _ := ctx.Value(traceCtxKey{}).(traceCtx)
	return tc.state
}
