package logfire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// ExportOptions tune the export pipeline. The zero value is what the
// extension runs with.
type ExportOptions struct {
	// QueueSize bounds the spans waiting for export; beyond it spans are
	// dropped and counted. Zero means 2048.
	QueueSize int
	// BatchSize is the most spans in one export. Zero means 512.
	BatchSize int
	// BatchInterval is how long a partial batch waits. Zero means 1s.
	BatchInterval time.Duration
	// ExportTimeout bounds one export, retries included. Zero means 30s.
	ExportTimeout time.Duration
	// RetryInitial and RetryMax are the first and the longest backoff
	// between retries of a failed export. Zero means 1s and 10s.
	RetryInitial, RetryMax time.Duration
	// FlushTimeout bounds the final flush at shutdown. It must be shorter
	// than the host's stop grace (2s) so the flush ends before the host
	// gives up on the server. Zero means 1.5s.
	FlushTimeout time.Duration
}

func (o ExportOptions) withDefaults() ExportOptions {
	if o.ExportTimeout <= 0 {
		o.ExportTimeout = 30 * time.Second
	}
	if o.RetryInitial <= 0 {
		o.RetryInitial = time.Second
	}
	if o.RetryMax <= 0 {
		o.RetryMax = 10 * time.Second
	}
	if o.FlushTimeout <= 0 {
		o.FlushTimeout = 1500 * time.Millisecond
	}
	return o
}

// pipeline is one configured exporter: the OTel SDK's TracerProvider over
// otlptracehttp, behind a bounded queue.
type pipeline struct {
	provider *sdktrace.TracerProvider
	queue    *queue
	exporter *otlptrace.Exporter
	health   *health
	url      string
}

// newPipeline builds the exporter for st. report is called with the status
// text when export starts failing or recovers; warn logs.
func newPipeline(st settings, version string, o ExportOptions, report func(string), warn func(msg string, kv ...any)) (*pipeline, error) {
	o = o.withDefaults()
	rec := &statusRecorder{base: http.DefaultTransport}
	opts := []otlptracehttp.Option{
		otlptracehttp.WithEndpointURL(st.tracesURL),
		otlptracehttp.WithHTTPClient(&http.Client{Transport: rec}),
		otlptracehttp.WithTimeout(o.ExportTimeout),
		otlptracehttp.WithCompression(otlptracehttp.GzipCompression),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{
			Enabled: true, InitialInterval: o.RetryInitial, MaxInterval: o.RetryMax, MaxElapsedTime: o.ExportTimeout,
		}),
	}
	// Always set: the headers replace any the SDK would read from the
	// process environment itself, so resolve is their one source.
	opts = append(opts, otlptracehttp.WithHeaders(st.headers))
	exp, err := otlptracehttp.New(context.Background(), opts...)
	if err != nil {
		return nil, fmt.Errorf("logfire: building the OTLP exporter for %s: %w", st.tracesURL, err)
	}
	h := &health{report: report, warn: warn, secrets: st.secrets(), url: st.tracesURL}
	p := &pipeline{exporter: exp, health: h, url: st.tracesURL}
	p.queue = newQueue(queueOptions{Size: o.QueueSize, BatchSize: o.BatchSize, Interval: o.BatchInterval},
		func(ctx context.Context, batch []sdktrace.ReadOnlySpan) error {
			rec.reset()
			err := exp.ExportSpans(ctx, batch)
			h.observe(err, rec.last(), len(batch))
			return err
		},
		h.dropped)
	res := resource.NewSchemaless(
		attribute.String("service.name", st.serviceName),
		attribute.String("service.version", version),
		attribute.String("telemetry.sdk.language", "go"),
		attribute.String("telemetry.sdk.name", "opentelemetry"),
	)
	p.provider = sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithIDGenerator(eventIDs{}),
		sdktrace.WithSpanProcessor(p.queue),
	)
	return p, nil
}

// shutdown flushes what is queued and closes the exporter, within
// timeout.
func (p *pipeline) shutdown(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := p.provider.Shutdown(ctx)
	return errors.Join(err, p.exporter.Shutdown(ctx))
}

// statusRecorder remembers the HTTP status of the last response, so a
// failed export can be reported by its code rather than by error text.
type statusRecorder struct {
	base http.RoundTripper
	code atomic.Int32
}

func (r *statusRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	if err == nil {
		r.code.Store(int32(resp.StatusCode))
	}
	return resp, err
}

func (r *statusRecorder) reset()    { r.code.Store(0) }
func (r *statusRecorder) last() int { return int(r.code.Load()) }

// health turns export outcomes into the extension's status: set when
// exports start failing (or fail differently), cleared on the first
// export that succeeds.
type health struct {
	report  func(string)
	warn    func(msg string, kv ...any)
	secrets []string // kept out of every message: the token, header values
	url     string

	mu      sync.Mutex
	known   bool   // a status was reported at least once
	failing string // the reason being shown; "" when healthy
}

// StatusPrefix starts every status text the extension shows.
const StatusPrefix = "logfire: export failing"

func (h *health) observe(err error, code, spans int) {
	reason := ""
	if err != nil {
		reason = failureReason(err, code)
	}
	h.mu.Lock()
	changed := !h.known || reason != h.failing
	if reason == "" && !h.known {
		// Healthy from the start: clear whatever an earlier run of the
		// server left shown.
		changed = true
	}
	h.known, h.failing = true, reason
	h.mu.Unlock()
	if err != nil {
		h.warn("OTLP export failed", "url", h.url, "spans", spans, "reason", reason, "error", h.redact(err.Error()))
	}
	if !changed {
		return
	}
	if reason == "" {
		h.report("")
		return
	}
	h.report(fmt.Sprintf("%s (%s)", StatusPrefix, reason))
}

func (h *health) dropped(total int64) {
	if total == 1 || total%1000 == 0 {
		h.warn("span queue full: dropping spans (the endpoint is slower than the session)", "dropped", total)
	}
}

// redact keeps the token and the header values out of text the extension
// writes, whatever an endpoint echoes back in a response body.
func (h *health) redact(s string) string {
	for _, v := range h.secrets {
		s = strings.ReplaceAll(s, v, "[redacted]")
	}
	return s
}

// failureReason names why an export failed, for a person: the HTTP status
// ("401 unauthorized"), or the endpoint being unreachable or timing out.
func failureReason(err error, code int) string {
	if code >= 300 {
		return fmt.Sprintf("%d %s", code, strings.ToLower(http.StatusText(code)))
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return "endpoint timed out"
	case errors.Is(err, context.Canceled):
		return "export cancelled"
	}
	return "endpoint unreachable"
}
