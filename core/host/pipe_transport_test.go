package host

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/sdk"
)

// pipeTransport runs capability servers inside the test process, each
// over a pair of in-memory pipes. Inside a testing/synctest bubble they run
// on the bubble's fake clock, which a subprocess cannot share: a test of
// timeouts is then exact, whatever the machine's load. The servers are
// real YEP peers (the SDK, or a bare jsonrpc.Conn); only the process
// boundary is missing, and the exec tests cover that.
type pipeTransport struct {
	// servers serve one connection each, keyed by ServerSpec.Name, until
	// r ends or ctx is cancelled.
	servers map[string]func(ctx context.Context, r io.Reader, w io.Writer) error
}

type pipeInstance struct {
	stdinR   *io.PipeReader
	stdinW   *io.PipeWriter
	stdoutR  *io.PipeReader
	stdoutW  *io.PipeWriter
	cancel   context.CancelFunc
	done     chan struct{}
	err      error
	killOnce sync.Once
}

func (t pipeTransport) Start(ctx context.Context, spec core.ServerSpec) (core.Instance, error) {
	serve := t.servers[spec.Name]
	if serve == nil {
		return nil, fmt.Errorf("pipeTransport: no server %q", spec.Name)
	}
	i := &pipeInstance{done: make(chan struct{})}
	i.stdinR, i.stdinW = io.Pipe()
	i.stdoutR, i.stdoutW = io.Pipe()
	sctx, cancel := context.WithCancel(context.Background())
	i.cancel = cancel
	go func() {
		err := serve(sctx, i.stdinR, i.stdoutW)
		i.stdoutW.Close()
		i.stdinR.Close()
		if err != nil && sctx.Err() == nil {
			i.err = &core.ExitError{Name: spec.Name, Code: 1, Stderr: []string{err.Error()}}
		}
		close(i.done)
	}()
	return i, nil
}

func (i *pipeInstance) Stdout() io.Reader     { return i.stdoutR }
func (i *pipeInstance) Stdin() io.WriteCloser { return i.stdinW }
func (i *pipeInstance) Done() <-chan struct{} { return i.done }
func (i *pipeInstance) Err() error            { <-i.done; return i.err }
func (i *pipeInstance) StderrTail() []string  { return nil }
func (i *pipeInstance) PID() int              { return 0 }

func (i *pipeInstance) Kill() error {
	i.killOnce.Do(func() {
		i.cancel()
		i.stdinR.Close()
		i.stdoutW.Close()
	})
	<-i.done
	return nil
}

func (i *pipeInstance) Stop(grace time.Duration) error {
	i.stdinW.Close()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-i.done:
	case <-t.C:
		i.Kill()
	}
	return i.err
}

// sdkServer returns a server function serving s, built fresh per start.
func sdkServer(build func(s *sdk.Server)) func(ctx context.Context, r io.Reader, w io.Writer) error {
	return func(ctx context.Context, r io.Reader, w io.Writer) error {
		s := sdk.NewServer(sdk.Info{Name: "inproc"}, sdk.Options{Logger: hclog.NewNullLogger()})
		build(s)
		return s.ServeConn(ctx, r, w)
	}
}

// wedgedServer reads requests and never answers any of them.
func wedgedServer(ctx context.Context, r io.Reader, w io.Writer) error {
	conn := jsonrpc.NewConn(r, w, jsonrpc.Options{
		Closer: r.(io.Closer),
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}),
	})
	select {
	case <-conn.Done():
	case <-ctx.Done():
	}
	conn.Close()
	conn.Wait()
	return nil
}
