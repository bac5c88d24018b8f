//go:build linux

package stdio_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
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
// same line by hand, also under a sandbox (the confine launcher's re-exec
// and Landlock) with three launchers (this test binary, the yolop binary,
// the small yolop-sandbox) and without the PID namespace; session is
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
	// The same start under a default-like sandbox: through the confine
	// launcher (this test binary re-executed), Landlock rules, a private
	// TMPDIR.
	sandboxed := spec
	sandboxed.Sandbox = &core.Confinement{Paths: []core.ConfinedPath{{Path: filepath.Dir(bin)}}}
	// The launcher a user's yolop uses: the yolop binary itself, which
	// first initialises every package it links, or the small yolop-sandbox
	// beside it.
	yolopBin := filepath.Join(b.TempDir(), "yolop")
	small := filepath.Join(b.TempDir(), "yolop-sandbox")
	for _, build := range [][2]string{{yolopBin, "yolop.dev/cmd/yolop"}, {small, "yolop.dev/transport/stdio/confine/cmd/yolop-sandbox"}} {
		if out, err := exec.Command("go", "build", "-o", build[0], build[1]).CombinedOutput(); err != nil {
			b.Fatalf("building %s: %v\n%s", build[1], err, out)
		}
	}
	viaYolop := stdio.New(stdio.Options{Launcher: yolopBin})
	viaSmall := stdio.New(stdio.Options{Launcher: small})
	grant := host.Grant{
		Name: "echo", ProtocolVersion: "1.0", Server: spec,
		Tools:  []host.ToolGrant{{Name: "echo"}, {Name: "count", Streaming: true}},
		Prompt: &host.PromptGrant{Text: "The echo extension is installed: call the echo tool to repeat text and count to watch streamed progress."},
	}
	paths := []path{
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
		{"transport-sandboxed", func(b *testing.B) (time.Duration, func()) { return byHand(b, tr, sandboxed) }},
		{"sandboxed-via-yolop", func(b *testing.B) (time.Duration, func()) { return byHand(b, viaYolop, sandboxed) }},
		{"sandboxed-via-small", func(b *testing.B) (time.Duration, func()) { return byHand(b, viaSmall, sandboxed) }},
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
	runPaths(b, onlyPaths(paths)) // profile one path: YOLOP_BENCH_ONLY=session
}

// A path is one way to get a server ready; run returns the time it took
// and how to stop what it started.
type path struct {
	name string
	run  func(b *testing.B) (time.Duration, func())
}

// runPaths runs every path once per iteration, in rotating order, the
// stops untimed, and reports each median in µs and, when the first path
// is the floor, each other's ratio to it. It also reports the CPU this
// process spent on each path, user and system, as a mean per run: with
// more children starting than there are cores, every millisecond of the
// host's own CPU is taken from the children, so this is the part of a
// path's time that is the host's work.
func runPaths(b *testing.B, paths []path) {
	times := make([][]time.Duration, len(paths))
	user := make([]time.Duration, len(paths))
	sys := make([]time.Duration, len(paths))
	i := 0
	for b.Loop() {
		for j := range paths {
			k := (i + j) % len(paths)
			u0, s0 := hostCPU()
			d, stop := paths[k].run(b)
			u1, s1 := hostCPU()
			user[k] += u1 - u0
			sys[k] += s1 - s0
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
		n := float64(len(times[k]))
		b.ReportMetric(float64(user[k].Microseconds())/n, p.name+"-host-user-µs")
		b.ReportMetric(float64(sys[k].Microseconds())/n, p.name+"-host-sys-µs")
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

// BenchmarkSpawnReadyTen is BenchmarkSpawnReady for ten servers started
// at once, the two ways alternating in every iteration: floor starts ten
// echo servers in parallel with os/exec, one initialize line each, until
// the last answer; session is host.NewSession with ten eager extensions
// and Start (which spawns them in parallel and returns once every
// handshake is done); transport is ten of this transport's Start with the
// initialize line by hand, in parallel, which splits the session's cost
// over the floor into the transport's and the host's. It reports each
// median and the ratios to the floor. Run it with
//
//	go test -run '^$' -bench SpawnReadyTen -benchtime 100x ./transport/stdio
func BenchmarkSpawnReadyTen(b *testing.B) {
	const n = 10
	bin := filepath.Join(b.TempDir(), "yolop-extension-echo")
	if out, err := exec.Command("go", "build", "-o", bin, "yolop.dev/core/examples/echo").CombinedOutput(); err != nil {
		b.Fatalf("building the echo example: %v\n%s", err, out)
	}
	tr := stdio.New(stdio.Options{})
	var grants []host.Grant
	for i := range n {
		name := "echo" + string(rune('a'+i))
		grants = append(grants, host.Grant{
			Name: name, ProtocolVersion: "1.0", Server: core.ServerSpec{Name: name, Command: bin},
			Tools:  []host.ToolGrant{{Name: "echo"}, {Name: "count", Streaming: true}},
			Prompt: &host.PromptGrant{Text: "The echo extension is installed."}, // a prompt makes it eager
		})
	}
	floor := func(b *testing.B) (time.Duration, func()) {
		cmds := make([]*exec.Cmd, n)
		d := inParallel(b, n, func(i int) (io.Writer, io.Reader, error) {
			cmd := exec.Command(bin)
			cmds[i] = cmd
			in, _ := cmd.StdinPipe()
			out, _ := cmd.StdoutPipe()
			return in, out, cmd.Start()
		})
		return d, func() {
			for _, c := range cmds {
				c.Process.Kill()
				c.Wait()
			}
		}
	}
	session := func(b *testing.B) (time.Duration, func()) {
		t0 := time.Now()
		s := host.NewSession(host.SessionOptions{Grants: grants, Transport: tr})
		if err := s.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		if got := len(s.Tools()); got < 2*n {
			b.Fatalf("the session has %d tools after Start, want at least %d", got, 2*n)
		}
		return d, s.Close
	}
	transport := func(b *testing.B) (time.Duration, func()) {
		insts := make([]core.Instance, n)
		d := inParallel(b, n, func(i int) (io.Writer, io.Reader, error) {
			inst, err := tr.Start(context.Background(), grants[i].Server)
			if err != nil {
				return nil, nil, err
			}
			insts[i] = inst
			return inst.Stdin(), inst.Stdout(), nil
		})
		return d, func() {
			for _, inst := range insts {
				if inst != nil {
					inst.Kill()
				}
			}
		}
	}
	runPaths(b, onlyPaths([]path{{"floor", floor}, {"session", session}, {"transport", transport}}))
}

// inParallel runs n starts at once, each writing the initialize line to
// the server it started and reading the answer, and returns the time
// until the last answer.
func inParallel(b *testing.B, n int, start func(i int) (io.Writer, io.Reader, error)) time.Duration {
	errs := make(chan error, n)
	t0 := time.Now()
	for i := range n {
		go func() {
			w, r, err := start(i)
			if err == nil {
				_, err = w.Write([]byte(initializeLine))
			}
			if err == nil {
				_, err = bufio.NewReader(r).ReadBytes('\n')
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(t0)
}

// hostCPU returns the user and system CPU time this process has used.
func hostCPU() (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// onlyPaths keeps the path named by YOLOP_BENCH_ONLY, if set, to profile
// one path alone.
func onlyPaths(paths []path) []path {
	if only := os.Getenv("YOLOP_BENCH_ONLY"); only != "" {
		return slices.DeleteFunc(paths, func(p path) bool { return p.name != only })
	}
	return paths
}
