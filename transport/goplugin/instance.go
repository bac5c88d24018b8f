package goplugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"yolop.dev/core"
	"yolop.dev/transport/goplugin/internal/wire"
	"yolop.dev/transport/stdio"
)

// streamEndWait is how long a read that found the end of the YEP stream
// waits for the plugin process to exit before it returns io.EOF, so that,
// as over stdio, the end of the server's output means the server is gone
// (and a host that kills the instance on EOF does not kill a plugin in
// the middle of its clean exit).
const streamEndWait = 2 * time.Second

// An Instance is one running plugin; it implements [core.Instance]. Its
// process is a transport/stdio instance, so Done, Err, StderrTail and PID
// mean what they mean for a stdio server; Stdout and Stdin are the two
// directions of the YEP stream.
type Instance struct {
	name   string
	client *goplugin.Client
	proc   *stdio.Instance
	conn   *grpc.ClientConn
	stream grpc.ClientStream
	cancel context.CancelFunc // ends the stream
	out    *wire.Reader
	in     *sender
	killed atomic.Bool
	end    *ender
}

var _ core.Instance = (*Instance)(nil)

// ender is what the instance's end needs, apart from the handle, so the
// kill-on-drop cleanup can run it.
type ender struct {
	log    hclog.Logger
	runner *procRunner
	conn   *grpc.ClientConn
	client *goplugin.Client
	proc   *stdio.Instance
	cancel context.CancelFunc
	once   sync.Once
}

func newInstance(log hclog.Logger, name string, r *procRunner, client *goplugin.Client, proc *stdio.Instance, conn *grpc.ClientConn, stream grpc.ClientStream, cancel context.CancelFunc) *Instance {
	i := &Instance{name: name, client: client, proc: proc, conn: conn, stream: stream, cancel: cancel,
		in:  &sender{name: name, stream: stream},
		end: &ender{log: log, runner: r, conn: conn, client: client, proc: proc, cancel: cancel}}
	i.out = &wire.Reader{Next: i.next}
	runtime.AddCleanup(i, (*ender).abandon, i.end)
	return i
}

// Stdout implements [core.Instance]: the plugin's side of the YEP stream.
// Once the stream has ended, reads return io.EOF (after the process has
// exited, or streamEndWait).
func (i *Instance) Stdout() io.Reader { return i.out }

// Stdin implements [core.Instance]: the host's side of the YEP stream.
// Closing it ends the plugin's input, as closing a stdio server's stdin
// does; writes after that, or after the plugin has gone, fail.
func (i *Instance) Stdin() io.WriteCloser { return i.in }

// Stop implements [core.Instance]: it closes the host's side of the
// stream and waits up to grace for the plugin to exit; then it stops it as
// go-plugin does (its controller's Shutdown, two seconds), and then with
// the stdio transport's staged stop (SIGTERM to the process group,
// TermGrace, SIGKILL). It returns once the process is
// reaped and every goroutine of the instance, go-plugin's included, has
// finished, with the same value as Err.
func (i *Instance) Stop(grace time.Duration) error {
	_ = i.in.Close()
	t := time.NewTimer(grace)
	select {
	case <-i.proc.Done():
	case <-t.C:
	}
	t.Stop()
	return i.end.finish()
}

// Kill implements [core.Instance]: it sends SIGKILL to the plugin's
// process group and returns, with the same value as Err, once the process
// is reaped and every goroutine of the instance has finished.
func (i *Instance) Kill() error {
	i.killed.Store(true)
	// The signal goes first: cancelling the stream first let a plugin see
	// its stream end and exit 0 before SIGKILL reached it, and Kill then
	// reported a clean exit (a CI run caught it in the conformance suite).
	_ = i.proc.Kill()
	i.cancel()
	return i.end.finish()
}

// Done implements [core.Instance].
func (i *Instance) Done() <-chan struct{} { return i.proc.Done() }

// Err implements [core.Instance]: nil before Done is closed or after a
// clean exit, otherwise a *[core.ExitError] with the exit code or signal
// and the stderr tail.
func (i *Instance) Err() error { return i.proc.Err() }

// StderrTail implements [core.Instance]: the plugin's last stderr lines,
// capped and redacted as the stdio transport logs them.
func (i *Instance) StderrTail() []string { return i.proc.StderrTail() }

// PID implements [core.Instance].
func (i *Instance) PID() int { return i.proc.PID() }

// OwnPIDNamespace reports whether the plugin runs as the init of a PID
// namespace of its own; see stdio.Instance.OwnPIDNamespace.
func (i *Instance) OwnPIDNamespace() bool { return i.proc.OwnPIDNamespace() }

