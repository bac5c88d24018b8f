// Package conformance is the test suite every [core.Transport] must pass:
// the [core.Instance] contract checked against real servers, so that a new
// transport gets the whole lifecycle tested by writing one factory.
//
// A transport's test calls [Run] with a [Suite]: the transport under test
// and a Spec function that returns the [core.ServerSpec] making it start
// one of the suite's behaviours ([Echo], [Crash], [Stderr], [Ignore],
// [Exit], and [Missing], which must fail to start). The behaviours are
// written once, here ([Behaviours]); a transport whose servers are
// processes runs them from a program of its own — a re-executed test
// binary or one built in TestMain — that calls [Main] with the
// behaviour's name:
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, conformance.Suite{
//			Transport: mytransport.New(),
//			Spec: func(b string) core.ServerSpec {
//				return core.ServerSpec{Name: "conf-" + b, Command: serverBin, Args: []string{b}}
//			},
//			Processes: true,
//		})
//	}
//
// What it checks, one subtest each: a start that fails names the
// extension, and a start with a done context fails; bytes round-trip, a
// 1 MiB line included; concurrent writers (serialised, as the JSON-RPC
// write lock serialises them) and a concurrent reader lose and garble
// nothing; closing stdin ends a cooperative server cleanly, and a server
// that exits on its own reports a clean exit after its last bytes; a crash
// in the middle of a call ends reads, closes Done and reports the exit
// status and stderr tail in a *[core.ExitError] naming the extension;
// Stop unblocks a pending read of a server that ignores its stdin; Kill
// ends it as SIGKILL; StderrTail keeps the server's stderr; Stop, Kill,
// Err, Done and StderrTail agree when called from many goroutines; Start
// may be called concurrently; and no subtest leaves a goroutine behind
// (or, for processes, a process).
//
// The suite asserts no wall-clock bounds: every wait is bounded only by
// the test binary's deadline, to end a hung test, never to grade speed.
// The package depends on the standard library and core only.
package conformance

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"yolop.dev/core"
	"yolop.dev/core/internal/leakcheck"
	"yolop.dev/core/internal/testdeadline"
)

// A Suite is the transport under test and how to start the behaviours
// with it.
type Suite struct {
	// Transport is the transport under test.
	Transport core.Transport
	// Spec returns the spec that makes Transport start the named behaviour
	// (one of the constants above). Its Name must be non-empty; the suite
	// checks that errors name it.
	Spec func(behaviour string) core.ServerSpec
	// Processes says the instances are operating-system processes: PID is
	// non-zero, and the process is gone once Done is closed. False means
	// in-process servers, whose PID is 0.
	Processes bool
	// IgnoreGoroutines lists stack substrings of goroutines a transport's
	// dependencies keep for the life of the process (never one per
	// instance); the leak check skips them. Nil means none.
	IgnoreGoroutines []string
	// StopGrace is the grace the suite passes to Stop for a server that
	// ignores its stdin: how long the transport waits before terminating
	// it. Zero means 100ms. It bounds nothing the suite asserts.
	StopGrace time.Duration
}

// Run runs the suite as subtests of t.
func Run(t *testing.T, s Suite) {
	if s.Transport == nil || s.Spec == nil {
		t.Fatal("conformance: Suite needs a Transport and a Spec")
	}
	if s.StopGrace <= 0 {
		s.StopGrace = 100 * time.Millisecond
	}
	for _, tc := range []struct {
		name string
		f    func(*testing.T, *Suite)
	}{
		{"StartFailureNamesTheExtension", testStartFailure},
		{"StartWithDoneContext", testStartDoneContext},
		{"RoundTrip", testRoundTrip},
		{"ConcurrentWrites", testConcurrentWrites},
		{"CleanExitAtEndOfStdin", testCleanExit},
		{"ExitOnItsOwn", testExitOnItsOwn},
		{"CrashMidCall", testCrash},
		{"StopUnblocksPendingRead", testStopUnblocksRead},
		{"KillUnblocksPendingRead", testKill},
		{"StderrTail", testStderrTail},
		{"ConcurrentStopAndKill", testConcurrentStopKill},
		{"ConcurrentStarts", testConcurrentStarts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakcheck.CheckIgnoring(t, s.IgnoreGoroutines...)
			tc.f(t, &s)
		})
	}
}

