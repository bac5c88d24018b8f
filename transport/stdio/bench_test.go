//go:build linux

package stdio_test

import (
	"bufio"
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"

	"yolop.dev/core"
	"yolop.dev/transport/stdio"
)

// BenchmarkSpawn measures what a PID namespace adds to starting a server,
// beside the plain start in the same run: each iteration starts one server
// in every mode, in rotating order, so that all modes see the same machine
// noise. It reports each mode's median in µs and the ratios of medians to
// the plain start:
//
//   - plain: no namespaces (the fallback, and the transport before them);
//   - auto: what Start does here: a PID namespace, inside a user namespace
//     unless the process has CAP_SYS_ADMIN (so the same as userns when not
//     root);
//   - userns: a user namespace around the PID namespace even when
//     privileged, the unprivileged path.
//
// Sub-benchmarks: "exit" is Start of true(1) until Done (exec to exit and
// reap); "first-byte" is Start of a Go server (this test binary) until its
// first stdout byte arrives, the moment a host could begin the handshake.
//
//	go test -run '^$' -bench Spawn -benchtime 200x ./transport/stdio
func BenchmarkSpawn(b *testing.B) {
	if ok, err := pidnsPermitted(); !ok {
		b.Skipf("PID namespaces are not permitted here: %v", err)
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("exit", func(b *testing.B) {
		benchSpawn(b, core.ServerSpec{Name: "true", Command: truePath}, func(b *testing.B, inst core.Instance) {
			<-inst.Done()
		})
	})
	b.Run("first-byte", func(b *testing.B) {
		spec := fakeSpec(b, "ready", "sleeper", map[string]string{reportEnv: "ready"})
		benchSpawn(b, spec, func(b *testing.B, inst core.Instance) {
			if _, err := bufio.NewReader(inst.Stdout()).ReadByte(); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// benchSpawn times Start of spec until ready returns, in every mode.
func benchSpawn(b *testing.B, spec core.ServerSpec, ready func(*testing.B, core.Instance)) {
	modes := []string{"plain", "auto", "userns"}
	hook := map[string]string{"plain": "off", "auto": "auto", "userns": "userns"}
	times := make([][]time.Duration, len(modes))
	tr := stdio.New(stdio.Options{})
	i := 0
	for b.Loop() {
		for j := range modes {
			k := (i + j) % len(modes)
			restore := stdio.SetPIDNamespaceModeForTest(hook[modes[k]])
			t0 := time.Now()
			inst, err := tr.Start(context.Background(), spec)
			if err != nil {
				b.Fatal(err)
			}
			ready(b, inst)
			times[k] = append(times[k], time.Since(t0))
			inst.Kill()
			restore()
		}
		i++
	}
	med := make([]float64, len(modes))
	for k, m := range modes {
		slices.Sort(times[k])
		med[k] = float64(times[k][len(times[k])/2]) / float64(time.Microsecond)
		b.ReportMetric(med[k], m+"-p50-µs")
	}
	b.ReportMetric(med[1]/med[0], "auto/plain")
	b.ReportMetric(med[2]/med[0], "userns/plain")
}
