package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"yolop.dev/extensions/logfire/otlptest"
)

// collectorEnv names a prebuilt test collector (testdata/otelcol);
// .ci/run builds it once and caches it. Without it the test builds it
// into the user cache, keyed by the collector's go.sum.
const collectorEnv = "YOLOP_TEST_OTELCOL"

// collector returns the path of the test collector binary, building it
// when needed. It skips the test when it cannot be built outside CI.
func collector(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(collectorEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%s: %v", collectorEnv, p, err)
		}
		return p
	}
	src := filepath.Join(moduleDir(), "testdata", "otelcol")
	sum, err := os.ReadFile(filepath.Join(src, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	main, _ := os.ReadFile(filepath.Join(src, "main.go"))
	h := sha256.Sum256(append(sum, main...))
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	bin := filepath.Join(cache, "yolop-test", "otelcol-"+hex.EncodeToString(h[:8]))
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = src
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("building the test collector: %v\n%s", err, out)
		}
		t.Skipf("the test collector does not build here (%v); .ci/run builds it:\n%s", err, out)
	}
	return bin
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestCollector runs a real OpenTelemetry Collector (its otlp receiver,
// and an otlphttp exporter forwarding to an otlptest receiver): the host's
// spans exported by logfire and the echotrace server's own spans both go
// to the collector, which must accept them and forward one trace per turn
// in which the echotrace spans sit inside the host's tool span.
func TestCollector(t *testing.T) {
	sink := otlptest.New()
	defer sink.Close()
	endpoint := startCollector(t, sink)

	// echotrace, built, exporting to the collector.
	echo := buildEchotrace(t)
	eg := grant(t, filepath.Join(moduleDir(), "examples", "echotrace"), "", nil, "")
	eg.Server.Command = echo
	eg.Server.Env = map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}
	lg := grant(t, filepath.Join(moduleDir(), "package"), "logfire", map[string]string{"LOGFIRE_TOKEN": "tok-collector"}, `{"endpoint":"`+endpoint+`","service_name":"yolop-collector-test"}`)
	s := newSession(t, lg, eg)
	turn(t, s, "one")
	turn(t, s, "two")
	s.Close()

	spans, ok := sink.WaitFor(wait, func(spans []otlptest.Span, _ []otlptest.Request) bool {
		return countName(spans, "echo.render") == 2 && countName(spans, "turn") == 2
	})
	if !ok {
		t.Fatalf("the collector forwarded:\n%s", otlptest.Tree(spans))
	}
	traces := map[string][]otlptest.Span{}
	for _, sp := range spans {
		traces[sp.TraceID] = append(traces[sp.TraceID], sp)
	}
	if len(traces) != 2 {
		t.Errorf("%d traces, want one per turn:\n%s", len(traces), otlptest.Tree(spans))
	}
	for id, ss := range traces {
		tree := otlptest.Tree(ss, "service.name")
		want := "turn service.name=yolop-collector-test\n" +
			"  execute_tool echo service.name=yolop-collector-test\n" +
			"    tool/call echo service.name=yolop-extension-echotrace\n" +
			"      echo.render service.name=yolop-extension-echotrace\n"
		if tree != want {
			t.Errorf("trace %s as the collector forwarded it:\n%s\nwant:\n%s", id, tree, want)
		}
	}
}

// startCollector runs the test collector, its OTLP/HTTP receiver on a free
// loopback port, forwarding every trace to sink; it returns the
// receiver's endpoint. The collector stops when the test ends.
func startCollector(t *testing.T, sink *otlptest.Receiver) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds an OpenTelemetry Collector; skipped with -short")
	}
	bin := collector(t)
	addr := freePort(t)
	conf := filepath.Join(t.TempDir(), "otelcol.yaml")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
exporters:
  debug:
    verbosity: basic
  otlphttp:
    endpoint: %s
    compression: none
    retry_on_failure:
      enabled: false
    sending_queue:
      enabled: false
processors: {}
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [otlphttp, debug]
`, addr, sink.URL())), 0o644); err != nil {
		t.Fatal(err)
	}
	col := exec.Command(bin, "--config", conf)
	col.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var colOut strings.Builder
	col.Stdout, col.Stderr = &colOut, &colOut
	if err := col.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { col.Wait(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-col.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(wait):
			syscall.Kill(-col.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if t.Failed() {
			t.Logf("collector output:\n%s", colOut.String())
		}
	})
	// Ready when its receiver accepts connections.
	for deadline := time.Now().Add(wait); ; {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-exited:
			t.Fatalf("the collector exited:\n%s", colOut.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector never listened on %s:\n%s", addr, colOut.String())
		}
	}
	return "http://" + addr
}

// buildEchotrace builds the echotrace example into a temporary directory.
func buildEchotrace(t *testing.T) string {
	t.Helper()
	echo := filepath.Join(t.TempDir(), "yolop-extension-echotrace")
	gb := exec.Command("go", "build", "-o", echo, ".")
	gb.Dir = filepath.Join(moduleDir(), "examples", "echotrace")
	if out, err := gb.CombinedOutput(); err != nil {
		t.Fatalf("build echotrace: %v\n%s", err, out)
	}
	return echo
}
