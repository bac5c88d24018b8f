package logfire

import (
	"context"
	"errors"
	"maps"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"yolop.dev/extensions/logfire/otlptest"
)

// span ends one span named name through tp's provider.
func (tp *testPipeline) span(name string) {
	_, s := tp.provider.Tracer("test").Start(context.Background(), name)
	s.End()
}

// TestRetryOnRetryableAnswers retries an export the endpoint answered with
// 429 or 503 until it is accepted, and does not retry a 400.
func TestRetryOnRetryableAnswers(t *testing.T) {
	for _, code := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusBadGateway} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			r := otlptest.New()
			defer r.Close()
			r.Answer(func(n int) int {
				if n < 2 {
					return code
				}
				return http.StatusOK
			})
			tp := newTestPipeline(t, r, "", ExportOptions{RetryInitial: 5 * time.Millisecond, RetryMax: 20 * time.Millisecond})
			tp.span("a")
			if err := tp.queue.ForceFlush(context.Background()); err != nil {
				t.Fatal(err)
			}
			reqs := r.Requests()
			if len(reqs) != 3 || reqs[0].Status != code || reqs[1].Status != code || reqs[2].Status != http.StatusOK {
				t.Errorf("requests %+v; want two %d then 200", reqs, code)
			}
			if got := len(r.Spans()); got != 1 || tp.queue.Exported() != 1 || tp.queue.Failed() != 0 {
				t.Errorf("received %d spans, exported %d, failed %d; want 1, 1, 0", got, tp.queue.Exported(), tp.queue.Failed())
			}
			if err := tp.shutdown(wait); err != nil {
				t.Fatal(err)
			}
		})
	}

	t.Run("Bad Request", func(t *testing.T) {
		r := otlptest.New()
		defer r.Close()
		r.Answer(func(int) int { return http.StatusBadRequest })
		tp := newTestPipeline(t, r, "", ExportOptions{RetryInitial: 5 * time.Millisecond})
		tp.span("a")
		tp.queue.ForceFlush(context.Background())
		if n := len(r.Requests()); n != 1 || tp.queue.Failed() != 1 {
			t.Errorf("a 400 was sent %d times (failed %d); want once, not retried", n, tp.queue.Failed())
		}
		if err := tp.shutdown(wait); err != nil {
			t.Fatal(err)
		}
	})
}

// TestStatusOnFailureAndRecovery shows a rejected token and an unreachable
// endpoint as the extension's status, and clears it when export recovers.
// The token the endpoint echoes back stays out of every warning.
func TestStatusOnFailureAndRecovery(t *testing.T) {
	const canary = "lf-canary-7d1f0a"
	r := otlptest.New()
	defer r.Close()
	r.Answer(func(int) int { return http.StatusUnauthorized })
	tp := newTestPipeline(t, r, canary, ExportOptions{})
	tp.span("a")
	tp.queue.ForceFlush(context.Background())
	tp.span("b")
	tp.queue.ForceFlush(context.Background())
	if got := tp.Statuses(); len(got) != 1 || got[0] != "logfire: export failing (401 unauthorized)" {
		t.Errorf("statuses after two rejected exports %q; want the 401 once", got)
	}
	r.Answer(nil)
	tp.span("c")
	tp.queue.ForceFlush(context.Background())
	if got := tp.Statuses(); len(got) != 2 || got[1] != "" {
		t.Errorf("statuses after recovery %q; want the status cleared", got)
	}
	if got := r.Requests(); got[0].Authorization != canary {
		t.Errorf("Authorization %q, want the token", got[0].Authorization)
	}
	tp.mu.Lock()
	warnings := strings.Join(tp.warnings, "\n")
	tp.mu.Unlock()
	if !strings.Contains(warnings, "401") || !strings.Contains(warnings, "[redacted]") {
		t.Errorf("warnings lack the failure or the redaction:\n%s", warnings)
	}
	if strings.Contains(warnings, canary) {
		t.Errorf("the token is in a warning:\n%s", warnings)
	}
	if err := tp.shutdown(wait); err != nil {
		t.Fatal(err)
	}

	t.Run("unreachable", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close() // nothing listens there now
		st, _ := resolve([]byte(`{"endpoint":"http://`+addr+`"}`), func(string) string { return "" })
		var statuses []string
		p, err := newPipeline(st, "test", ExportOptions{}, func(s string) { statuses = append(statuses, s) }, func(string, ...any) {})
		if err != nil {
			t.Fatal(err)
		}
		_, s := p.provider.Tracer("t").Start(context.Background(), "a")
		s.End()
		p.queue.ForceFlush(context.Background())
		p.shutdown(wait)
		if len(statuses) != 1 || statuses[0] != "logfire: export failing (endpoint unreachable)" {
			t.Errorf("statuses %q", statuses)
		}
	})
}

