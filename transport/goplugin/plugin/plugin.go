// Package plugin serves a capability server over go-plugin, for a yolop
// host whose manifest names capabilityServer.transport "go-plugin"
// ([yolop.dev/transport/goplugin] is the host side). A Go author writes
// the server with the SDK as for stdio and changes one call in main:
//
//	func main() {
//		s := echoext.New(hclog.New(&hclog.LoggerOptions{Output: os.Stderr}))
//		if err := plugin.Serve(context.Background(), s, plugin.Options{}); err != nil {
//			fmt.Fprintln(os.Stderr, err)
//			os.Exit(1)
//		}
//	}
//
// What go-plugin adds over stdio: the magic-cookie handshake (the program
// refuses to run unless a yolop host started it), the protocol version,
// mutual TLS with certificates made for this one process (AutoMTLS), and
// on the host side a SHA-256 check of the executable before it is started
// (SecureConfig). YEP itself is unchanged: it runs over one gRPC stream,
// so the SDK server sees the same bytes it would read from stdin.
//
// The server's stderr stays its stderr: the host logs it and keeps its
// tail for crash messages exactly as for a stdio server. (go-plugin
// itself would redirect os.Stderr into a gRPC stream; Serve undoes that
// once the host connects.) Nothing may be printed to stdout before the
// handshake line, which go-plugin prints first.
package plugin

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"yolop.dev/core/sdk"
	"yolop.dev/transport/goplugin/internal/wire"
)

// Options configure [Serve] and [ServeStream]. The zero value is ready to
// use.
type Options struct {
	// Logger is go-plugin's own logger in the plugin. Nil means warnings
	// and errors only, to stderr.
	Logger hclog.Logger
	// FlushTimeout bounds how long the plugin waits, after its stream has
	// ended, for the host to receive its last bytes and hang up before it
	// exits anyway. Zero means 5s.
	FlushTimeout time.Duration
}

// Serve serves s over go-plugin until the YEP session ends: the host sends
// exit or closes its stream, asks go-plugin to shut the plugin down, or
// ctx ends. It returns nil then (ctx's error when ctx ended), or the
// error that broke the connection. Call it from main and exit afterwards.
//
// A program that was not started by a yolop host (no magic cookie, or
// another host's) is not a plugin run: go-plugin prints a note to stderr
// and exits with status 1.
func Serve(ctx context.Context, s *sdk.Server, o Options) error {
	return ServeStream(ctx, s.ServeConn, o)
}

// ServeStream is [Serve] for any YEP server: serve is given the host's
// byte stream (its "stdin") and the stream back (its "stdout"), and its
// context is cancelled when the host goes away or shuts the plugin down.
// The host's stream ends when serve returns; ServeStream then returns
// serve's error.
func ServeStream(ctx context.Context, serve func(ctx context.Context, r io.Reader, w io.Writer) error, o Options) error {
	if o.Logger == nil {
		o.Logger = hclog.New(&hclog.LoggerOptions{Name: "go-plugin", Output: os.Stderr, Level: hclog.Warn})
	}
	if o.FlushTimeout <= 0 {
		o.FlushTimeout = 5 * time.Second
	}
	h := &handler{serve: serve, stderr: os.Stderr, ended: make(chan struct{})}
	var srv atomic.Pointer[grpc.Server]
	served := make(chan struct{})
	go func() {
		defer close(served)
		goplugin.Serve(&goplugin.ServeConfig{
			HandshakeConfig: wire.Handshake,
			Plugins:         goplugin.PluginSet{wire.PluginName: &pluginSide{h: h}},
			GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
				s := grpc.NewServer(append(opts, grpc.MaxRecvMsgSize(wire.MaxFrame+64<<10))...)
				srv.Store(s)
				return s
			},
			Logger: o.Logger,
		})
	}()
	var err error
	select {
	case <-h.ended:
		err = h.err
		// Let the host read the stream's last bytes and its end: a
		// graceful stop flushes them, and finishes once the host, having
		// read the end, hangs up.
		if s := srv.Load(); s != nil {
			stopped := make(chan struct{})
			go func() { defer close(stopped); s.GracefulStop() }()
			t := time.NewTimer(o.FlushTimeout)
			select {
			case <-stopped:
			case <-t.C:
				s.Stop()
				<-stopped
			}
			t.Stop()
		}
	case <-served:
		// go-plugin stopped the server: the host asked it to shut down.
	case <-ctx.Done():
		err = ctx.Err()
	}
	if s := srv.Load(); s != nil {
		s.Stop()
	}
	<-served
	h.wg.Wait()
	if err == nil {
		err = h.servedErr()
	}
	return err
}

// pluginSide registers the YEP service with go-plugin's gRPC server.
type pluginSide struct {
	goplugin.NetRPCUnsupportedPlugin
	h *handler
}

func (p *pluginSide) GRPCServer(_ *goplugin.GRPCBroker, s *grpc.Server) error {
	s.RegisterService(&wire.ServiceDesc, p.h)
	return nil
}

func (p *pluginSide) GRPCClient(context.Context, *goplugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, errors.New("the YEP plugin has no client side in the plugin")
}

// handler serves the one YEP stream of this process.
type handler struct {
	serve   func(ctx context.Context, r io.Reader, w io.Writer) error
	stderr  *os.File // the process's own stderr, before go-plugin took it
	claimed atomic.Bool
	wg      sync.WaitGroup
	ended   chan struct{} // closed when the stream's serve has returned
	mu      sync.Mutex
	err     error
}

func (h *handler) servedErr() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// Stream implements [wire.StreamServer].
func (h *handler) Stream(st grpc.ServerStream) error {
	if !h.claimed.CompareAndSwap(false, true) {
		return status.Error(codes.FailedPrecondition, "this plugin serves one YEP stream, and it is taken")
	}
	h.wg.Add(1)
	defer h.wg.Done()
	// go-plugin points os.Stderr at a pipe it forwards over gRPC; put the
	// process's stderr back, so the host captures it as a stdio server's.
	os.Stderr = h.stderr
	r := &wire.Reader{Next: func() ([]byte, error) { return wire.Recv(st) }}
	w := &writer{st: st}
	err := h.serve(st.Context(), r, w)
	if errors.Is(err, context.Canceled) && st.Context().Err() != nil {
		err = nil // the host went away or shut the plugin down
	}
	h.mu.Lock()
	h.err = err
	h.mu.Unlock()
	close(h.ended)
	return nil
}

// writer sends what the server writes as stream messages. The SDK's
// connection writes one message at a time.
type writer struct{ st grpc.ServerStream }

func (w *writer) Write(b []byte) (int, error) {
	if err := wire.Send(w.st, b); err != nil {
		return 0, err
	}
	return len(b), nil
}
