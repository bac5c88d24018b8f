package host

import (
	"context"
	"io"
	"testing"

	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/sdk"
	"yolop.dev/core/transporttest"
)

// newMemSession is a session whose extensions run in-process through the
// in-memory transport, one server per grant name. Inside a synctest bubble
// they share the bubble's fake clock, so a test of a timeout is exact
// whatever the machine's load; the exec tests cover the process boundary.
// The session is closed when the test (or the bubble) ends.
func newMemSession(t *testing.T, opts SessionOptions, servers map[string]transporttest.Server) *Session {
	t.Helper()
	opts.Transport = &transporttest.Transport{Servers: servers}
	s := NewSession(opts)
	t.Cleanup(s.Close)
	return s
}

// sdkServer serves an SDK server configured by build, new at each start.
func sdkServer(build func(s *sdk.Server)) transporttest.Server {
	return transporttest.SDK(sdk.Info{}, build)
}

// rawServer serves h over a bare connection, for answers the SDK would
// never send (another protocol major, an unknown decision) and for
// crashes. h may call exit to end the server as a crashing process ends:
// its stdout closes at once, and the instance exits with err.
func rawServer(h func(ctx context.Context, req *jsonrpc.Request, exit func(err error)) (any, error)) transporttest.Server {
	return func(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
		exitc := make(chan error, 1)
		exit := func(err error) {
			select {
			case exitc <- err:
			default:
			}
		}
		conn := jsonrpc.NewConn(stdin, stdout, jsonrpc.Options{
			Closer: stdin.(io.Closer),
			Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
				return h(ctx, req, exit)
			}),
		})
		var err error
		select {
		case <-conn.Done():
		case <-ctx.Done():
		case err = <-exitc:
			stdout.(io.Closer).Close() // nothing more reaches the host
		}
		conn.Close()
		conn.Wait()
		return err
	}
}