// TestQueueDropsWhenFull fills the queue behind a blackholed endpoint:
// ending a span never waits, the spans beyond the queue are dropped and
// counted, and the final flush gives up at its deadline.
func TestQueueDropsWhenFull(t *testing.T) {
	r := otlptest.New()
	defer r.Close()
	r.Blackhole(true)
	tp := newTestPipeline(t, r, "", ExportOptions{QueueSize: 4, BatchSize: 1, BatchInterval: time.Millisecond})
	tp.span("first")
	// The first export is held by the endpoint: the queue is what is left.
	if _, ok := r.WaitFor(wait, func(_ []otlptest.Span, reqs []otlptest.Request) bool { return len(reqs) == 1 }); !ok {
		t.Fatal("the first export never arrived")
	}
	for range 100 {
		tp.span("more")
	}
	if d := tp.queue.Dropped(); d != 100-4 {
		t.Errorf("dropped %d spans, want %d (100 ended, 4 queued)", d, 100-4)
	}
	tp.mu.Lock()
	warned := strings.Contains(strings.Join(tp.warnings, "\n"), "span queue full")
	tp.mu.Unlock()
	if !warned {
		t.Error("no warning that the queue is full")
	}
	// Shutdown flushes within its deadline even though the endpoint never
	// answers: the export in flight is abandoned.
	done := make(chan error, 1)
	go func() { done <- tp.shutdown(50 * time.Millisecond) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("shutdown returned %v, want the deadline", err)
		}
	case <-time.After(wait):
		t.Fatal("shutdown hung on a blackholed endpoint")
	}
	if tp.queue.Exported() != 0 {
		t.Errorf("exported %d to a blackhole", tp.queue.Exported())
	}
}

// TestFlushOnShutdown exports what is still queued at shutdown, before
// any batch interval.
func TestFlushOnShutdown(t *testing.T) {
	r := otlptest.New()
	defer r.Close()
	tp := newTestPipeline(t, r, "", ExportOptions{BatchInterval: time.Hour})
	for range 3 {
		tp.span("x")
	}
	if err := tp.shutdown(wait); err != nil {
		t.Fatal(err)
	}
	if n := len(r.Spans()); n != 3 {
		t.Errorf("received %d spans after shutdown, want 3", n)
	}
	// After shutdown a span is dropped, never queued.
	tp.queue.OnEnd(nil)
	if tp.queue.Dropped() != 1 {
		t.Errorf("dropped %d after shutdown, want 1", tp.queue.Dropped())
	}
}

// TestIDs keeps the event's ids on the exported span, and falls back to
// random ones.
func TestIDs(t *testing.T) {
	tid, _ := trace.TraceIDFromHex(trace1)
	sid, _ := trace.SpanIDFromHex(tool1)
	gotT, gotS := eventIDs{}.NewIDs(withIDs(context.Background(), tid, sid))
	if gotT != tid || gotS != sid {
		t.Errorf("NewIDs = %s %s", gotT, gotS)
	}
	if s := (eventIDs{}).NewSpanID(withIDs(context.Background(), tid, sid), tid); s != sid {
		t.Errorf("NewSpanID = %s", s)
	}
	a, b := eventIDs{}.NewIDs(context.Background())
	if !a.IsValid() || !b.IsValid() {
		t.Error("random ids are invalid")
	}
	for _, bad := range []string{"", "xyz", "0000000000000000", strings.Repeat("a", 17)} {
		if _, ok := parseSpanID(bad); ok {
			t.Errorf("parseSpanID(%q) accepted", bad)
		}
	}
	if _, ok := parseTraceID(strings.Repeat("0", 32)); ok {
		t.Error("an all-zero trace id was accepted")
	}
}