// next returns the next chunk of the plugin's output.
func (i *Instance) next() ([]byte, error) {
	b, err := wire.Recv(i.stream)
	if err == nil {
		return b, nil
	}
	// The stream has ended. Hang up, so that a plugin that ended it
	// cleanly can finish its graceful stop and exit, and give the process
	// a moment to do so.
	_ = i.conn.Close()
	t := time.NewTimer(streamEndWait)
	select {
	case <-i.proc.Done():
	case <-t.C:
	}
	t.Stop()
	if errors.Is(err, io.EOF) || i.killed.Load() || status.Code(err) == codes.Canceled || isDone(i.proc) {
		return nil, io.EOF
	}
	return nil, fmt.Errorf("extension %q: the go-plugin stream broke: %w", i.name, err)
}

// finish ends the instance once: a plugin still running is stopped the
// way go-plugin's own Client.Kill stops one (its controller's Shutdown
// RPC, two seconds, then the runner's kill: here the stdio transport's
// staged stop), then the reap and the wait for every goroutine.
//
// It does not call Client.Kill itself: for a plugin that has already
// exited, that dials it to send the Shutdown and leaks the connection
// when the dial fails (go-plugin v1.8.0, newGRPCClient).
func (e *ender) finish() error {
	e.once.Do(func() {
		e.cancel()
		if !isDone(e.proc) {
			ctx, cancel := context.WithTimeout(context.Background(), shutdownWait)
			_ = e.conn.Invoke(ctx, controllerShutdown, &emptypb.Empty{}, &emptypb.Empty{})
			cancel()
			t := time.NewTimer(shutdownWait)
			select {
			case <-e.proc.Done():
			case <-t.C:
				e.log.Debug("plugin did not exit after go-plugin's shutdown; stopping its process", "wait", shutdownWait)
				_ = e.proc.Stop(0)
			}
			t.Stop()
		}
		_ = e.conn.Close()
		_ = e.proc.Kill() // reaped by now: waits for the stdio goroutines
		waitClientExited(e.log, e.client)
		e.runner.removeSocketDir()
	})
	return e.proc.Err()
}

// shutdownWait is how long a plugin gets to exit after go-plugin's
// Shutdown, as go-plugin's Client.Kill gives it.
const shutdownWait = 2 * time.Second

// controllerShutdown is go-plugin's controller method that stops a
// plugin's gRPC server, which ends its Serve. Its messages are
// google.protobuf.Empty on the wire.
const controllerShutdown = "/plugin.GRPCController/Shutdown"

// waitClientExited waits for go-plugin's client goroutines, which end on
// their own once the process is reaped and its stdout has ended; Exited
// is set by the last of them to matter.
func waitClientExited(log hclog.Logger, c *goplugin.Client) {
	deadline := time.Now().Add(time.Minute)
	for d := time.Millisecond; !c.Exited(); d = min(2*d, 20*time.Millisecond) {
		if time.Now().After(deadline) {
			log.Warn("go-plugin's client did not notice the plugin's exit within a minute")
			return
		}
		time.Sleep(d)
	}
}

// abandon is the kill-on-drop safety net, run by the runtime when the
// Instance handle and its streams have become unreachable without Stop
// or Kill. It must not block.
func (e *ender) abandon() {
	if !isDone(e.proc) {
		e.log.Warn("plugin instance was dropped without Stop or Kill; killing it (the owner must stop its instances)", "pid", e.proc.PID())
	}
	go func() {
		_ = e.proc.Kill()
		_ = e.finish()
	}()
}

func isDone(p *stdio.Instance) bool {
	select {
	case <-p.Done():
		return true
	default:
		return false
	}
}

// sender is the host's side of the stream. Writes come from one writer at
// a time (the JSON-RPC connection's write lock); Close may come from any
// goroutine, during a write too: gRPC forbids CloseSend concurrently with
// SendMsg, so a Close during a write is done by the writer when its write
// returns.
type sender struct {
	name   string
	stream grpc.ClientStream

	mu        sync.Mutex
	writing   bool
	closed    bool
	closeSent bool
}

func (s *sender) Write(b []byte) (int, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return 0, fmt.Errorf("extension %q: write to a closed stream: %w", s.name, io.ErrClosedPipe)
	}
	s.writing = true
	s.mu.Unlock()
	err := wire.Send(s.stream, b)
	s.mu.Lock()
	s.writing = false
	if s.closed && !s.closeSent {
		s.closeSent = true
		_ = s.stream.CloseSend()
	}
	s.mu.Unlock()
	if err != nil {
		return 0, fmt.Errorf("extension %q: writing to the go-plugin stream: %w (%w)", s.name, io.ErrClosedPipe, err)
	}
	return len(b), nil
}

func (s *sender) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if !s.writing {
		s.closeSent = true
		_ = s.stream.CloseSend()
	}
	return nil
}
