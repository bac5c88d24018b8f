package main

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.uber.org/goleak"

	"yolop.dev/core/examples/echo/echoext"
	corehost "yolop.dev/core/host"
	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
	"yolop.dev/extensions/logfire"
	"yolop.dev/extensions/logfire/otlptest"
	"yolop.dev/internal/launchertest"
	"yolop.dev/packaging"
	"yolop.dev/packaging/hostgrant"
	"yolop.dev/transport/stdio"
)

// serveEnv makes the test binary act as a capability server: "logfire"
// serves this extension, "echo" the reference echo extension.
const serveEnv = "YOLOP_LOGFIRE_TEST_SERVE"

func TestMain(m *testing.M) {
	switch os.Getenv(serveEnv) {
	case "logfire":
		if err := run(context.Background(), os.Stderr); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	case "sink":
		// A trace consumer that discards every event: the host's side of
		// the trace facet, without an exporter.
		s := sdk.NewServer(sdk.Info{Name: "logfire", Version: logfire.Version, Status: true}, sdk.Options{Logger: hclog.NewNullLogger()})
		s.OnConfig(func(json.RawMessage) error { return nil })
		s.OnTrace(func(yep.TraceEventParams) {})
		if err := s.Serve(context.Background()); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	case "echo":
		if err := echoext.New(hclog.NewNullLogger()).Serve(context.Background()); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	done := launchertest.Use()
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		done()
		os.Exit(code)
	}))
}

// wait bounds every wait: a guard against a hang, never a measurement.
const wait = 60 * time.Second

// moduleDir is this module's root.
func moduleDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// grant is the extension in pkg, its server being this test binary
// serving as serve.
func grant(t testing.TB, pkg, serve string, env map[string]string, config string) corehost.Grant {
	t.Helper()
	m, err := packaging.Load(pkg)
	if err != nil {
		t.Fatal(err)
	}
	g, err := hostgrant.FromManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	g.Server.Command = os.Args[0]
	g.Server.Env = map[string]string{serveEnv: serve}
	for k, v := range env {
		g.Server.Env[k] = v
	}
	if config != "" {
		g.Config = json.RawMessage(config)
	}
	return g
}

// statuses records status/changed per extension.
type statuses struct {
	mu   sync.Mutex
	seen []string
	ch   chan struct{}
}

func (s *statuses) SetStatus(ext, text string) {
	s.mu.Lock()
	s.seen = append(s.seen, ext+": "+text)
	close(s.ch)
	s.ch = make(chan struct{})
	s.mu.Unlock()
}

// waitFor waits until want has been seen.
func (s *statuses) waitFor(t testing.TB, want string) {
	t.Helper()
	deadline := time.After(wait)
	for {
		s.mu.Lock()
		seen, ch := slices.Clone(s.seen), s.ch
		s.mu.Unlock()
		if slices.Contains(seen, want) {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("status %q never came; saw %q", want, seen)
		}
	}
}

// session starts a host session with the echo extension and, when
// endpoint is set, the logfire extension exporting there.
func session(t testing.TB, endpoint, token string, st corehost.StatusSink) *corehost.Session {
	t.Helper()
	grants := []corehost.Grant{grant(t, filepath.Join(moduleDir(), "..", "..", "core", "examples", "echo"), "echo", nil, "")}
	if endpoint != "" {
		env := map[string]string{}
		if token != "" {
			env["LOGFIRE_TOKEN"] = token
		}
		grants = append(grants, grant(t, filepath.Join(moduleDir(), "package"), "logfire", env, `{"endpoint":"`+endpoint+`","service_name":"yolop-test"}`))
	}
	return newSessionWith(t, st, grants...)
}

// newSession starts a host session over grants.
func newSession(t testing.TB, grants ...corehost.Grant) *corehost.Session {
	t.Helper()
	return newSessionWith(t, nil, grants...)
}

func newSessionWith(t testing.TB, st corehost.StatusSink, grants ...corehost.Grant) *corehost.Session {
	t.Helper()
	for i := range grants {
		allowEndpoints(t, &grants[i])
	}
	s := corehost.NewSession(corehost.SessionOptions{
		Grants:        grants,
		Transport:     stdio.New(stdio.Options{}),
		WorkspaceRoot: t.TempDir(),
		SessionID:     "sess-test",
		Logger:        hclog.NewNullLogger(),
	})
	if st != nil {
		// The session reports status/changed as status.changed events.
		s.Subscribe(func(ev corehost.Event) {
			if d, ok := ev.Data.(yep.StatusChangedData); ok {
				st.SetStatus(d.Extension, d.Text)
			}
		})
	}
	if err := s.Start(context.Background()); err != nil {
		s.Close()
		t.Fatal(err)
	}
	return s
}

// allowEndpoints lets g's sandbox connect to the port of the OTLP endpoint
// it is configured with (config "endpoint", OTEL_EXPORTER_OTLP_ENDPOINT),
// as a user's [sandbox.extensions.<name>] connect setting does for an
// endpoint on a port the manifest does not name: the test receivers
// listen on ports the kernel picks.
func allowEndpoints(t testing.TB, g *corehost.Grant) {
	t.Helper()
	if g.Server.Sandbox == nil {
		return
	}
	var cfg struct {
		Endpoint string `json:"endpoint"`
	}
	if len(g.Config) > 0 {
		if err := json.Unmarshal(g.Config, &cfg); err != nil {
			t.Fatal(err)
		}
	}
	for _, raw := range []string{cfg.Endpoint, g.Server.Env["OTEL_EXPORTER_OTLP_ENDPOINT"]} {
		u, err := url.Parse(raw)
		if raw == "" || err != nil || u.Port() == "" {
			continue
		}
		port, err := strconv.ParseUint(u.Port(), 10, 16)
		if err != nil {
			t.Fatal(err)
		}
		g.Server.Sandbox.Connect = append(g.Server.Sandbox.Connect, uint16(port))
	}
}

