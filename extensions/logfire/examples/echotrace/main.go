// Command yolop-extension-echotrace is the echo tool with OpenTelemetry
// tracing, the example of an extension whose own spans join the agent's
// trace (see yolop.dev/sdk/otel).
//
// Each tool/call is a server span ("tool/call echo") whose parent is the
// host's span of the call, taken from the traceparent the host sends, with
// one child span ("echo.render") for the work. The server exports its
// spans itself, with the OTel SDK's batcher over otlptracehttp, to the
// endpoint in OTEL_EXPORTER_OTLP_ENDPOINT (the manifest passes the one
// yolop runs with, http://127.0.0.1:4318 when unset); when the session also runs the logfire extension against
// the same endpoint, the host's spans and these land in one trace.
//
// Build it into the package's bin/:
//
//	go build -o extensions/logfire/examples/echotrace/bin/yolop-extension-echotrace ./extensions/logfire/examples/echotrace
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
	sdkotel "yolop.dev/sdk/otel"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "yolop-extension-echotrace:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, stderr io.Writer) error {
	log := hclog.New(&hclog.LoggerOptions{Name: "echotrace", Output: stderr, Level: hclog.LevelFromString(os.Getenv("ECHOTRACE_LOG"))})
	// otlptracehttp reads OTEL_EXPORTER_OTLP_ENDPOINT (and the other
	// standard OTEL_EXPORTER_OTLP_* variables) itself.
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return fmt.Errorf("building the OTLP exporter: %w", err)
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(200*time.Millisecond)),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "yolop-extension-echotrace"))),
	)
	defer func() {
		// Flush within the host's stop grace.
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		defer cancel()
		if err := tp.Shutdown(ctx); err != nil {
			log.Warn("flushing spans at exit", "error", err)
		}
	}()
	tracer := tp.Tracer("yolop.dev/extensions/logfire/examples/echotrace")

	s := sdk.NewServer(sdk.Info{Name: "echotrace", Version: "0.1.0"}, sdk.Options{Logger: log})
	s.Tool("echo", sdkotel.Tool(tracer, func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
		var args struct {
			Text string `json:"text"`
		}
		if err := call.Bind(&args); err != nil {
			return yep.ToolResult{}, err
		}
		_, span := sdkotel.Start(ctx, tracer, "echo.render")
		span.SetAttributes(attribute.Int("echo.text.length", len(args.Text)))
		out := args.Text
		span.End()
		return yep.ToolResult{Output: out}, nil
	}))
	if err := s.Serve(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
