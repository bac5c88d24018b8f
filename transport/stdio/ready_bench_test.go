//go:build linux

package stdio_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"yolop.dev/core"
	"yolop.dev/core/host"
	"yolop.dev/transport/stdio"
)

// initializeLine is the request the floor sends: what host.Session sends
// first, as one ndjson line.
const initializeLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":"1.0","session_id":"bench","workspace_root":"/","capabilities":["tools","hooks","prompt"]}}` + "\n"

// BenchmarkSpawnReady measures spawn → handshake done for the SDK echo
// example, three ways in rotating order in every iteration, and reports
// each median in µs and the ratios to the floor. The floor is os/exec with
// two pipes, one initialize line written and the answer line read (the
// least any host can do); transport is this transport's Start
// (environment, binary lookup, PID namespace, stderr capture) with the
// same line by hand, also without the PID namespace; session is
// host.NewSession with one eager extension and Start, which returns once
// the handshake is done (initialize, the clamp, initialized, the first
// prompt contribution). Run it with
//
//	go test -run '^$' -bench SpawnReady -benchtime 200x ./transport/stdio
func BenchmarkSpawnReady(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "yolop-extension-echo")
	if out, err := exec.Command("go", "build", "-o", bin, "yolop.dev/core/examples/echo").CombinedOutput(); err != nil {
		b.Fatalf("building the echo example: %v\n%s", err, out)
	}
	tr := stdio.New(stdio.Options{})
	spec := core.ServerSpec{Name: "echo", Command: bin}
	grant := host.Grant{
		Name: "echo", ProtocolVersion: "1.0", Server: spec,
		Tools:  []host.ToolGrant{{Name: "echo"}, {Name: "count", Streaming: true}},
		Prompt: &host.PromptGrant{Text: "The echo extension is installed: call the echo tool to repeat text and count to watch streamed progress."},
	}
	paths := []struct {
		name string
		run  func(b *testing.B) (time.Duration, func())
	}{
		{"floor", func(b *testing.B) (time.Duration, func()) {
			t0 := time.Now()
			cmd := exec.Command(bin)
			in, _ := cmd.StdinPipe()
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			if _, err := in.Write([]byte(initializeLine)); err != nil {
				b.Fatal(err)
			}
			if _, err := bufio.NewReader(out).ReadBytes('\n'); err != nil {
				b.Fatal(err)
			}
			d := time.Since(t0)
			return d, func() { cmd.Process.Kill(); cmd.Wait() }
		}},
		{"transport", func(b *testing.B) (time.Duration, func()) { return byHand(b, tr, spec) }},
		{"transport-nopidns", func(b *testing.B) (time.Duration, func()) {
			defer stdio.SetPIDNamespaceModeForTest("off")()
			return byHand(b, tr, spec)
		}},
		{"session", func(b *testing.B) (time.Duration, func()) {
			t0 := time.Now()
			s := host.NewSession(host.SessionOptions{Grants: []host.Grant{grant}, Transport: tr})
			if err := s.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			d := time.Since(t0)
			if len(s.Tools()) == 0 {
				b.Fatal("the session has no tools after Start")
			}
			return d, s.Close
		}},
	}
	if os.Getenv("YOLOP_BENCH_ONLY") != "" { // profile one path: YOLOP_BENCH_ONLY=session
		paths = slices.DeleteFunc(paths, func(p struct {
			name string
			run  func(b *testing.B) (time.Duration, func())
		}) bool {
			return p.name != os.Getenv("YOLOP_BENCH_ONLY")
		})
	}
	times := make([][]time.Duration, len(paths))
	i := 0
	for b.Loop() {
		for j := range paths {
			k := (i + j) % len(paths)
			d, stop := paths[k].run(b)
			times[k] = append(times[k], d)
			b.StopTimer()
			stop()
			b.StartTimer()
		}
		i++
	}
	med := func(d []time.Duration) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[len(s)/2]
	}
	floor := med(times[0])
	for k, p := range paths {
		m := med(times[k])
		b.ReportMetric(float64(m.Microseconds()), p.name+"-µs")
		if k > 0 && paths[0].name == "floor" {
			b.ReportMetric(float64(m)/float64(floor), p.name+"/floor")
		}
	}
}

// byHand starts spec with tr and sends the initialize line by hand,
// returning the time to its answer and how to stop the instance.
func byHand(b *testing.B, tr *stdio.Transport, spec core.ServerSpec) (time.Duration, func()) {
	t0 := time.Now()
	inst, err := tr.Start(context.Background(), spec)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := inst.Stdin().Write([]byte(initializeLine)); err != nil {
		b.Fatal(err)
	}
	if _, err := bufio.NewReader(inst.Stdout()).ReadBytes('\n'); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0), func() { inst.Kill() }
}
