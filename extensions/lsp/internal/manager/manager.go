// Package manager is the data plane of the lsp extension: it keeps one warm
// language server per language for the workspace root, started lazily on
// the first file of its extensions, restarted with backoff after a crash,
// re-rooted when the workspace changes, and stopped — with its whole
// process group — on shutdown.
//
// Server processes run through the stdio transport (yolop.dev/transport/stdio):
// each in its own process group with a parent-death signal, stopped in
// stages (close stdin, SIGTERM, SIGKILL) and always reaped.
package manager

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core"
	"yolop.dev/extensions/lsp/internal/client"
	"yolop.dev/extensions/lsp/internal/protocol"
	"yolop.dev/transport/stdio"
)

// Options tune a [Manager]. Every field's zero value is a sensible default.
type Options struct {
	// Logger receives manager and server logs. Nil means no logging.
	Logger hclog.Logger
	// OnStatus is called with the new status text whenever it changes
	// ("" when healthy, "degraded: gopls not found — …" otherwise).
	OnStatus func(text string)
	// BackoffBase is the wait before the first restart after a crash; it
	// doubles per consecutive crash. Zero means 500ms.
	BackoffBase time.Duration
	// BackoffMax caps the wait. Zero means 30s.
	BackoffMax time.Duration
	// StableAfter is how long a server must run before a crash no longer
	// counts as consecutive. Zero means one minute.
	StableAfter time.Duration
	// StopGrace is how long a stopping server may take to exit after
	// shutdown/exit before it is terminated. Zero means 2s.
	StopGrace time.Duration
	// Encodings are the position encodings offered to servers. Nil means
	// UTF-8 then UTF-16.
	Encodings []protocol.Encoding
	// ApplyEdit serves a server's workspace/applyEdit request. Nil refuses
	// it.
	ApplyEdit func(ctx context.Context, h *Handle, edit protocol.WorkspaceEdit) protocol.ApplyWorkspaceEditResult
	// ScanInterval is the least time between two scans of the workspace
	// for files changed on disk behind the servers' back. Zero means 1s;
	// negative disables scanning.
	ScanInterval time.Duration
	// MaxScanFiles stops scanning a workspace with more source files than
	// this. Zero means 20000.
	MaxScanFiles int
}

// A Handle is a running server and the client speaking to it.
type Handle struct {
	// Key is the server's config key, e.g. "go".
	Key string
	// Name is the executable's base name, e.g. "gopls".
	Name string
	// Client speaks to the server.
	Client *client.Client

	inst    core.Instance
	scanner *scanner
	settled atomic.Bool
}

// PID returns the server's process id.
func (h *Handle) PID() int { return h.inst.PID() }

// A Manager owns the language servers of one workspace root. Its methods
// are safe for concurrent use.
type Manager struct {
	opts      Options
	log       hclog.Logger
	transport *stdio.Transport

	mu       sync.Mutex
	root     string
	cfg      Config
	servers  map[string]*server
	closed   bool
	degraded map[string]string // key → status text
	status   string
}

type server struct {
	key       string
	h         *Handle
	starting  chan struct{}
	crashes   int
	lastCrash time.Time
	startedAt time.Time
}

// New returns a manager for root (absolute) with cfg. No server starts
// until a file needs one.
func New(root string, cfg Config, opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.BackoffBase <= 0 {
		opts.BackoffBase = 500 * time.Millisecond
	}
	if opts.BackoffMax <= 0 {
		opts.BackoffMax = 30 * time.Second
	}
	if opts.StableAfter <= 0 {
		opts.StableAfter = time.Minute
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = 2 * time.Second
	}
	if opts.ScanInterval == 0 {
		opts.ScanInterval = time.Second
	}
	if opts.MaxScanFiles <= 0 {
		opts.MaxScanFiles = 20000
	}
	return &Manager{
		opts: opts,
		log:  opts.Logger,
		transport: stdio.New(stdio.Options{
			Logger:      opts.Logger,
			StderrLevel: hclog.Debug,
			// The extension's own environment was already scrubbed by the
			// host; language servers need the toolchain variables in it
			// (GOPATH, GOFLAGS, CARGO_HOME, …). Credential-looking names
			// are still dropped by the transport.
			BaseEnvAllowlist: []string{"*"},
			TermGrace:        time.Second,
		}),
		root:     root,
		cfg:      cfg,
		servers:  make(map[string]*server),
		degraded: make(map[string]string),
	}
}

