// Package sdkotel lets an extension built on yolop.dev/core/sdk trace its
// handlers with OpenTelemetry, as children of the host's spans.
//
// The host sends the W3C Trace Context of its span for each tool call and
// hook firing; the SDK keeps the raw strings in the handler's context
// ([sdk.TraceParent]). [Extract] turns them into an OpenTelemetry remote
// parent, [Start] starts a span under it, and [Tool] and [Hook] wrap a
// whole handler in a server span. A span an extension starts this way is a
// child of the host's tool span, in the turn's trace: when the session
// runs the logfire extension, the host's span and the extension's land in
// one trace.
//
// This package depends on the OpenTelemetry API only. The extension brings
// its own TracerProvider and exporter (for instance go.opentelemetry.io/otel/sdk
// with otlptracehttp, configured from the standard OTEL_EXPORTER_OTLP_*
// variables), and core stays free of any tracing dependency.
package sdkotel

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
)

var w3c propagation.TraceContext

// Extract returns a copy of ctx whose remote parent span is the host's
// span for the request ctx belongs to, as sent in its traceparent and
// tracestate. When the host sent none, or sent a malformed one, ctx is
// returned as it is (W3C: an invalid traceparent is ignored).
func Extract(ctx context.Context) context.Context {
	tp := sdk.TraceParent(ctx)
	if tp == "" {
		return ctx
	}
	return w3c.Extract(ctx, propagation.MapCarrier{"traceparent": tp, "tracestate": sdk.TraceState(ctx)})
}

// HostSpan returns the span context of the host's span that ctx's request
// belongs to; it is invalid when the host sent none.
func HostSpan(ctx context.Context) trace.SpanContext {
	return trace.SpanContextFromContext(Extract(context.WithoutCancel(ctx)))
}

// Start starts a span named name with tracer. Its parent is the span
// already in ctx when there is one (a span started in the same handler),
// and otherwise the host's span for the request ctx belongs to, so the
// first span of a handler joins the session's trace.
func Start(ctx context.Context, tracer trace.Tracer, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = Extract(ctx)
	}
	return tracer.Start(ctx, name, opts...)
}

// Tool wraps a tool handler in a server span named "tool/call <tool>", a
// child of the host's span for the call, with the JSON-RPC and GenAI tool
// attributes. A returned error, a protocol error and a result with IsError
// set the span's status to Error. The handler's context carries the span,
// so spans it starts are its children.
func Tool(tracer trace.Tracer, h sdk.ToolHandler) sdk.ToolHandler {
	return func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
		ctx, span := Start(ctx, tracer, "tool/call "+call.Name, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(
				attribute.String("rpc.system", "jsonrpc"),
				attribute.String("rpc.method", yep.MethodToolCall),
				attribute.String("rpc.jsonrpc.version", "2.0"),
				attribute.String("rpc.jsonrpc.request_id", call.RequestID.String()),
				attribute.String("gen_ai.operation.name", "execute_tool"),
				attribute.String("gen_ai.tool.name", call.Name),
				attribute.String("gen_ai.tool.call.id", call.ID),
			))
		defer span.End()
		res, err := h(ctx, call)
		switch {
		case err != nil:
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		case res.IsError:
			span.SetStatus(codes.Error, "the tool returned an error result")
		}
		return res, err
	}
}

// Hook wraps a hook handler in a server span named "hook/fire <event>", a
// child of the host's span for the tool call it belongs to, with the
// decision as an attribute (a block is a decision, not an error: only a
// returned error sets the status to Error).
func Hook(tracer trace.Tracer, h sdk.HookHandler) sdk.HookHandler {
	return func(ctx context.Context, ev *sdk.HookEvent) (yep.HookFireResult, error) {
		ctx, span := Start(ctx, tracer, "hook/fire "+ev.Event, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(
				attribute.String("rpc.system", "jsonrpc"),
				attribute.String("rpc.method", yep.MethodHookFire),
				attribute.String("yolop.hook.event", ev.Event),
				attribute.String("yolop.hook.matcher", ev.Matcher),
				attribute.String("gen_ai.tool.name", ev.ToolName),
				attribute.String("gen_ai.tool.call.id", ev.ToolCallID),
			))
		defer span.End()
		res, err := h(ctx, ev)
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
			return res, err
		}
		decision := res.Decision
		if decision == "" {
			decision = yep.DecisionAllow
		}
		span.SetAttributes(attribute.String("yolop.hook.decision", decision))
		if res.Reason != "" {
			span.SetAttributes(attribute.String("yolop.hook.reason", res.Reason))
		}
		return res, nil
	}
}
