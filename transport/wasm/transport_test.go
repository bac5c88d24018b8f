package wasm_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"yolop.dev/core"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/yep"
	"yolop.dev/transport/wasm"
)

// TestEchoOverConnection runs the SDK's echo example as a guest and drives
// it through a real core/jsonrpc connection: the handshake, a tool call, a
// streamed count, a count cancelled mid-stream, shutdown and a clean end.
func TestEchoOverConnection(t *testing.T) {
	tr := newTransport(t, wasm.Options{})
	inst := start(t, tr, "echo", echoWasm, nil)
	if inst.PID() != 0 {
		t.Errorf("PID = %d, want 0 for a guest", inst.PID())
	}
	c := connect(t, inst, nil)

	if out := c.mustCall("echo", map[string]any{"text": "hello, wasm"}); out != "hello, wasm" {
		t.Errorf("echo = %q", out)
	}

	var updates []string
	out, err := c.callCtx(context.Background(), "count", map[string]any{"n": 4, "delay_ms": 1}, func(u string) { updates = append(updates, u) })
	if err != nil || out != "counted to 4" {
		t.Fatalf("count = %q, %v", out, err)
	}
	if want := []string{"1", "2", "3", "4"}; !slices.Equal(updates, want) {
		t.Errorf("updates = %v, want %v", updates, want)
	}

	// Cancel after the first update: the call resolves cancelled, and the
	// guest, which watches its context between ticks, stays usable.
	ctx, cancel := context.WithCancel(context.Background())
	_, err = c.callCtx(ctx, "count", map[string]any{"n": 100000, "delay_ms": 1}, func(string) { cancel() })
	if !errors.Is(err, yep.ErrCancelled) {
		t.Fatalf("cancelled count: %v, want ErrCancelled", err)
	}
	if out := c.mustCall("echo", map[string]any{"text": "after cancel"}); out != "after cancel" {
		t.Errorf("echo after cancel = %q", out)
	}

	if err := c.shutdown(); err != nil {
		t.Fatalf("clean shutdown: %v", err)
	}
	if err := inst.Err(); err != nil {
		t.Errorf("Err after a clean exit = %v, want nil", err)
	}
}

// TestStopKillContract checks the Instance contract: Stop, Kill, Done and
// Err from many goroutines at once, a pending Stdout read unblocked, and
// writes after the end failing.
func TestStopKillContract(t *testing.T) {
	tr := newTransport(t, wasm.Options{})
	for _, how := range []string{"kill", "stop"} {
		t.Run(how, func(t *testing.T) {
			inst := start(t, tr, "echo", echoWasm, nil)
			readErr := make(chan error, 1)
			go func() {
				_, err := io.ReadAll(inst.Stdout())
				readErr <- err
			}()
			var wg sync.WaitGroup
			errs := make([]error, 8)
			for i := range errs {
				wg.Go(func() {
					switch {
					case how == "kill" || i%2 == 1:
						errs[i] = inst.Kill()
					default:
						errs[i] = inst.Stop(time.Millisecond)
					}
					<-inst.Done()
					if !errors.Is(inst.Err(), errs[i]) {
						t.Errorf("Err = %v, but Stop/Kill returned %v", inst.Err(), errs[i])
					}
				})
			}
			within(t, "Stop and Kill", wg.Wait)
			select {
			case err := <-readErr:
				if err != nil {
					t.Errorf("pending Stdout read: %v, want io.EOF (nil from ReadAll)", err)
				}
			case <-time.After(hangGuard):
				t.Fatal("a pending Stdout read was not unblocked")
			}
			// The echo server exits when its stdin closes, so Stop may
			// see a clean end; Kill from the first caller is a kill.
			var ee *core.ExitError
			if err := inst.Err(); err != nil && (!errors.As(err, &ee) || ee.Signal != wasm.SignalKill || ee.Code != -1 || ee.Name != "echo") {
				t.Errorf("Err = %#v, want nil or an ExitError with Signal %s", err, wasm.SignalKill)
			}
			if how == "kill" && inst.Err() == nil {
				t.Errorf("Err after Kill of a running guest = nil, want SIGKILL")
			}
			if _, err := inst.Stdin().Write([]byte("{}\n")); err == nil {
				t.Error("a write to stdin after the end succeeded")
			}
		})
	}
}

// TestStopClosesStdin checks that Stop lets a guest end on its own: the SDK
// server exits when its stdin closes, within the grace.
func TestStopClosesStdin(t *testing.T) {
	tr := newTransport(t, wasm.Options{})
	inst := start(t, tr, "echo", echoWasm, nil)
	connect(t, inst, nil)
	if err := inst.Stop(hangGuard); err != nil {
		t.Fatalf("Stop with a long grace: %v, want a clean end", err)
	}
}