// Root returns the workspace root.
func (m *Manager) Root() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.root
}

// Config returns the current config.
func (m *Manager) Config() Config {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cfg
}

// KeyFor returns the key of the server that handles path, by extension.
func (m *Manager) KeyFor(path string) (string, error) {
	m.mu.Lock()
	cfg := m.cfg
	m.mu.Unlock()
	base := strings.ToLower(filepath.Base(path))
	for _, key := range cfg.keys() {
		sc := cfg.Servers[key]
		if sc.Disabled {
			continue
		}
		for _, ext := range sc.Extensions {
			if strings.HasSuffix(base, strings.ToLower(ext)) {
				return key, nil
			}
		}
	}
	return "", fmt.Errorf("%w: %s (configure one under servers.<language> with command and extensions in the lsp extension's config)", ErrNoServer, filepath.Base(path))
}

// For returns the warm server for path, starting it if needed.
func (m *Manager) For(ctx context.Context, path string) (*Handle, error) {
	key, err := m.KeyFor(path)
	if err != nil {
		return nil, err
	}
	return m.Get(ctx, key)
}

// Running returns the servers that are running now.
func (m *Manager) Running() []*Handle {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*Handle
	for _, key := range m.cfg.keys() {
		if s := m.servers[key]; s != nil && s.h != nil && !isDone(s.h) {
			out = append(out, s.h)
		}
	}
	return out
}

func isDone(h *Handle) bool {
	select {
	case <-h.Client.Done():
		return true
	default:
		return false
	}
}

// Get returns the warm server for key, starting it if needed. After a
// crash the restart waits out the backoff (bounded by ctx).
func (m *Manager) Get(ctx context.Context, key string) (*Handle, error) {
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return nil, ErrClosed
		}
		sc, ok := m.cfg.Servers[key]
		if !ok || sc.Disabled {
			m.mu.Unlock()
			return nil, fmt.Errorf("%w: server %q is not configured or disabled", ErrNoServer, key)
		}
		s := m.servers[key]
		if s == nil {
			s = &server{key: key}
			m.servers[key] = s
		}
		if s.h != nil {
			if !isDone(s.h) {
				h := s.h
				m.mu.Unlock()
				return h, nil
			}
			// The server died: count the crash and reap it.
			if time.Since(s.startedAt) >= m.opts.StableAfter {
				s.crashes = 0
			}
			s.crashes++
			s.lastCrash = time.Now()
			dead := s.h
			s.h = nil
			m.log.Warn("language server stopped; restarting on demand", "server", dead.Name, "error", dead.Client.Err())
			m.mu.Unlock()
			m.stopHandle(dead)
			continue
		}
		if s.starting != nil {
			ch := s.starting
			m.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		var delay time.Duration
		if s.crashes > 0 {
			d := m.opts.BackoffBase << (s.crashes - 1)
			if d > m.opts.BackoffMax || d <= 0 {
				d = m.opts.BackoffMax
			}
			delay = d - time.Since(s.lastCrash)
		}
		ch := make(chan struct{})
		s.starting = ch
		root := m.root
		m.mu.Unlock()

		h, err := m.startAfter(ctx, delay, key, sc, root)

		m.mu.Lock()
		s.starting = nil
		close(ch)
		if err == nil {
			if m.closed || m.root != root {
				m.mu.Unlock()
				m.stopHandle(h)
				if m.isClosed() {
					return nil, ErrClosed
				}
				continue // re-rooted while starting: start again at the new root
			}
			s.h = h
			s.startedAt = time.Now()
		} else if !errors.Is(err, ErrServerNotFound) && ctx.Err() == nil {
			// A server that fails to start is retried with the same
			// backoff as one that crashed.
			s.crashes++
			s.lastCrash = time.Now()
		}
		m.mu.Unlock()
		return h, err
	}
}

func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

func (m *Manager) startAfter(ctx context.Context, delay time.Duration, key string, sc ServerConfig, root string) (*Handle, error) {
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("waiting to restart %s after a crash: %w", filepath.Base(sc.Command), ctx.Err())
		}
	}
	return m.start(ctx, key, sc, root)
}

