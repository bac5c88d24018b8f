package host

import (
	"testing"

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
