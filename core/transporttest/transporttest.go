// Package transporttest provides an in-memory [core.Transport] for tests.
//
// A [Transport] runs each capability server it starts inside the test
// process: a [Server] function that reads the host's messages from one pipe
// and writes its own to another. Only the process boundary is missing. The
// server is a real YEP peer (an SDK server through [SDK], a bare
// jsonrpc.Conn, or raw bytes), and each [core.Instance] keeps the whole
// contract: Stop closes stdin and kills after the grace, Kill unblocks a
// pending read, Done and Err report the exit, StderrTail keeps what the
// server wrote to [Stderr], and PID is 0.
//
// Inside a testing/synctest bubble the servers run on the bubble's fake
// clock, which a subprocess cannot share. A test of a timeout, a backoff or
// a grace period is then exact, whatever the load of the machine:
//
//	synctest.Test(t, func(t *testing.T) {
//		tr := &transporttest.Transport{Servers: map[string]transporttest.Server{
//			"slow": transporttest.SDK(sdk.Info{}, func(s *sdk.Server) {
//				s.Tool("wait", func(ctx context.Context, _ *sdk.ToolCall) (yep.ToolResult, error) {
//					<-ctx.Done()
//					return yep.ToolResult{}, ctx.Err()
//				})
//			}),
//		}}
//		// Start a host.Session with tr; its timeouts now elapse at once.
//	})
//
// The pipes are unbuffered: a write blocks until the peer reads it, as a
// write to a full OS pipe does.
package transporttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core"
	"yolop.dev/core/sdk"
)

// A Server serves one instance. It reads the host's messages from stdin and
// writes its own to stdout until stdin ends, and then returns. When the
// instance is killed, ctx is cancelled and both pipes are closed, so a
// blocked read or write fails; the server must then return promptly, since
// Kill waits for it. [Stderr] and [Spec] read the instance's stderr and
// start spec from ctx.
//
// Returning nil is a clean exit. A *[core.ExitError] ends the instance with
// its Code and Signal; any other error ends it with exit status 1, its text
// written to stderr first, as a failing program prints its error. A panic
// is not recovered: it fails the test binary.
type Server func(ctx context.Context, stdin io.Reader, stdout io.Writer) error

// A Transport is a [core.Transport] that starts in-process servers over
// pipes, chosen by [core.ServerSpec.Name]. Its Start may be called
// concurrently, from inside or outside a synctest bubble; the goroutines of
// an instance belong to the bubble Start was called from.
type Transport struct {
	// Servers maps a ServerSpec.Name to the server started for it. Start
	// fails for a name it does not hold.
	Servers map[string]Server
}

// ErrNoServer is matched, with errors.Is, by the error of [Transport.Start]
// for a spec whose Name has no entry in Servers.
var ErrNoServer = errors.New("transporttest: no server of that name")

// TailLines is how many of the last stderr lines an instance keeps.
const TailLines = 20

// Start implements [core.Transport]. It fails when ctx is already done or
// the spec names no server; otherwise the server runs until it returns or
// the instance is stopped or killed, whatever becomes of ctx.
func (t *Transport) Start(ctx context.Context, spec core.ServerSpec) (core.Instance, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("starting %q: %w", spec.Name, err)
	}
	serve := t.Servers[spec.Name]
	if serve == nil {
		return nil, fmt.Errorf("starting %q: %w", spec.Name, ErrNoServer)
	}
	i := &instance{name: spec.Name, done: make(chan struct{}), stderr: &tail{}}
	i.stdinR, i.stdinW = io.Pipe()
	i.stdoutR, i.stdoutW = io.Pipe()
	sctx := context.WithValue(context.Background(), instanceKey{}, &serverEnv{spec: spec, stderr: i.stderr})
	sctx, i.cancel = context.WithCancel(sctx)
	go func() {
		err := serve(sctx, i.stdinR, i.stdoutW)
		// The process is gone: the host reads EOF, and its writes fail.
		i.stdoutW.Close()
		i.stdinR.Close()
		i.exit(err)
	}()
	return i, nil
}

type instanceKey struct{}

type serverEnv struct {
	spec   core.ServerSpec
	stderr io.Writer
}

// Stderr returns the stderr of the instance whose [Server] was given ctx.
// Lines written to it are kept for [core.Instance.StderrTail] and the exit
// error. For any other ctx it returns [io.Discard].
func Stderr(ctx context.Context) io.Writer {
	if env, ok := ctx.Value(instanceKey{}).(*serverEnv); ok {
		return env.stderr
	}
	return io.Discard
}

// Spec returns the spec the instance whose [Server] was given ctx was
// started with (its environment, say), and false for any other ctx.
func Spec(ctx context.Context) (core.ServerSpec, bool) {
	env, ok := ctx.Value(instanceKey{}).(*serverEnv)
	if !ok {
		return core.ServerSpec{}, false
	}
	return env.spec, true
}