// start spawns the server for key and runs the initialize handshake.
func (m *Manager) start(ctx context.Context, key string, sc ServerConfig, root string) (*Handle, error) {
	name := filepath.Base(sc.Command)
	ctx, cancel := context.WithTimeout(ctx, m.Config().StartupTimeout())
	defer cancel()
	inst, err := m.transport.Start(ctx, core.ServerSpec{
		Name:    name,
		Command: sc.Command,
		Args:    sc.Args,
		Env:     sc.Env,
		Dir:     root,
	})
	if err != nil {
		if errors.Is(err, stdio.ErrCommandNotFound) || errors.Is(err, stdio.ErrNotExecutable) {
			nf := &NotFoundError{Key: key, Command: name, Install: sc.Install}
			m.setDegraded(key, "degraded: "+nf.Error())
			return nil, nf
		}
		return nil, fmt.Errorf("start language server %s for %s files: %w", name, key, err)
	}
	h := &Handle{Key: key, Name: name, inst: inst}
	var settings = sc.Settings
	cl, err := client.Start(ctx, inst.Stdout(), inst.Stdin(), client.Options{
		Name:                  name,
		Root:                  root,
		Logger:                m.log.Named(name),
		Encodings:             m.opts.Encodings,
		InitializationOptions: sc.InitializationOptions,
		Settings:              settings,
		Closer:                inst.Stdin(),
		PeerGone:              func(readErr error) error { return exitCause(name, inst, readErr) },
		NoProcessID:           ownPIDNamespace(inst),
		ApplyEdit: func(ctx context.Context, edit protocol.WorkspaceEdit) protocol.ApplyWorkspaceEditResult {
			if m.opts.ApplyEdit == nil {
				return protocol.ApplyWorkspaceEditResult{FailureReason: "edits are applied only by the lsp tools"}
			}
			return m.opts.ApplyEdit(ctx, h, edit)
		},
	})
	if err != nil {
		_ = inst.Kill()
		if tail := inst.StderrTail(); len(tail) > 0 {
			err = fmt.Errorf("%w; last stderr lines:\n  %s", err, strings.Join(tail, "\n  "))
		}
		return nil, fmt.Errorf("start language server %s: %w", name, err)
	}
	h.Client = cl
	if m.opts.ScanInterval > 0 {
		h.scanner = newScanner(root, sc.Extensions, m.opts.ScanInterval, m.opts.MaxScanFiles)
	}
	m.setDegraded(key, "")
	m.log.Debug("language server started", "server", name, "pid", inst.PID(), "root", root, "encoding", cl.Encoding())
	return h, nil
}

// exitCause waits briefly for the process to be reaped and describes how
// it ended.
func exitCause(name string, inst core.Instance, readErr error) error {
	select {
	case <-inst.Done():
	case <-time.After(time.Second):
		return &ExitedError{Server: name, Detail: "its output closed: " + readErr.Error()}
	}
	var ee *core.ExitError
	if err := inst.Err(); errors.As(err, &ee) {
		d := fmt.Sprintf("exit status %d", ee.Code)
		if ee.Signal != "" {
			d = "killed by signal " + ee.Signal
		}
		if len(ee.Stderr) > 0 {
			d += "; last stderr: " + ee.Stderr[len(ee.Stderr)-1]
		}
		return &ExitedError{Server: name, Detail: d}
	} else if err != nil {
		return &ExitedError{Server: name, Detail: err.Error()}
	}
	return &ExitedError{Server: name, Detail: "exited"}
}

// stopHandle stops a server politely, then by force, and reaps it.
func (m *Manager) stopHandle(h *Handle) {
	ctx, cancel := context.WithTimeout(context.Background(), m.opts.StopGrace)
	defer cancel()
	if err := h.Client.Close(ctx); err != nil {
		m.log.Debug("language server shutdown", "server", h.Name, "error", err)
	}
	_ = h.inst.Stop(m.opts.StopGrace)
}

// setDegraded records key's status text ("" clears it) and reports the
// combined status when it changes.
func (m *Manager) setDegraded(key, text string) {
	m.mu.Lock()
	if text == "" {
		delete(m.degraded, key)
	} else {
		m.degraded[key] = text
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range m.degraded {
			if !yield(k) {
				return
			}
		}
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, m.degraded[k])
	}
	status := strings.Join(parts, "; ")
	changed := status != m.status
	m.status = status
	cb := m.opts.OnStatus
	m.mu.Unlock()
	if changed && cb != nil {
		cb(status)
	}
}

