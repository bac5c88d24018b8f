package logfire

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
)

// Version is the extension's version.
const Version = "0.1.0"

// Options configure a [Server]. The zero value reads the environment and
// logs to stderr.
type Options struct {
	// Logger receives the server's own logs. Nil means stderr at info.
	Logger hclog.Logger
	// Getenv reads the environment (the token, and the endpoint and
	// service name when the config has none). Nil means os.Getenv.
	Getenv func(string) string
	// Export tunes the export pipeline.
	Export ExportOptions
}

// A Server is the logfire capability server: an [sdk.Server] whose
// OnConfig builds the exporter and whose OnTrace folds events into spans.
type Server struct {
	sdk  *sdk.Server
	opts Options
	log  hclog.Logger

	mu   sync.Mutex
	pipe *pipeline
	fold *folder
}

// New returns the server, ready to serve.
func New(opts Options) *Server {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	log := opts.Logger
	if log == nil {
		log = hclog.New(&hclog.LoggerOptions{Name: "logfire", Output: os.Stderr, Level: hclog.Info})
	}
	s := &Server{opts: opts, log: log}
	s.sdk = sdk.NewServer(sdk.Info{Name: "logfire", Version: Version, Status: true, Log: true}, sdk.Options{Logger: log})
	s.sdk.OnConfig(s.configure)
	s.sdk.OnConfigChanged(func(ctx context.Context, raw json.RawMessage) (bool, error) {
		// The exporter is built from the config once: a change restarts
		// the server, which flushes what it has first.
		return true, nil
	})
	s.sdk.OnTrace(s.trace)
	return s
}

// configure builds the export pipeline from initialize.config.
func (s *Server) configure(raw json.RawMessage) error {
	st, err := resolve(raw, s.opts.Getenv)
	if err != nil {
		return err
	}
	p, err := newPipeline(st, Version, s.opts.Export, s.status, s.warn)
	if err != nil {
		return err
	}
	s.mu.Lock()
	old := s.pipe
	s.pipe = p
	s.fold = newFolder(p.provider.Tracer("yolop.dev/extensions/logfire"))
	s.mu.Unlock()
	if old != nil {
		old.shutdown(s.opts.Export.withDefaults().FlushTimeout)
	}
	auth := "no token"
	if st.token != "" {
		auth = "a token from $" + TokenEnv
	}
	s.log.Debug("exporting traces", "url", st.tracesURL, "service_name", st.serviceName, "auth", auth)
	return nil
}

func (s *Server) trace(ev yep.TraceEventParams) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fold != nil {
		s.fold.handle(ev)
	}
}

func (s *Server) status(text string) {
	if err := s.sdk.Status(text); err != nil && !errors.Is(err, sdk.ErrNotAdvertised) {
		s.log.Debug("status not sent", "error", err)
	}
}

func (s *Server) warn(msg string, kv ...any) { s.sdk.Log(yep.LogWarn, msg, kv...) }

// Serve serves the protocol over stdin and stdout (see [Server.ServeConn]).
func (s *Server) Serve(ctx context.Context) error {
	return s.finish(s.sdk.Serve(ctx))
}

// ServeConn serves the protocol over r and w until the host says exit,
// closes r or ctx ends. Then spans still open are ended with an error
// status (their *.completed never came) and everything is flushed, within
// Export.FlushTimeout.
func (s *Server) ServeConn(ctx context.Context, r io.Reader, w io.Writer) error {
	return s.finish(s.sdk.ServeConn(ctx, r, w))
}

func (s *Server) finish(serveErr error) error {
	s.mu.Lock()
	p, f := s.pipe, s.fold
	s.pipe, s.fold = nil, nil
	if f != nil {
		f.endAll(f.now(), "the connection to the host ended")
	}
	s.mu.Unlock()
	if p == nil {
		return serveErr
	}
	err := p.shutdown(s.opts.Export.withDefaults().FlushTimeout)
	q := p.queue
	s.log.Info("exporter stopped", "exported", q.Exported(), "dropped", q.Dropped(), "failed", q.Failed(), "unpaired_completions", f.unpairedCompletions)
	if err != nil {
		s.log.Warn("the final flush did not finish in time; the spans still queued are lost", "timeout", s.opts.Export.withDefaults().FlushTimeout, "error", p.health.redact(err.Error()))
	}
	return serveErr
}

// Stats are the export counters of the running pipeline.
type Stats struct {
	Exported, Dropped, Failed int64
}

// Stats returns the export counters; zero before the handshake.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pipe == nil {
		return Stats{}
	}
	q := s.pipe.queue
	return Stats{Exported: q.Exported(), Dropped: q.Dropped(), Failed: q.Failed()}
}