// TestExitCodes checks that exit(n) is reported as a process's would be.
func TestExitCodes(t *testing.T) {
	tr := newTransport(t, wasm.Options{})
	inst := start(t, tr, "quitter", guestWasm, nil)
	c := connect(t, inst, nil)
	_, err := c.call("exit", map[string]any{"code": 3})
	var ce *jsonrpc.ClosedError
	if !errors.As(err, &ce) {
		t.Fatalf("call that exits: %v, want a ClosedError", err)
	}
	waitDone(t, inst, "exit(3)")
	var ee *core.ExitError
	if !errors.As(inst.Err(), &ee) || ee.Code != 3 || ee.Signal != "" || ee.Name != "quitter" {
		t.Fatalf("Err = %#v, want an ExitError with Code 3", inst.Err())
	}
	if !slices.Contains(ee.Stderr, "exiting with status 3") {
		t.Errorf("stderr tail %q lacks the guest's last line", ee.Stderr)
	}
	if msg := inst.Err().Error(); !strings.Contains(msg, `extension "quitter" exited (exit status 3)`) {
		t.Errorf("message %q", msg)
	}
}

// TestStartErrors checks that a spec Start cannot run fails with an error
// that names the extension, the file and the fix.
func TestStartErrors(t *testing.T) {
	tr := newTransport(t, wasm.Options{})
	pkg := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(pkg, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	guest, err := os.ReadFile(echoWasm)
	if err != nil {
		t.Fatal(err)
	}
	write("text.wasm", []byte("#!/bin/sh\necho hello\n"))
	write("empty.wasm", nil)
	write("truncated.wasm", guest[:len(guest)/3])
	write("header.wasm", []byte("\x00asm"))
	write("component.wasm", []byte("\x00asm\x0d\x00\x01\x00"))
	write("library.wasm", []byte("\x00asm\x01\x00\x00\x00")) // valid, empty: no _start
	if err := os.Mkdir(filepath.Join(pkg, "dir.wasm"), 0o755); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, command string
		spec          core.ServerSpec
		want          error
		mention       []string
	}{
		{name: "no name", spec: core.ServerSpec{Command: "x.wasm"}, want: wasm.ErrNoName},
		{name: "no module", want: wasm.ErrNoModule},
		{name: "missing", command: "missing.wasm", want: wasm.ErrModuleNotFound, mention: []string{"missing.wasm", "GOOS=wasip1"}},
		{name: "outside", command: "../escape.wasm", want: wasm.ErrModuleOutsidePackage},
		{name: "text", command: "text.wasm", want: wasm.ErrNotWasm, mention: []string{"text.wasm", "not a WebAssembly module", "magic"}},
		{name: "empty", command: "empty.wasm", want: wasm.ErrNotWasm, mention: []string{"empty.wasm", "not a WebAssembly module", "empty"}},
		{name: "header only", command: "header.wasm", want: wasm.ErrNotWasm, mention: []string{"header.wasm", "not a WebAssembly module", "truncated"}},
		{name: "truncated", command: "truncated.wasm", want: wasm.ErrNotWasm, mention: []string{"truncated.wasm", "not a WebAssembly module"}},
		{name: "component", command: "component.wasm", want: wasm.ErrNotWasm, mention: []string{"component.wasm", "version"}},
		{name: "library", command: "library.wasm", want: wasm.ErrNotCommand, mention: []string{"library.wasm", "_start"}},
		{name: "directory", command: "dir.wasm", want: wasm.ErrNotWasm, mention: []string{"dir.wasm", "regular file"}},
		{name: "env", command: "text.wasm", spec: core.ServerSpec{Env: map[string]string{"A=B": "x"}}, want: wasm.ErrInvalidEnv},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			if spec.Name == "" && tc.want != wasm.ErrNoName {
				spec.Name = "broken"
			}
			if spec.Command == "" {
				spec.Command = tc.command
			}
			spec.PackageDir = pkg
			inst, err := tr.Start(context.Background(), spec)
			if err == nil {
				inst.Kill()
				t.Fatal("Start succeeded")
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Start: %v, want %v", err, tc.want)
			}
			msg := err.Error()
			if tc.want != wasm.ErrNoName && !strings.Contains(msg, `extension "broken"`) {
				t.Errorf("error %q does not name the extension", msg)
			}
			for _, m := range tc.mention {
				if !strings.Contains(msg, m) {
					t.Errorf("error %q does not mention %q", msg, m)
				}
			}
		})
	}
}

