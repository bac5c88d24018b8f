// Package testservers builds and starts the capability servers that core's
// tests and benchmarks drive as real subprocesses: Go servers built from
// source with the go command, and scripts run by their interpreter.
package testservers

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"yolop.dev/core/jsonrpc"
)

// GoTool returns the go command that is running the tests.
func GoTool(t testing.TB) string {
	t.Helper()
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build test servers and was not found: %v", err)
	}
	return p
}

// Build compiles the main package pkg (an import path in this module, e.g.
// "yolop.dev/core/examples/echo") into out.
func Build(t testing.TB, pkg, out string, flags ...string) string {
	t.Helper()
	cmd := exec.Command(GoTool(t), append(append([]string{"build", "-o", out}, flags...), pkg)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// A Process is a started server with a JSON-RPC connection on its stdio.
type Process struct {
	Cmd  *exec.Cmd
	Conn *jsonrpc.Conn

	stdin  io.WriteCloser
	stderr *syncBuffer
	waited chan struct{}
	err    error
}

// Start starts argv with a JSON-RPC connection over its stdin and stdout,
// using opts (its Closer is set to the stdin pipe). The process is killed
// and reaped, and the connection closed and waited for, when the test
// ends.
func Start(t testing.TB, opts jsonrpc.Options, argv ...string) *Process {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	// An os.Pipe rather than StdoutPipe: Wait must not close the read end
	// under the connection's reader, which reads to the end of the stream
	// (EOF once the child and this side have closed the write end).
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = stdoutW
	p := &Process{Cmd: cmd, stdin: stdin, stderr: &syncBuffer{}, waited: make(chan struct{})}
	cmd.Stderr = p.stderr
	err = cmd.Start()
	stdoutW.Close()
	if err != nil {
		stdout.Close()
		t.Fatalf("starting %s: %v", argv[0], err)
	}
	opts.Closer = closers{stdin, stdout}
	p.Conn = jsonrpc.NewConn(stdout, stdin, opts)
	go func() {
		p.err = cmd.Wait()
		close(p.waited)
	}()
	t.Cleanup(func() {
		p.Conn.Close()
		select {
		case <-p.waited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-p.waited
		}
		p.Conn.Wait()
		if t.Failed() {
			t.Logf("stderr of %s:\n%s", argv[0], p.Stderr())
		}
	})
	return p
}

// CloseStdin closes the server's stdin: end of input.
func (p *Process) CloseStdin() error { return p.stdin.Close() }

// Wait waits for the process to exit, or for ctx, and returns how it
// ended.
func (p *Process) Wait(ctx context.Context) error {
	select {
	case <-p.waited:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stderr returns what the server wrote to stderr so far.
func (p *Process) Stderr() string { return p.stderr.String() }

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type closers []io.Closer

func (c closers) Close() error {
	for _, x := range c {
		x.Close()
	}
	return nil
}