// start starts behaviour b and registers a Kill and the process check as
// cleanup.
func (s *Suite) start(t *testing.T, b string) (core.Instance, core.ServerSpec) {
	t.Helper()
	spec := s.Spec(b)
	inst, err := s.Transport.Start(context.Background(), spec)
	if err != nil {
		t.Fatalf("Start(%s): %v", b, err)
	}
	pid := inst.PID()
	if s.Processes && pid <= 0 {
		t.Errorf("PID = %d; want the server's pid", pid)
	}
	if !s.Processes && pid != 0 {
		t.Errorf("PID = %d; want 0 for an in-process server", pid)
	}
	t.Cleanup(func() {
		inst.Kill()
		if s.Processes && pid > 0 && !processGone(pid) {
			t.Errorf("process %d of %s still runs after Kill returned", pid, spec.Name)
		}
	})
	return inst, spec
}

// within runs f and fails the test if it has not returned by the test's
// deadline: a hang guard, not a timing assertion.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	timer := time.NewTimer(testdeadline.Left(t))
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		t.Fatalf("%s did not return", what)
	}
}

func waitDone(t *testing.T, inst core.Instance, what string) {
	t.Helper()
	within(t, "waiting for Done after "+what, func() { <-inst.Done() })
}

func isDone(inst core.Instance) bool {
	select {
	case <-inst.Done():
		return true
	default:
		return false
	}
}

// processGone reports whether pid is no longer a process we can signal.
func processGone(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	return p.Signal(syscall.Signal(0)) != nil
}

// exitError checks that err is a *core.ExitError naming spec's extension.
func exitError(t *testing.T, err error, spec core.ServerSpec) *core.ExitError {
	t.Helper()
	var xe *core.ExitError
	if !errors.As(err, &xe) {
		t.Fatalf("err = %v (%T); want a *core.ExitError", err, err)
	}
	if xe.Name != spec.Name || !strings.Contains(err.Error(), spec.Name) {
		t.Errorf("exit error %q names %q; want %q", err, xe.Name, spec.Name)
	}
	return xe
}

// readEnd reads inst's stdout until it fails, guarded by within, and
// returns what it read and the error.
func readEnd(t *testing.T, inst core.Instance, what string) (got []byte, err error) {
	t.Helper()
	within(t, what, func() {
		b := make([]byte, 32<<10)
		for err == nil {
			var n int
			n, err = inst.Stdout().Read(b)
			got = append(got, b[:n]...)
		}
	})
	return got, err
}

func testStartFailure(t *testing.T, s *Suite) {
	spec := s.Spec(Missing)
	inst, err := s.Transport.Start(context.Background(), spec)
	if err == nil {
		inst.Kill()
		t.Fatalf("Start(%s) succeeded; want an error", Missing)
	}
	if !strings.Contains(err.Error(), spec.Name) {
		t.Errorf("Start(%s) = %q; want it to name the extension %q", Missing, err, spec.Name)
	}
}

func testStartDoneContext(t *testing.T, s *Suite) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	inst, err := s.Transport.Start(ctx, s.Spec(Echo))
	if err == nil {
		inst.Kill()
		t.Fatal("Start with a done context succeeded")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Start with a done context = %v; want it to wrap context.Canceled", err)
	}
}

func testRoundTrip(t *testing.T, s *Suite) {
	inst, _ := s.start(t, Echo)
	if isDone(inst) || inst.Err() != nil {
		t.Fatalf("a running server: Done %v, Err %v", isDone(inst), inst.Err())
	}
	out := bufio.NewReaderSize(inst.Stdout(), 64<<10)
	big := strings.Repeat("x", 1<<20) + "\n"
	for _, msg := range []string{"hello\n", "{\"jsonrpc\":\"2.0\"}\n", big, "after the big one\n"} {
		within(t, "a round trip", func() {
			// Write while reading: a pipe may hold less than a line.
			wrote := make(chan error, 1)
			go func() {
				_, err := io.WriteString(inst.Stdin(), msg)
				wrote <- err
			}()
			line, err := out.ReadString('\n')
			if err != nil || line != msg {
				t.Errorf("read back %d bytes (%.40q…), %v; want the %d bytes written", len(line), line, err, len(msg))
			}
			if err := <-wrote; err != nil {
				t.Errorf("write: %v", err)
			}
		})
	}
	within(t, "Stop", func() {
		if err := inst.Stop(time.Minute); err != nil {
			t.Errorf("Stop of a server that exits at the end of its stdin = %v; want nil", err)
		}
	})
}