// TestResolve merges config, environment and defaults.
func TestResolve(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	st, err := resolve(nil, getenv)
	if err != nil || st.tracesURL != DefaultEndpoint+"/v1/traces" || st.serviceName != DefaultServiceName || st.token != "" {
		t.Errorf("defaults: %+v %v", st, err)
	}
	env[EndpointEnv] = "https://logfire-eu.pydantic.dev/"
	env[ServiceNameEnv] = "svc"
	env[TokenEnv] = " tok \n"
	st, _ = resolve([]byte(`null`), getenv)
	if st.tracesURL != "https://logfire-eu.pydantic.dev/v1/traces" || st.serviceName != "svc" || st.token != "tok" {
		t.Errorf("from the environment: %+v", st)
	}
	st, _ = resolve([]byte(`{"endpoint":"http://127.0.0.1:4318/v1/traces","service_name":"cfg"}`), getenv)
	if st.tracesURL != "http://127.0.0.1:4318/v1/traces" || st.serviceName != "cfg" {
		t.Errorf("config over environment: %+v", st)
	}
	for _, bad := range []string{`{"endpoint":"ftp://x"}`, `{"endpoint":"logfire"}`, `{"endpoint":3}`} {
		if _, err := resolve([]byte(bad), getenv); err == nil {
			t.Errorf("%s accepted", bad)
		} else if strings.Contains(err.Error(), "tok") {
			t.Errorf("the error names the token: %v", err)
		}
	}
}

func TestResolveOTELEnvironment(t *testing.T) {
	env := map[string]string{
		OTLPEndpointEnv: "http://127.0.0.1:4318",
		OTLPHeadersEnv:  "authorization=Bearer%20hdr-secret , x-team=core,",
	}
	getenv := func(k string) string { return env[k] }
	st, err := resolve(nil, getenv)
	want := map[string]string{"authorization": "Bearer hdr-secret", "x-team": "core"}
	if err != nil || st.tracesURL != "http://127.0.0.1:4318/v1/traces" || !maps.Equal(st.headers, want) {
		t.Errorf("from OTEL_*: %+v %v; want headers %v", st, err, want)
	}
	env[EndpointEnv] = "https://logfire-eu.pydantic.dev"
	if st, _ := resolve(nil, getenv); st.tracesURL != "https://logfire-eu.pydantic.dev/v1/traces" {
		t.Errorf("%s must win over %s: %s", EndpointEnv, OTLPEndpointEnv, st.tracesURL)
	}
	env[TokenEnv] = "tok"
	st, _ = resolve([]byte(`{"endpoint":"http://127.0.0.1:1"}`), getenv)
	if want := map[string]string{"Authorization": "tok", "x-team": "core"}; !maps.Equal(st.headers, want) || st.tracesURL != "http://127.0.0.1:1/v1/traces" {
		t.Errorf("config and token over the environment: %+v; want headers %v", st, want)
	}
	for _, bad := range []string{"novalue", "=v", "k=%zz-hdr-secret"} {
		env[OTLPHeadersEnv] = bad
		_, err := resolve(nil, getenv)
		if err == nil || !strings.Contains(err.Error(), OTLPHeadersEnv) {
			t.Errorf("%q: %v, want an error naming %s", bad, err, OTLPHeadersEnv)
		} else if strings.Contains(err.Error(), "hdr-secret") {
			t.Errorf("the error names a header value: %v", err)
		}
	}
}

func TestRedactHeaderValues(t *testing.T) {
	st, err := resolve([]byte(`{"endpoint":"http://127.0.0.1:1"}`), func(k string) string {
		return map[string]string{TokenEnv: "tok-secret", OTLPHeadersEnv: "x-api=hdr-secret"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	h := &health{secrets: st.secrets()}
	if got := h.redact("echoed tok-secret and hdr-secret"); got != "echoed [redacted] and [redacted]" {
		t.Errorf("redact = %q", got)
	}
}