// SDK returns a Server that serves a new [sdk.Server] for each start:
// created with info (an empty Name is the spec's name) and no logger, and
// given to build to register its tools, hooks, prompt and commands.
func SDK(info sdk.Info, build func(s *sdk.Server)) Server {
	return func(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
		info := info
		if info.Name == "" {
			spec, _ := Spec(ctx)
			info.Name = spec.Name
		}
		s := sdk.NewServer(info, sdk.Options{Logger: hclog.NewNullLogger()})
		if build != nil {
			build(s)
		}
		return s.ServeConn(ctx, stdin, stdout)
	}
}

// Unresponsive is a Server that reads every message and answers none, like
// a wedged server: an initialize sent to it never completes. It returns
// when stdin ends.
func Unresponsive(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	_, _ = io.Copy(io.Discard, stdin)
	return nil
}

// An instance is one running in-process server; it implements
// [core.Instance].
type instance struct {
	name            string
	stdinR, stdoutR *io.PipeReader
	stdinW, stdoutW *io.PipeWriter
	cancel          context.CancelFunc
	stderr          *tail
	done            chan struct{}
	mu              sync.Mutex
	exited, killed  bool
	err             error
}

// exit records how the server ended and closes done.
func (i *instance) exit(err error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	var xe *core.ExitError
	switch {
	case i.killed:
		i.err = &core.ExitError{Name: i.name, Code: -1, Signal: "SIGKILL", Stderr: i.stderr.snapshot()}
	case err == nil:
	case errors.As(err, &xe):
		e := *xe
		e.Name = i.name
		if e.Stderr == nil {
			e.Stderr = i.stderr.snapshot()
		}
		i.err = &e
	default:
		fmt.Fprintln(i.stderr, err)
		i.err = &core.ExitError{Name: i.name, Code: 1, Stderr: i.stderr.snapshot()}
	}
	i.exited = true
	i.cancel()
	close(i.done)
}

// Stdout implements [core.Instance]. Once the server has exited, reads
// return io.EOF.
func (i *instance) Stdout() io.Reader { return i.stdoutR }

// Stdin implements [core.Instance]. Closing it ends the server's stdin;
// writes after the server has exited fail with [io.ErrClosedPipe].
func (i *instance) Stdin() io.WriteCloser { return i.stdinW }

// Stop implements [core.Instance]: it closes stdin, waits up to grace for
// the server to return, then kills it. There is no signal to send in
// between: the kill is at once. It returns the same value as Err.
func (i *instance) Stop(grace time.Duration) error {
	_ = i.stdinW.Close()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-i.done:
		return i.Err()
	case <-t.C:
		return i.Kill()
	}
}

// Kill implements [core.Instance]: it cancels the server's ctx and closes
// both pipes, so that a pending read on either side returns, then waits
// for the server to return. A server killed before it returned ends as if
// by SIGKILL. It returns the same value as Err.
func (i *instance) Kill() error {
	i.mu.Lock()
	if !i.exited {
		i.killed = true
	}
	i.mu.Unlock()
	i.cancel()
	_ = i.stdinR.Close()
	_ = i.stdoutW.Close()
	<-i.done
	return i.Err()
}

// Done implements [core.Instance].
func (i *instance) Done() <-chan struct{} { return i.done }

// Err implements [core.Instance]: nil before Done is closed or after a
// clean exit, otherwise a *[core.ExitError] naming the exit status or
// SIGKILL, with the stderr tail.
func (i *instance) Err() error {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.err
}

// StderrTail implements [core.Instance]: the last [TailLines] lines
// written to [Stderr], oldest first.
func (i *instance) StderrTail() []string { return i.stderr.snapshot() }

// PID implements [core.Instance]: 0, as there is no process.
func (i *instance) PID() int { return 0 }

// A tail keeps the last TailLines lines written to it.
type tail struct {
	mu      sync.Mutex
	lines   []string
	partial []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.partial = append(t.partial, p...)
	for {
		line, rest, ok := bytes.Cut(t.partial, []byte("\n"))
		if !ok {
			break
		}
		t.lines = append(t.lines, strings.TrimSuffix(string(line), "\r"))
		if len(t.lines) > TailLines {
			t.lines = t.lines[len(t.lines)-TailLines:]
		}
		t.partial = rest
	}
	return len(p), nil
}

// snapshot returns the kept lines and an unterminated last line, or nil
// when nothing was written.
func (t *tail) snapshot() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]string(nil), t.lines...)
	if len(t.partial) > 0 {
		out = append(out, string(t.partial))
		if len(out) > TailLines {
			out = out[len(out)-TailLines:]
		}
	}
	return out
}