func testConcurrentWrites(t *testing.T, s *Suite) {
	inst, _ := s.start(t, Echo)
	const writers, lines = 8, 100
	want := map[string]bool{}
	var mu sync.Mutex // the one-writer-at-a-time rule, as jsonrpc's write lock
	var wg sync.WaitGroup
	for w := range writers {
		for i := range lines {
			want[fmt.Sprintf("w%d-%d %s", w, i, strings.Repeat("y", 1000))] = true
		}
		wg.Go(func() {
			for i := range lines {
				line := fmt.Sprintf("w%d-%d %s\n", w, i, strings.Repeat("y", 1000))
				mu.Lock()
				_, err := io.WriteString(inst.Stdin(), line)
				mu.Unlock()
				if err != nil {
					t.Errorf("write: %v", err)
					return
				}
			}
		})
	}
	got := map[string]bool{}
	within(t, "reading the echoes", func() {
		sc := bufio.NewScanner(inst.Stdout())
		sc.Buffer(make([]byte, 64<<10), 64<<10)
		for len(got) < len(want) && sc.Scan() {
			if !want[sc.Text()] || got[sc.Text()] {
				t.Fatalf("read %.60q: not a line written, or twice", sc.Text())
			}
			got[sc.Text()] = true
		}
		if len(got) < len(want) {
			t.Fatalf("read %d of %d lines, then %v", len(got), len(want), sc.Err())
		}
	})
	wg.Wait()
	within(t, "Stop", func() { inst.Stop(time.Minute) })
}

func testCleanExit(t *testing.T, s *Suite) {
	inst, _ := s.start(t, Echo)
	if _, err := io.WriteString(inst.Stdin(), "last\n"); err != nil {
		t.Fatal(err)
	}
	if err := inst.Stdin().Close(); err != nil {
		t.Fatalf("closing stdin: %v", err)
	}
	got, rerr := readEnd(t, inst, "reading to the end")
	if string(got) != "last\n" || rerr != io.EOF {
		t.Errorf("read %q, %v; want the last line, then io.EOF", got, rerr)
	}
	waitDone(t, inst, "the server's stdin was closed")
	if err := inst.Err(); err != nil {
		t.Errorf("Err after a clean exit = %v; want nil", err)
	}
	if err := inst.Stop(time.Minute); err != nil {
		t.Errorf("Stop after a clean exit = %v; want nil", err)
	}
	if err := inst.Kill(); err != nil {
		t.Errorf("Kill after a clean exit = %v; want nil", err)
	}
	if _, err := io.WriteString(inst.Stdin(), "late\n"); err == nil {
		t.Error("a write after the exit succeeded")
	}
}

func testExitOnItsOwn(t *testing.T, s *Suite) {
	inst, _ := s.start(t, Exit)
	got, rerr := readEnd(t, inst, "reading to the end")
	if string(got) != "bye\n" || rerr != io.EOF {
		t.Errorf("read %q, %v; want \"bye\\n\", then io.EOF", got, rerr)
	}
	waitDone(t, inst, "the server exited")
	if err := inst.Err(); err != nil {
		t.Errorf("Err = %v; want nil for exit status 0", err)
	}
	within(t, "Stop", func() {
		if err := inst.Stop(time.Minute); err != nil {
			t.Errorf("Stop = %v; want nil", err)
		}
	})
}

func testCrash(t *testing.T, s *Suite) {
	inst, spec := s.start(t, Crash)
	if _, err := io.WriteString(inst.Stdin(), "{\"method\":\"tool/call\"}\n"); err != nil {
		t.Fatal(err)
	}
	got, rerr := readEnd(t, inst, "reading from the crashed server")
	if len(got) != 0 || rerr == nil {
		t.Errorf("read %q, %v; want nothing and an error or io.EOF", got, rerr)
	}
	waitDone(t, inst, "a crash")
	xe := exitError(t, inst.Err(), spec)
	if xe.Code != CrashCode || xe.Signal != "" {
		t.Errorf("exit error %+v; want exit status %d", xe, CrashCode)
	}
	for _, l := range CrashLines {
		if !slices.Contains(xe.Stderr, l) || !slices.Contains(inst.StderrTail(), l) {
			t.Errorf("stderr in the exit error %q, StderrTail %q: want both to hold %q", xe.Stderr, inst.StderrTail(), l)
		}
	}
	var serr error
	within(t, "Stop", func() { serr = inst.Stop(time.Minute) })
	if serr != inst.Err() {
		t.Errorf("Stop after the crash = %v; want Err, %v", serr, inst.Err())
	}
}

// pendingRead starts a read of inst's stdout and returns its result.
func pendingRead(inst core.Instance) <-chan error {
	ch := make(chan error, 1)
	go func() {
		_, err := inst.Stdout().Read(make([]byte, 1))
		ch <- err
	}()
	return ch
}

