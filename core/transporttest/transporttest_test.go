package transporttest_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"yolop.dev/core"
	"yolop.dev/core/internal/leakcheck"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/sdk"
	"yolop.dev/core/transporttest"
	"yolop.dev/core/yep"
)

// The tests below pin the [core.Instance] contract as the in-memory
// transport keeps it: what each method returns before and after the
// server exits, what unblocks what, and how an exit is reported.

var _ core.Transport = (*transporttest.Transport)(nil)

// echoLines answers every line with "echo: <line>".
func echoLines(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		if _, err := fmt.Fprintf(stdout, "echo: %s\n", sc.Text()); err != nil {
			return err
		}
	}
	return nil
}

// ignoresStdin runs until it is killed, reading nothing.
func ignoresStdin(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	<-ctx.Done()
	return ctx.Err()
}

func start(t *testing.T, name string, srv transporttest.Server) core.Instance {
	t.Helper()
	tr := &transporttest.Transport{Servers: map[string]transporttest.Server{name: srv}}
	inst, err := tr.Start(context.Background(), core.ServerSpec{Name: name})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { inst.Kill() })
	return inst
}

func isDone(inst core.Instance) bool {
	select {
	case <-inst.Done():
		return true
	default:
		return false
	}
}

func checkExit(t *testing.T, err error, want *core.ExitError) {
	t.Helper()
	var xe *core.ExitError
	if !errors.As(err, &xe) {
		t.Fatalf("err = %v (%T), want a *core.ExitError", err, err)
	}
	if !reflect.DeepEqual(xe, want) {
		t.Fatalf("exit error = %#v, want %#v", xe, want)
	}
}