// TestModuleRelativeToPackage checks that a relative Command names a file
// in the package directory.
func TestModuleRelativeToPackage(t *testing.T) {
	pkg := t.TempDir()
	guest, err := os.ReadFile(echoWasm)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(pkg, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "bin", "echo.wasm"), guest, 0o644); err != nil {
		t.Fatal(err)
	}
	tr := newTransport(t, wasm.Options{})
	inst, err := tr.Start(context.Background(), core.ServerSpec{Name: "echo", Command: "bin/echo.wasm", PackageDir: pkg})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Kill()
	c := connect(t, inst, nil)
	if out := c.mustCall("echo", map[string]any{"text": "relative"}); out != "relative" {
		t.Errorf("echo = %q", out)
	}
}

// TestStderrLogged checks that stderr lines reach the logger under the
// extension's name, are kept as a tail, and are redacted.
func TestStderrLogged(t *testing.T) {
	log, buf := captureLogger()
	tr := newTransport(t, wasm.Options{Logger: log, StderrLines: 3})
	const secret = "s3cr3t-value-42"
	inst := start(t, tr, "talker", guestWasm, map[string]string{"GUEST_TOKEN": secret})
	c := connect(t, inst, nil)
	c.mustCall("stderr", map[string]any{"n": 5})
	if err := c.shutdown(); err != nil {
		t.Fatal(err)
	}
	tail := inst.StderrTail()
	if len(tail) != 3 || tail[2] != "line 4 token=[REDACTED]" {
		t.Errorf("tail = %q, want the last 3 lines, redacted", tail)
	}
	logs := buf.String()
	if !strings.Contains(logs, "host.talker: line 0 token=[REDACTED]") {
		t.Errorf("stderr not logged under the extension's name:\n%s", logs)
	}
	if strings.Contains(logs, secret) {
		t.Errorf("a secret reached the log:\n%s", logs)
	}
}

// TestGarbageOnStdout checks that lines that are not JSON on a guest's
// stdout are the jsonrpc layer's to skip: the call still succeeds.
func TestGarbageOnStdout(t *testing.T) {
	log, buf := captureLogger()
	tr := newTransport(t, wasm.Options{})
	inst := start(t, tr, "noisy", guestWasm, nil)
	c := connect(t, inst, log)
	if out := c.mustCall("garbage", nil); out != "after garbage" {
		t.Errorf("garbage = %q", out)
	}
	if out := c.mustCall("echo", map[string]any{"text": "still here"}); out != "still here" {
		t.Errorf("echo = %q", out)
	}
	if !strings.Contains(buf.String(), "not JSON") {
		t.Errorf("the skipped lines were not logged:\n%s", buf.String())
	}
}

// TestDroppedInstanceIsClosed checks the safety net: an instance whose
// handle and streams become unreachable without Stop or Kill is closed,
// with a warning that names the extension.
func TestDroppedInstanceIsClosed(t *testing.T) {
	log, buf := captureLogger()
	tr := newTransport(t, wasm.Options{Logger: log})
	inst, err := tr.Start(context.Background(), core.ServerSpec{Name: "forgotten", Command: echoWasm})
	if err != nil {
		t.Fatal(err)
	}
	done := inst.Done() // the channel does not keep the handle reachable
	inst = nil
	deadline := time.After(hangGuard)
	for ended := false; !ended; {
		runtime.GC()
		select {
		case <-done:
			ended = true
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			t.Fatal("a dropped instance was not closed")
		}
	}
	if !strings.Contains(buf.String(), "host.forgotten: guest instance was dropped without Stop or Kill") {
		t.Errorf("no warning naming the extension:\n%s", buf.String())
	}
}

// TestTransportClose checks that Close kills what still runs, that Start
// fails afterwards, and that Close may be called again.
func TestTransportClose(t *testing.T) {
	tr := wasm.New(wasm.Options{CacheDir: sharedCache})
	inst, err := tr.Start(context.Background(), core.ServerSpec{Name: "echo", Command: echoWasm})
	if err != nil {
		t.Fatal(err)
	}
	within(t, "Close", func() { tr.Close() })
	waitDone(t, inst, "Close")
	var ee *core.ExitError
	if !errors.As(inst.Err(), &ee) || ee.Signal != wasm.SignalKill {
		t.Errorf("an instance running at Close ended with %v, want SIGKILL", inst.Err())
	}
	if _, err := tr.Start(context.Background(), core.ServerSpec{Name: "echo", Command: echoWasm}); !errors.Is(err, wasm.ErrClosed) {
		t.Errorf("Start after Close: %v, want ErrClosed", err)
	}
	tr.Close()
}