func readReturned(t *testing.T, ch <-chan error, after string) {
	t.Helper()
	var err error
	within(t, "the pending read after "+after, func() { err = <-ch })
	if err == nil {
		t.Errorf("the pending read returned no error after %s", after)
	}
}

func testStopUnblocksRead(t *testing.T, s *Suite) {
	inst, _ := s.start(t, Ignore)
	read := pendingRead(inst)
	var err error
	within(t, "Stop", func() { err = inst.Stop(s.StopGrace) })
	if !isDone(inst) {
		t.Error("Done is open after Stop returned")
	}
	if err != inst.Err() {
		t.Errorf("Stop = %v, Err = %v; want the same", err, inst.Err())
	}
	readReturned(t, read, "Stop")
	if again := inst.Stop(s.StopGrace); again != err {
		t.Errorf("a second Stop = %v; want %v", again, err)
	}
}

func testKill(t *testing.T, s *Suite) {
	inst, spec := s.start(t, Ignore)
	read := pendingRead(inst)
	var err error
	within(t, "Kill", func() { err = inst.Kill() })
	if !isDone(inst) {
		t.Error("Done is open after Kill returned")
	}
	xe := exitError(t, err, spec)
	if xe.Signal != "SIGKILL" || xe.Code != -1 {
		t.Errorf("Kill = %+v; want signal SIGKILL, code -1", xe)
	}
	if inst.Err() != err {
		t.Errorf("Err = %v; want Kill's %v", inst.Err(), err)
	}
	readReturned(t, read, "Kill")
}

func testStderrTail(t *testing.T, s *Suite) {
	inst, _ := s.start(t, Stderr)
	within(t, "reading ready", func() {
		line, err := bufio.NewReader(inst.Stdout()).ReadString('\n')
		if err != nil || line != "ready\n" {
			t.Errorf("read %q, %v; want ready", line, err)
		}
	})
	// The lines were written before "ready", but stderr is its own
	// stream: wait for them, bounded only by the test's deadline.
	deadline := time.Now().Add(testdeadline.Left(t))
	for {
		tail := inst.StderrTail()
		missing := slices.DeleteFunc(slices.Clone(StderrLines), func(l string) bool { return slices.Contains(tail, l) })
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("StderrTail = %q; lacks %q", tail, missing)
		}
		time.Sleep(5 * time.Millisecond)
	}
	within(t, "Stop", func() {
		if err := inst.Stop(time.Minute); err != nil {
			t.Errorf("Stop = %v; want nil", err)
		}
	})
	tail := inst.StderrTail()
	for _, l := range StderrLines {
		if !slices.Contains(tail, l) {
			t.Errorf("StderrTail after the exit = %q; lacks %q", tail, l)
		}
	}
}

func testConcurrentStopKill(t *testing.T, s *Suite) {
	inst, _ := s.start(t, Ignore)
	errs := make(chan error, 20)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			inst.StderrTail()
			inst.Err()
			if i%2 == 0 {
				errs <- inst.Stop(s.StopGrace)
			} else {
				errs <- inst.Kill()
			}
			<-inst.Done()
		})
	}
	within(t, "concurrent Stop and Kill", wg.Wait)
	close(errs)
	for err := range errs {
		if err != inst.Err() {
			t.Errorf("a Stop or Kill returned %v; Err is %v", err, inst.Err())
		}
	}
	if inst.Err() == nil {
		t.Error("Err = nil for a server that had to be stopped or killed")
	}
}

func testConcurrentStarts(t *testing.T, s *Suite) {
	const n = 4
	insts := make([]core.Instance, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { insts[i], errs[i] = s.Transport.Start(context.Background(), s.Spec(Echo)) })
	}
	within(t, "concurrent starts", wg.Wait)
	for i, inst := range insts {
		if errs[i] != nil {
			t.Errorf("start %d: %v", i, errs[i])
			continue
		}
		t.Cleanup(func() { inst.Kill() })
		msg := fmt.Sprintf("instance %d\n", i)
		within(t, "a round trip", func() {
			if _, err := io.WriteString(inst.Stdin(), msg); err != nil {
				t.Errorf("write to %d: %v", i, err)
				return
			}
			line, err := bufio.NewReader(inst.Stdout()).ReadString('\n')
			if err != nil || line != msg {
				t.Errorf("instance %d answered %q, %v", i, line, err)
			}
		})
	}
	for _, inst := range insts {
		if inst != nil {
			within(t, "Stop", func() { inst.Stop(time.Minute) })
		}
	}
}