// turn runs one turn calling echo.
func turn(t testing.TB, s *corehost.Session, text string) {
	t.Helper()
	n := s.BeginTurn(context.Background())
	defer s.EndTurn()
	res, err := s.CallTool(context.Background(), "echo", "call-"+text, json.RawMessage(`{"text":"`+text+`"}`), nil)
	if err != nil || res.Output != text {
		t.Fatalf("turn %d: echo = %+v, %v", n, res, err)
	}
}

// TestThroughHost runs the extension under the real host runtime: the
// host's turn and tool spans arrive under the host's ids, a rejected token
// becomes the extension's status, and the status clears when the
// endpoint accepts again.
func TestThroughHost(t *testing.T) {
	r := otlptest.New()
	defer r.Close()
	r.Answer(func(int) int { return 401 })
	st := &statuses{ch: make(chan struct{})}
	s := session(t, r.URL(), "tok-host-test", st)
	defer s.Close()

	turn(t, s, "one")
	st.waitFor(t, "logfire: logfire: export failing (401 unauthorized)")
	r.Answer(nil)
	turn(t, s, "two")
	st.waitFor(t, "logfire: ")
	s.Close()

	// The second turn's trace (the first was rejected, all or part of it).
	spans := r.Spans()
	var trace string
	for _, sp := range spans {
		if sp.Attrs["gen_ai.tool.call.id"] == "call-two" {
			trace = sp.TraceID
		}
	}
	spans = slices.DeleteFunc(spans, func(sp otlptest.Span) bool { return sp.TraceID != trace })
	tree := otlptest.Tree(spans, "gen_ai.tool.name", "yolop.extension", "yolop.tool.status")
	t.Logf("received:\n%s", tree)
	want := "turn\n  execute_tool echo gen_ai.tool.name=echo yolop.extension=echo yolop.tool.status=ok\n" +
		"    hook pre_tool_use gen_ai.tool.name=echo yolop.extension=echo\n"
	if tree != want {
		t.Errorf("tree of the second turn:\n%s\nwant:\n%s", tree, want)
	}
	for _, req := range r.Requests() {
		if req.Authorization != "tok-host-test" {
			t.Errorf("Authorization %q", req.Authorization)
		}
	}
}

// TestBlackholedEndpoint: an endpoint that never answers costs the session
// nothing it waits on. Every call completes, and closing the session
// returns once the server's flush gives up at its deadline.
func TestBlackholedEndpoint(t *testing.T) {
	r := otlptest.New()
	defer r.Close()
	r.Blackhole(true)
	s := session(t, r.URL(), "", nil)
	for i := range 50 {
		turn(t, s, strings.Repeat("x", i+1))
	}
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatal("closing the session hung on a blackholed endpoint")
	}
	if len(r.Requests()) == 0 {
		t.Error("no export reached the blackhole: the test did not test it")
	}
}

// BenchmarkToolCallBlackholed measures, in one run, a turn with one echo
// call in four sessions: echo alone ("off"); echo with a trace consumer
// that discards every event ("sink": the host's side of the facet); echo
// with the logfire
// extension exporting to a healthy endpoint ("healthy"); and echo with the
// logfire extension exporting to an endpoint that accepts connections and
// never answers ("blackholed"). Turns alternate so all four see the same
// load, in a random order each round. It reports each p50, blackholed/off (what the issue bounds: within
// noise) and blackholed/healthy (what the dead endpoint itself costs).
func BenchmarkToolCallBlackholed(b *testing.B) {
	hole := otlptest.New()
	defer hole.Close()
	hole.Blackhole(true)
	ok := otlptest.New()
	defer ok.Close()
	off := session(b, "", "", nil)
	defer off.Close()
	echoPkg := filepath.Join(moduleDir(), "..", "..", "core", "examples", "echo")
	sink := newSession(b, grant(b, echoPkg, "echo", nil, ""), grant(b, filepath.Join(moduleDir(), "package"), "sink", nil, "{}"))
	defer sink.Close()
	healthy := session(b, ok.URL(), "", nil)
	defer healthy.Close()
	blackholed := session(b, hole.URL(), "", nil)
	defer blackholed.Close()
	sessions := []*corehost.Session{off, sink, healthy, blackholed}
	for range 20 {
		for _, s := range sessions {
			turn(b, s, "warm")
		}
	}
	var d [4][]time.Duration
	b.ResetTimer()
	for b.Loop() {
		// A random order each round: the trace events of a logfire
		// session's turn are handled by its server after the turn
		// returns, so whatever runs next shares the CPU with that work.
		for _, i := range rand.Perm(len(sessions)) {
			s := sessions[i]
			t0 := time.Now()
			turn(b, s, "x")
			d[i] = append(d[i], time.Since(t0))
		}
	}
	b.StopTimer()
	pOff, pSink, pOK, pHole := p50(d[0]), p50(d[1]), p50(d[2]), p50(d[3])
	b.ReportMetric(float64(pOff.Microseconds()), "off-p50-µs")
	b.ReportMetric(float64(pSink.Microseconds()), "sink-p50-µs")
	b.ReportMetric(float64(pOK.Microseconds()), "healthy-p50-µs")
	b.ReportMetric(float64(pHole.Microseconds()), "blackholed-p50-µs")
	if pOff > 0 && pOK > 0 {
		b.ReportMetric(float64(pHole)/float64(pOff), "blackholed/off")
		b.ReportMetric(float64(pHole)/float64(pOK), "blackholed/healthy")
		b.ReportMetric(float64(pSink)/float64(pOff), "sink/off")
	}
}

func p50(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