// Status returns the current status text.
func (m *Manager) Status() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.status
}

// stopAll detaches and stops every server; with final it also closes the
// manager.
func (m *Manager) stopAll(final bool, root string) {
	m.mu.Lock()
	if final {
		m.closed = true
	}
	if root != "" {
		m.root = root
	}
	var hs []*Handle
	for _, s := range m.servers {
		if s.h != nil {
			hs = append(hs, s.h)
			s.h = nil
		}
	}
	m.servers = make(map[string]*server)
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, h := range hs {
		wg.Go(func() { m.stopHandle(h) })
	}
	wg.Wait()
}

// Shutdown stops every server (shutdown, exit, then the process group is
// terminated) and refuses later requests. It returns when all are reaped.
func (m *Manager) Shutdown() { m.stopAll(true, "") }

// Reroot points the manager at a new workspace root: the running servers
// are stopped and later requests start new ones at root.
func (m *Manager) Reroot(root string) {
	if m.Root() == root {
		return
	}
	m.stopAll(false, root)
}

// SetConfig applies a new config. Timeouts and limits apply at once; a
// change to the servers map is not applied and reports restartRequired, so
// the host restarts the extension.
func (m *Manager) SetConfig(cfg Config) (restartRequired bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !serversEqual(m.cfg, cfg) {
		return true
	}
	m.cfg = cfg
	return false
}

// Refresh reports files of h's languages that changed on disk since the
// last scan (at most once per ScanInterval) to the server, so it never
// answers from stale content, and re-syncs open documents. It reports
// whether the server was told of any change.
func (m *Manager) Refresh(ctx context.Context, h *Handle) (changed bool, err error) {
	changed, err = h.Client.SyncOpen(ctx)
	if err != nil || h.scanner == nil {
		return changed, err
	}
	events := h.scanner.scan(false)
	return changed || len(events) > 0, h.Client.NotifyWatched(ctx, events)
}

// Settle waits, once per server, for a freshly started server to finish
// loading its project (see [client.Client.WaitReady]; the settle time is
// servers.<key>.settle_ms), at most the startup timeout. Later calls
// return at once.
func (m *Manager) Settle(ctx context.Context, h *Handle) error {
	if h.settled.Load() {
		return nil
	}
	cfg := m.Config()
	if _, err := h.Client.WaitReady(ctx, cfg.Servers[h.Key].Settle(), cfg.StartupTimeout()); err != nil {
		return err
	}
	h.settled.Store(true)
	return nil
}

// Touched records that the tools wrote paths themselves: the scanner takes
// their new stamps so they are not reported twice.
func (h *Handle) Touched(paths []string) {
	if h.scanner != nil {
		h.scanner.touch(paths)
	}
}

// Workspace returns the servers for workspace-wide requests: the running
// ones, or else the servers of every language with files in the workspace,
// started now. Servers that could not start are reported in errs.
func (m *Manager) Workspace(ctx context.Context) (hs []*Handle, errs []error) {
	if hs = m.Running(); len(hs) > 0 {
		return hs, nil
	}
	cfg := m.Config()
	found := map[string]bool{}
	count := 0
	_ = filepath.WalkDir(m.Root(), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != m.Root() && (strings.HasPrefix(d.Name(), ".") || skipDirs[d.Name()]) {
				return filepath.SkipDir
			}
			return nil
		}
		if count++; count > m.opts.MaxScanFiles {
			return filepath.SkipAll
		}
		if key, err := m.KeyFor(p); err == nil {
			found[key] = true
			if len(found) == len(cfg.Servers) {
				return filepath.SkipAll
			}
		}
		return nil
	})
	for _, key := range cfg.keys() {
		if !found[key] {
			continue
		}
		h, err := m.Get(ctx, key)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		hs = append(hs, h)
	}
	return hs, errs
}

// ownPIDNamespace reports whether inst runs in a PID namespace of its own
// (the stdio transport on Linux), where our pid means nothing to it.
func ownPIDNamespace(inst core.Instance) bool {
	ns, ok := inst.(interface{ OwnPIDNamespace() bool })
	return ok && ns.OwnPIDNamespace()
}
