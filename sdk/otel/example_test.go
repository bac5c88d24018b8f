package sdkotel_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"yolop.dev/core/sdk"
	sdkotel "yolop.dev/sdk/otel"
)

// Start makes a handler's first span a child of the host's tool span. A
// real extension uses its own TracerProvider with an OTLP exporter; the
// context here stands in for the one the SDK hands a tool handler.
func ExampleStart() {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tracer := tp.Tracer("my-extension")

	ctx := sdk.WithTraceContext(context.Background(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "")
	_, span := sdkotel.Start(ctx, tracer, "index files")
	span.End()

	got := rec.Ended()[0]
	fmt.Println(got.Name(), "trace", got.SpanContext().TraceID(), "parent", got.Parent().SpanID())
	// Output: index files trace 4bf92f3577b34da6a3ce929d0e0e4736 parent 00f067aa0ba902b7
}