func TestStartRefusals(t *testing.T) {
	tr := &transporttest.Transport{Servers: map[string]transporttest.Server{"echo": echoLines}}
	if _, err := tr.Start(context.Background(), core.ServerSpec{Name: "other"}); !errors.Is(err, transporttest.ErrNoServer) || !strings.Contains(err.Error(), `"other"`) {
		t.Errorf("Start of an unknown name = %v, want ErrNoServer naming it", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tr.Start(ctx, core.ServerSpec{Name: "echo"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Start with a done context = %v, want context.Canceled", err)
	}
}

// TestRoundTripAndCleanStop: bytes written to Stdin reach the server and
// its answers come back on Stdout; Stop closes stdin, the server returns,
// and the instance reports a clean exit. Cancelling Start's context has no
// effect on a started instance.
func TestRoundTripAndCleanStop(t *testing.T) {
	leakcheck.Check(t)
	tr := &transporttest.Transport{Servers: map[string]transporttest.Server{"echo": echoLines}}
	ctx, cancel := context.WithCancel(context.Background())
	inst, err := tr.Start(ctx, core.ServerSpec{Name: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if inst.PID() != 0 {
		t.Errorf("PID = %d, want 0", inst.PID())
	}
	out := bufio.NewReader(inst.Stdout())
	for _, msg := range []string{"one", "two"} {
		if _, err := io.WriteString(inst.Stdin(), msg+"\n"); err != nil {
			t.Fatal(err)
		}
		line, err := out.ReadString('\n')
		if err != nil || line != "echo: "+msg+"\n" {
			t.Fatalf("answer = %q, %v", line, err)
		}
	}
	if isDone(inst) || inst.Err() != nil {
		t.Fatalf("before the exit: done %v, Err %v; want running, nil", isDone(inst), inst.Err())
	}
	if err := inst.Stop(time.Hour); err != nil {
		t.Fatalf("Stop = %v, want a clean exit", err)
	}
	if !isDone(inst) || inst.Err() != nil {
		t.Fatalf("after Stop: done %v, Err %v", isDone(inst), inst.Err())
	}
	if _, err := out.ReadString('\n'); err != io.EOF {
		t.Errorf("read after the exit = %v, want io.EOF", err)
	}
	if _, err := io.WriteString(inst.Stdin(), "late\n"); err == nil {
		t.Error("a write after the exit succeeded")
	}
	if err := inst.Kill(); err != nil {
		t.Errorf("Kill after a clean exit = %v, want its Err, nil", err)
	}
}

// TestStopKillsAfterTheGrace: a server that does not return when its stdin
// closes is killed when the grace runs out, exactly then, and ends as if by
// SIGKILL.
func TestStopKillsAfterTheGrace(t *testing.T) {
	leakcheck.Check(t)
	synctest.Test(t, func(t *testing.T) {
		inst := start(t, "stubborn", ignoresStdin)
		begin := time.Now()
		err := inst.Stop(3 * time.Second)
		if d := time.Since(begin); d != 3*time.Second {
			t.Errorf("Stop returned after %s, want the grace, 3s", d)
		}
		checkExit(t, err, &core.ExitError{Name: "stubborn", Code: -1, Signal: "SIGKILL"})
		if !isDone(inst) || inst.Err() != err {
			t.Errorf("after Stop: done %v, Err %v; want done and Stop's error", isDone(inst), inst.Err())
		}
	})
}

// TestKillUnblocksPendingIO: Kill ends a read of Stdout and a write to
// Stdin that are waiting on a server that neither writes nor reads.
func TestKillUnblocksPendingIO(t *testing.T) {
	leakcheck.Check(t)
	synctest.Test(t, func(t *testing.T) {
		inst := start(t, "mute", ignoresStdin)
		readErr := make(chan error, 1)
		go func() {
			_, err := inst.Stdout().Read(make([]byte, 1))
			readErr <- err
		}()
		writeErr := make(chan error, 1)
		go func() {
			_, err := inst.Stdin().Write([]byte("nobody reads this\n"))
			writeErr <- err
		}()
		synctest.Wait()
		if len(readErr)+len(writeErr) != 0 || isDone(inst) {
			t.Fatal("I/O returned, or the instance ended, before Kill")
		}
		err := inst.Kill()
		checkExit(t, err, &core.ExitError{Name: "mute", Code: -1, Signal: "SIGKILL"})
		if err := <-readErr; err != io.EOF {
			t.Errorf("pending read = %v, want io.EOF", err)
		}
		if err := <-writeErr; err == nil {
			t.Error("pending write succeeded")
		}
		if !isDone(inst) {
			t.Error("Done is open after Kill returned")
		}
	})
}

// TestExitStatus: how a server's return value becomes the instance's exit.
func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		name string
		ret  error
		want *core.ExitError
	}{
		{"error", errors.New("boom"), &core.ExitError{Name: "srv", Code: 1, Stderr: []string{"starting", "boom"}}},
		{"exit status", &core.ExitError{Code: 3}, &core.ExitError{Name: "srv", Code: 3, Stderr: []string{"starting"}}},
		{"signal", &core.ExitError{Code: -1, Signal: "SIGSEGV", Stderr: []string{"own"}}, &core.ExitError{Name: "srv", Code: -1, Signal: "SIGSEGV", Stderr: []string{"own"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakcheck.Check(t)
			inst := start(t, "srv", func(ctx context.Context, _ io.Reader, _ io.Writer) error {
				fmt.Fprintln(transporttest.Stderr(ctx), "starting")
				return tc.ret
			})
			<-inst.Done()
			checkExit(t, inst.Err(), tc.want)
			checkExit(t, inst.Stop(time.Second), tc.want)
			if _, err := inst.Stdout().Read(make([]byte, 1)); err != io.EOF {
				t.Errorf("read after the server returned = %v, want io.EOF", err)
			}
		})
	}
	t.Run("clean", func(t *testing.T) {
		inst := start(t, "srv", func(context.Context, io.Reader, io.Writer) error { return nil })
		<-inst.Done()
		if err := inst.Err(); err != nil {
			t.Errorf("Err = %v, want nil", err)
		}
	})
}

// TestStderrTail keeps the last TailLines lines, oldest first, with an
// unterminated last line.
func TestStderrTail(t *testing.T) {
	leakcheck.Check(t)
	release := make(chan struct{})
	inst := start(t, "chatty", func(ctx context.Context, _ io.Reader, _ io.Writer) error {
		w := transporttest.Stderr(ctx)
		for i := range 30 {
			fmt.Fprintf(w, "line %d\n", i)
		}
		io.WriteString(w, "no newline")
		close(release)
		<-ctx.Done()
		return nil
	})
	<-release
	got := inst.StderrTail()
	if len(got) != transporttest.TailLines || got[0] != "line 11" || got[len(got)-2] != "line 29" || got[len(got)-1] != "no newline" {
		t.Errorf("StderrTail = %q", got)
	}
	inst.Kill()
}

// TestConcurrentStopAndKill: Stop, Kill, Err, Done and StderrTail may be
// called from any goroutine, any number of times, and agree.
func TestConcurrentStopAndKill(t *testing.T) {
	leakcheck.Check(t)
	synctest.Test(t, func(t *testing.T) {
		inst := start(t, "stubborn", ignoresStdin)
		var wg sync.WaitGroup
		errs := make(chan error, 20)
		for i := range 20 {
			wg.Go(func() {
				inst.StderrTail()
				if i%2 == 0 {
					errs <- inst.Stop(time.Second)
				} else {
					errs <- inst.Kill()
				}
				<-inst.Done()
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != inst.Err() {
				t.Errorf("a Stop or Kill returned %v, Err is %v", err, inst.Err())
			}
		}
		checkExit(t, inst.Err(), &core.ExitError{Name: "stubborn", Code: -1, Signal: "SIGKILL"})
	})
}

func TestSpecAndStderrOutsideAServer(t *testing.T) {
	if _, ok := transporttest.Spec(context.Background()); ok {
		t.Error("Spec outside a server reported one")
	}
	if w := transporttest.Stderr(context.Background()); w != io.Discard {
		t.Errorf("Stderr outside a server = %v, want io.Discard", w)
	}
	got := make(chan core.ServerSpec, 1)
	spec := core.ServerSpec{Name: "env", Env: map[string]string{"TOKEN": "t"}}
	tr := &transporttest.Transport{Servers: map[string]transporttest.Server{"env": func(ctx context.Context, _ io.Reader, _ io.Writer) error {
		s, _ := transporttest.Spec(ctx)
		got <- s
		return nil
	}}}
	inst, err := tr.Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	<-inst.Done()
	if s := <-got; !reflect.DeepEqual(s, spec) {
		t.Errorf("Spec = %+v, want %+v", s, spec)
	}
}

// handshake connects a host-side jsonrpc.Conn to inst and sends initialize.
func handshake(ctx context.Context, inst core.Instance) (*jsonrpc.Conn, yep.InitializeResult, error) {
	conn := jsonrpc.NewConn(inst.Stdout(), inst.Stdin(), jsonrpc.Options{Closer: inst.Stdin()})
	var res yep.InitializeResult
	err := conn.Call(ctx, yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: yep.ProtocolVersion}, &res)
	return conn, res, err
}

// TestSDKServer serves an SDK server named after the spec: the handshake
// and a tool call go through, and closing stdin is a clean exit.
func TestSDKServer(t *testing.T) {
	leakcheck.Check(t)
	synctest.Test(t, func(t *testing.T) {
		inst := start(t, "greeter", transporttest.SDK(sdk.Info{Version: "1.2.3"}, func(s *sdk.Server) {
			s.Tool("greet", func(context.Context, *sdk.ToolCall) (yep.ToolResult, error) {
				return yep.ToolResult{Output: "hello"}, nil
			})
		}))
		ctx := context.Background()
		conn, res, err := handshake(ctx, inst)
		if err != nil || res.Name != "greeter" || res.Version != "1.2.3" {
			t.Fatalf("initialize = %+v, %v", res, err)
		}
		if err := conn.Notify(ctx, yep.MethodInitialized, yep.InitializedParams{}); err != nil {
			t.Fatal(err)
		}
		var out yep.ToolResult
		if err := conn.Call(ctx, yep.MethodToolCall, yep.ToolCallParams{Name: "greet"}, &out); err != nil || out.Output != "hello" {
			t.Fatalf("tool/call = %+v, %v", out, err)
		}
		conn.Close()
		if err := inst.Stop(time.Minute); err != nil {
			t.Errorf("Stop = %v, want a clean exit", err)
		}
		conn.Wait()
	})
}

// TestUnresponsive never answers: a call to it ends only with its
// context, and closing stdin ends it cleanly.
func TestUnresponsive(t *testing.T) {
	leakcheck.Check(t)
	synctest.Test(t, func(t *testing.T) {
		inst := start(t, "wedged", transporttest.Unresponsive)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		begin := time.Now()
		conn, _, err := handshake(ctx, inst)
		if !errors.Is(err, yep.ErrCancelled) || time.Since(begin) != 10*time.Second {
			t.Errorf("initialize = %v after %s, want cancelled after 10s", err, time.Since(begin))
		}
		conn.Close()
		if err := inst.Stop(time.Minute); err != nil {
			t.Errorf("Stop = %v, want a clean exit", err)
		}
		conn.Wait()
	})
}
