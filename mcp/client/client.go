// Package client is yolop's MCP client path: it connects the MCP servers a
// session should see — the workspace's .mcp.json, then those each enabled
// extension contributes — with the official go-sdk client, and serves
// their tools to the session as mcp__<server>__<tool> through the
// [host.ContributedTools] seam.
//
// A contributed server is named "<ext>__<server>", is taken from the
// extension's clamped handshake (so its transport shape already matched the
// approved manifest) and lives only while the extension is in the session.
// Stdio servers are spawned with a [core.Transport] (transport/stdio: a
// scrubbed environment, own process group, no orphans); HTTP servers are
// reached with the streamable HTTP transport. A server that fails to
// start, or dies, is degraded with its reason and stderr tail; the other
// servers carry on.
//
// A tool name a model API would refuse is skipped with a warning, and so is
// a tool whose session name an earlier server's tool already has (servers
// "a" with tool "b__c" and "a__b" with tool "c"); a call reaches the
// (server, tool) pair that registered its name.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"yolop.dev/core"
	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/transport/stdio"
)

// Defaults of [Options].
const (
	DefaultInitTimeout    = 30 * time.Second
	DefaultMaxResultBytes = 16 << 20
)

// ToolPrefix starts the session name of every MCP tool:
// mcp__<server>__<tool>.
const ToolPrefix = "mcp__"

// Options configure a [Client].
type Options struct {
	// Servers are the static servers (from .mcp.json), connected at the
	// first Sync. They take precedence by name over contributed ones.
	Servers []ServerConfig
	// Warnings are reported by [Client.Warnings] beside the client's own
	// (those [LoadFile] returned).
	Warnings []string
	// Transport spawns stdio servers. Required for stdio servers.
	Transport core.Transport
	// HTTPClient reaches HTTP servers. Nil means a client with no
	// overall timeout (calls are bounded by their context).
	HTTPClient *http.Client
	// Logger is the host logger. Nil means no logging.
	Logger hclog.Logger
	// Scrub redacts secrets from everything the agent reads (results,
	// errors, stderr tails). Nil passes text through.
	Scrub func(string) string
	// InitTimeout bounds connecting to one server and listing its tools.
	// Zero means [DefaultInitTimeout].
	InitTimeout time.Duration
	// MaxResultBytes bounds one message from a server (a stdio line, an
	// HTTP response body). Zero means [DefaultMaxResultBytes].
	MaxResultBytes int
	// NeverDefer lists session tool names (path.Match globs, e.g.
	// "mcp__github__*") whose schemas are always loaded. Every other MCP
	// tool is deferred behind tool_search.
	NeverDefer []string
}

// A Client is the MCP client capability of one session. Its methods are
// safe for concurrent use.
type Client struct {
	o      Options
	log    hclog.Logger
	sdk    *sdk.Client
	tokens atomic.Int64

	progMu   sync.Mutex
	progress map[string]func(*sdk.ProgressNotificationParams)

	mu       sync.Mutex
	servers  map[string]*server
	order    []string
	warnings []string
	closed   bool
	// routes are the tools served, in connection order, and byName the
	// same by session name: a call goes to the (server, tool) pair that
	// registered its name, never to a re-parse of the name. toolWarnings
	// say which announced tools were refused; all three are rebuilt by
	// reindex.
	routes       []route
	byName       map[string]route
	toolWarnings []string
}

// A route is one MCP tool the client serves.
type route struct {
	name string // mcp__<server>__<tool>
	srv  *server
	tool *sdk.Tool
}

// New returns a client; nothing is connected until Sync.
func New(o Options) *Client {
	if o.InitTimeout <= 0 {
		o.InitTimeout = DefaultInitTimeout
	}
	if o.MaxResultBytes <= 0 {
		o.MaxResultBytes = DefaultMaxResultBytes
	}
	log := o.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	c := &Client{o: o, log: log.Named("mcp"), servers: map[string]*server{}, progress: map[string]func(*sdk.ProgressNotificationParams){}}
	c.sdk = sdk.NewClient(&sdk.Implementation{Name: "yolop", Version: "1"}, &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{},
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			tok, _ := req.Params.ProgressToken.(string)
			c.progMu.Lock()
			f := c.progress[tok]
			c.progMu.Unlock()
			if f != nil {
				f(req.Params)
			}
		},
	})
	return c
}

var _ host.ContributedTools = (*Client)(nil)

// Server states.
const (
	StateReady    = "ready"
	StateDegraded = "degraded"
)

// A ServerStatus is one server's state, for /status and ext list.
type ServerStatus struct {
	Name, Source, Type string
	// State is StateReady or StateDegraded.
	State string
	// Reason says why a server is degraded.
	Reason string
	// StderrTail is the last lines a stdio server wrote to stderr.
	StderrTail []string
	Tools      int
	// PID is a stdio server's process id, or 0.
	PID int
}

type server struct {
	cfg  ServerConfig
	sess *sdk.ClientSession
	inst core.Instance
	done chan struct{} // closed when the watcher ended

	mu     sync.Mutex
	tools  []*sdk.Tool
	state  string
	reason string
}

func (s *server) status(scrub func(string) string) ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := ServerStatus{Name: s.cfg.Name, Source: s.cfg.Source, Type: s.cfg.Type, State: s.state, Reason: scrub(s.reason), Tools: len(s.tools)}
	if s.inst != nil {
		st.PID = s.inst.PID()
		for _, l := range s.inst.StderrTail() {
			st.StderrTail = append(st.StderrTail, scrub(l))
		}
	}
	return st
}

func (s *server) degrade(reason string) {
	s.mu.Lock()
	if s.state != StateDegraded {
		s.state, s.reason = StateDegraded, reason
	}
	s.mu.Unlock()
}

// Name implements [host.Capability].
func (*Client) Name() string { return "mcp" }

func (c *Client) scrub(s string) string {
	if c.o.Scrub == nil {
		return s
	}
	return c.o.Scrub(s)
}

// ToolName is the session name of tool of server.
func ToolName(server, tool string) string { return ToolPrefix + server + "__" + tool }

// Tools implements [host.Capability]: the tools of every ready server, in
// connection order, deferred unless [Options.NeverDefer] names them. A
// tool whose name a model API would refuse, and a tool whose session name
// an earlier server's tool already has, is left out (see
// [Client.Warnings]).
func (c *Client) Tools() []host.ToolDef {
	c.mu.Lock()
	routes := c.routes
	c.mu.Unlock()
	var out []host.ToolDef
	for _, r := range routes {
		r.srv.mu.Lock()
		state := r.srv.state
		r.srv.mu.Unlock()
		if state != StateReady {
			continue
		}
		schema, err := json.Marshal(r.tool.InputSchema)
		if err != nil || string(schema) == "null" {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		out = append(out, host.ToolDef{
			Name:        r.name,
			Description: r.tool.Description,
			InputSchema: schema,
			NeverDefer:  c.neverDefer(r.name),
			Streaming:   true,
		})
	}
	return out
}

// reindex rebuilds the routes from the servers' tool lists, in connection
// order. A tool name must be 1 to 64 letters, digits, '_' or '-' (what
// model APIs accept), and so must its session name; when two (server,
// tool) pairs make the same session name — servers "a" with tool "b__c"
// and "a__b" with tool "c" — the first server in order keeps it. Each
// refusal is a warning naming the server. Called with c.mu held.
func (c *Client) reindex() {
	c.routes, c.byName, c.toolWarnings = nil, map[string]route{}, nil
	for _, n := range c.order {
		s := c.servers[n]
		if s == nil {
			continue
		}
		s.mu.Lock()
		tools := s.tools
		s.mu.Unlock()
		for _, t := range tools {
			name := ToolName(n, t.Name)
			var warn string
			prev, dup := c.byName[name]
			switch {
			case !validName.MatchString(t.Name):
				warn = fmt.Sprintf("%s: MCP server %q announces tool %s, which is not a valid tool name (want 1 to 64 letters, digits, '_' or '-'); the tool is skipped: ask the server's author to rename it", s.cfg.Source, n, quoteName(t.Name))
			case !validName.MatchString(name):
				warn = fmt.Sprintf("%s: MCP server %q announces tool %s, whose session name %s is %d characters, over the 64 model APIs accept; the tool is skipped: give the server a shorter name", s.cfg.Source, n, quoteName(t.Name), quoteName(name), len(name))
			case dup:
				warn = fmt.Sprintf("MCP tool name %s is made by server %q (tool %s, %s) and by server %q (tool %s, %s); the first keeps it and the second's tool is skipped: rename one of the servers", name, prev.srv.cfg.Name, quoteName(prev.tool.Name), prev.srv.cfg.Source, n, quoteName(t.Name), s.cfg.Source)
			}
			if warn != "" {
				c.toolWarnings = append(c.toolWarnings, c.scrub(warn))
				c.log.Debug("MCP tool skipped", "server", n, "reason", warn)
				continue
			}
			r := route{name: name, srv: s, tool: t}
			c.routes = append(c.routes, r)
			c.byName[name] = r
		}
	}
}

// quoteName shows a name from a server in a warning: quoted with Go
// escapes (a newline or U+202E cannot break or reverse the line) and cut
// to 40 characters.
func quoteName(n string) string {
	if r := []rune(n); len(r) > 40 {
		return strconv.Quote(string(r[:40])) + "…"
	}
	return strconv.Quote(n)
}

func (c *Client) neverDefer(name string) bool {
	for _, g := range c.o.NeverDefer {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// lookup finds the server and MCP tool name that registered a session
// tool name.
func (c *Client) lookup(name string) (*server, string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.byName[name]
	if !ok {
		return nil, "", false
	}
	return r.srv, r.tool.Name, true
}

// CallTool implements [host.Capability]: one tools/call through the
// go-sdk client. MCP progress notifications reach onUpdate; ctx ending
// sends notifications/cancelled.
func (c *Client) CallTool(ctx context.Context, call host.ToolCall, onUpdate func(yep.ToolUpdateParams)) (yep.ToolResult, error) {
	s, tool, ok := c.lookup(call.Name)
	if !ok {
		return yep.ToolResult{}, fmt.Errorf("no MCP server serves tool %q", call.Name)
	}
	s.mu.Lock()
	state, reason, sess := s.state, s.reason, s.sess
	s.mu.Unlock()
	if state != StateReady || sess == nil {
		return yep.ToolResult{}, fmt.Errorf("MCP server %s is degraded: %s", s.cfg.Name, c.scrub(reason))
	}
	params := &sdk.CallToolParams{Name: tool, Arguments: call.Args}
	if onUpdate != nil {
		tok := fmt.Sprintf("yolop-%d", c.tokens.Add(1))
		params.SetProgressToken(tok)
		var mu sync.Mutex
		c.progMu.Lock()
		c.progress[tok] = func(p *sdk.ProgressNotificationParams) {
			mu.Lock()
			defer mu.Unlock()
			onUpdate(yep.ToolUpdateParams{ToolCallID: call.ID, Output: c.scrub(p.Message), Progress: &yep.Progress{Current: p.Progress, Total: p.Total, Message: c.scrub(p.Message)}})
		}
		c.progMu.Unlock()
		defer func() {
			c.progMu.Lock()
			delete(c.progress, tok)
			c.progMu.Unlock()
			mu.Lock() // a notification being delivered ends before CallTool returns
			mu.Unlock()
		}()
	}
	res, err := sess.CallTool(ctx, params)
	if err != nil {
		if ctx.Err() != nil {
			return yep.ToolResult{}, err
		}
		switch {
		case errors.Is(err, sdk.ErrConnectionClosed):
			s.degrade(fmt.Sprintf("connection lost: %v", err))
			err = c.closedCause(s, err)
		case strings.Contains(err.Error(), "maximum line length"), errors.Is(err, ErrTooLarge):
			err = fmt.Errorf("the result is over the %d-byte limit on one MCP message: %w", c.o.MaxResultBytes, err)
		}
		return yep.ToolResult{}, fmt.Errorf("MCP server %s, tool %s: %s", s.cfg.Name, tool, c.scrub(err.Error()))
	}
	return c.result(res), nil
}

// closedCause explains a lost connection: an over-long message is the
// usual cause of a live server's connection closing mid-call.
func (c *Client) closedCause(s *server, err error) error {
	if s.inst != nil {
		select {
		case <-s.inst.Done():
			return fmt.Errorf("the server exited: %v", s.inst.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("%w (a message over the %d-byte limit closes the connection)", err, c.o.MaxResultBytes)
}

// result turns an MCP result into the text the agent reads: text content
// joined by newlines, other content described, structured content as Data.
func (c *Client) result(r *sdk.CallToolResult) yep.ToolResult {
	var b strings.Builder
	for i, ct := range r.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch v := ct.(type) {
		case *sdk.TextContent:
			b.WriteString(v.Text)
		case *sdk.ImageContent:
			fmt.Fprintf(&b, "[image %s, %d bytes]", v.MIMEType, len(v.Data))
		case *sdk.AudioContent:
			fmt.Fprintf(&b, "[audio %s, %d bytes]", v.MIMEType, len(v.Data))
		case *sdk.ResourceLink:
			fmt.Fprintf(&b, "[resource %s]", v.URI)
		case *sdk.EmbeddedResource:
			if v.Resource != nil && v.Resource.Text != "" {
				b.WriteString(v.Resource.Text)
			} else if v.Resource != nil {
				fmt.Fprintf(&b, "[resource %s]", v.Resource.URI)
			}
		default:
			j, _ := json.Marshal(ct)
			b.Write(j)
		}
	}
	out := yep.ToolResult{Output: c.scrub(b.String()), IsError: r.IsError}
	if r.StructuredContent != nil {
		if j, err := json.Marshal(r.StructuredContent); err == nil {
			out.Data = json.RawMessage(c.scrub(string(j)))
			if !json.Valid(out.Data) {
				out.Data = nil
			}
		}
	}
	return out
}

// Sync implements [host.ContributedTools]: the static servers (first time)
// and the servers exts contribute are connected, in parallel, each bounded
// by InitTimeout; servers of extensions no longer in the session, or whose
// declaration changed (a respawned extension on a new port), are closed.
// A server that is already connected is left alone, so a Sync with
// nothing new costs a comparison.
func (c *Client) Sync(ctx context.Context, exts []*host.Extension) bool {
	want := map[string]ServerConfig{}
	var order []string
	static := map[string]bool{}
	for _, s := range c.o.Servers {
		want[s.Name] = s
		static[s.Name] = true
		order = append(order, s.Name)
	}
	var warns []string
	for _, e := range exts {
		g := e.Grant()
		for _, d := range e.MCPServers() {
			cfg := contributed(e.ExtName(), g, d)
			if _, dup := want[cfg.Name]; dup {
				warns = append(warns, fmt.Sprintf("MCP server %s of extension %s has the name of a %s server, which wins; skipped", cfg.Name, e.ExtName(), FileName))
				continue
			}
			want[cfg.Name] = cfg
			order = append(order, cfg.Name)
		}
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	var stop []*server
	for n, s := range c.servers {
		if w, ok := want[n]; !ok || !reflect.DeepEqual(w, s.cfg) {
			stop = append(stop, s)
			delete(c.servers, n)
		}
	}
	var start []ServerConfig
	for _, n := range order {
		if _, ok := c.servers[n]; !ok {
			start = append(start, want[n])
		}
	}
	c.order = order
	for _, w := range warns {
		if !slices.Contains(c.warnings, w) {
			c.warnings = append(c.warnings, w)
		}
	}
	c.mu.Unlock()
	if len(stop) == 0 && len(start) == 0 {
		return false
	}

	var wg sync.WaitGroup
	for _, s := range stop {
		wg.Add(1)
		go func() { defer wg.Done(); c.close(s) }()
	}
	started := make([]*server, len(start))
	for i, cfg := range start {
		wg.Add(1)
		go func() { defer wg.Done(); started[i] = c.connect(ctx, cfg) }()
	}
	wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range started {
		if c.closed {
			go c.close(s)
			continue
		}
		c.servers[s.cfg.Name] = s
		if s.state != StateReady && static[s.cfg.Name] {
			c.warnings = append(c.warnings, fmt.Sprintf("%s: MCP server %q: %s", s.cfg.Source, s.cfg.Name, c.scrub(s.reason)))
		}
	}
	c.reindex()
	return true
}

// contributed is the config of one MCP server an extension's handshake
// announced (already clamped against its approved manifest). ${VAR} in its
// env and headers is expanded from the extension's own resolved env — its
// `env` and `secret` config fields — so a wrapped third-party server gets
// the credential without it passing through anything the agent reads.
func contributed(ext string, g host.Grant, d yep.MCPServerDecl) ServerConfig {
	lookup := func(k string) (string, bool) { v, ok := g.Server.Env[k]; return v, ok }
	ex := func(v string) string { r, _ := Expand(v, lookup); return r }
	// The manifest's env and headers, under what the handshake declares.
	var env, headers map[string]string
	for _, a := range g.MCPServers {
		if a.Name == d.Name {
			env, headers = maps.Clone(a.Env), maps.Clone(a.Headers)
		}
	}
	merge := func(base, over map[string]string) map[string]string {
		if base == nil && over == nil {
			return nil
		}
		if base == nil {
			base = map[string]string{}
		}
		maps.Copy(base, over)
		return expandMap(base, ex)
	}
	cfg := ServerConfig{
		Name:       ext + "__" + d.Name,
		Type:       d.Type,
		Command:    d.Command,
		Args:       slices.Clone(d.Args),
		Env:        merge(env, d.Env),
		URL:        d.URL,
		Headers:    merge(headers, d.Headers),
		PackageDir: g.Server.PackageDir,
		Source:     "ext:" + ext,
	}
	if cfg.Type == "" {
		cfg.Type = yep.MCPStdio
		if d.URL != "" {
			cfg.Type = yep.MCPHTTP
		}
	}
	return cfg
}

// connect starts or reaches one server, initializes it and lists its
// tools, bounded by InitTimeout. It always returns a server: degraded when
// something failed.
func (c *Client) connect(ctx context.Context, cfg ServerConfig) *server {
	s := &server{cfg: cfg, state: StateReady}
	ctx, cancel := context.WithTimeoutCause(ctx, c.o.InitTimeout, fmt.Errorf("no answer to initialize within %s", c.o.InitTimeout))
	defer cancel()
	var t sdk.Transport
	switch cfg.Type {
	case yep.MCPStdio:
		if c.o.Transport == nil {
			s.degrade("this host has no transport for stdio MCP servers")
			return s
		}
		inst, err := c.o.Transport.Start(ctx, core.ServerSpec{
			Name: "mcp:" + cfg.Name, Command: cfg.Command, Args: cfg.Args, Env: cfg.Env,
			Dir: cfg.Dir, PackageDir: cfg.PackageDir,
		})
		if err != nil {
			if errors.Is(err, stdio.ErrCommandNotFound) && !strings.HasPrefix(cfg.Source, "ext:") {
				s.degrade(fmt.Sprintf("command %q not found on PATH; install it or fix \"command\" in %s", cfg.Command, cfg.Source))
			} else {
				s.degrade(fmt.Sprintf("cannot start %s: %v", cfg.Command, err))
			}
			c.log.Warn("MCP server did not start", "server", cfg.Name, "source", cfg.Source, "reason", s.reason)
			return s
		}
		s.inst = inst
		t = &sdk.IOTransport{Reader: io.NopCloser(inst.Stdout()), Writer: inst.Stdin(), MaxLineLength: c.o.MaxResultBytes}
	case yep.MCPHTTP:
		t = &sdk.StreamableClientTransport{
			Endpoint:             cfg.URL,
			HTTPClient:           c.httpClient(cfg.Headers),
			MaxRetries:           -1,
			DisableStandaloneSSE: true,
			MaxEventSize:         c.o.MaxResultBytes,
		}
	default:
		s.degrade(fmt.Sprintf("unknown transport %q", cfg.Type))
		return s
	}
	sess, err := c.sdk.Connect(ctx, t, nil)
	if err == nil {
		s.sess = sess
		err = c.listTools(ctx, s)
	}
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
			err = cause
		}
		s.degrade(c.failure(s, err))
		c.log.Warn("MCP server did not start", "server", cfg.Name, "source", cfg.Source, "error", c.scrub(err.Error()))
		c.closeConn(s)
		return s
	}
	if s.inst != nil {
		s.done = make(chan struct{})
		go c.watch(s)
	}
	return s
}

// failure describes a failed start; a stdio server that exited adds how
// (its exit status and the tail of its stderr).
func (c *Client) failure(s *server, err error) string {
	msg := err.Error()
	if s.inst != nil {
		select {
		case <-s.inst.Done():
			if e := s.inst.Err(); e != nil {
				msg += "; " + e.Error()
			}
		case <-time.After(200 * time.Millisecond):
		}
	}
	return msg
}

func (c *Client) listTools(ctx context.Context, s *server) error {
	var tools []*sdk.Tool
	if s.sess.InitializeResult().Capabilities.Tools != nil {
		for t, err := range s.sess.Tools(ctx, nil) {
			if err != nil {
				return fmt.Errorf("listing tools: %w", err)
			}
			tools = append(tools, t)
		}
	}
	s.mu.Lock()
	s.tools = tools
	s.mu.Unlock()
	return nil
}

// watch degrades a stdio server whose process exits.
func (c *Client) watch(s *server) {
	defer close(s.done)
	<-s.inst.Done()
	reason := "the server exited"
	if err := s.inst.Err(); err != nil {
		reason += ": " + err.Error()
	}
	s.mu.Lock()
	wasReady := s.state == StateReady
	s.mu.Unlock()
	s.degrade(reason)
	if wasReady {
		c.log.Warn("MCP server died", "server", s.cfg.Name, "reason", c.scrub(reason))
	}
}

// closeConn closes the session and stops the process; idempotent.
func (c *Client) closeConn(s *server) {
	if s.sess != nil {
		done := make(chan struct{})
		go func() { _ = s.sess.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
	}
	if s.inst != nil {
		_ = s.inst.Stop(2 * time.Second)
	}
}

func (c *Client) close(s *server) {
	s.degrade("closed")
	c.closeConn(s)
	if s.done != nil {
		<-s.done
	}
}

// Close implements [host.ContributedTools]: every server is disconnected
// and every stdio server stopped.
func (c *Client) Close() {
	c.mu.Lock()
	c.closed = true
	servers := slices.Collect(maps.Values(c.servers))
	c.servers = map[string]*server{}
	c.reindex()
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Add(1)
		go func() { defer wg.Done(); c.close(s) }()
	}
	wg.Wait()
}

// Status lists every server's state, in connection order.
func (c *Client) Status() []ServerStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []ServerStatus
	for _, n := range c.order {
		if s := c.servers[n]; s != nil {
			out = append(out, s.status(c.scrub))
		}
	}
	return out
}

// Warnings implements [host.ContributedTools]: .mcp.json findings, servers
// that did not start and the tools refused for their names, each once.
func (c *Client) Warnings() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Concat(c.o.Warnings, c.warnings, c.toolWarnings)
}

// httpClient is the HTTP client of one server: its headers added to every
// request and every response body bounded.
func (c *Client) httpClient(headers map[string]string) *http.Client {
	base := c.o.HTTPClient
	if base == nil {
		base = &http.Client{}
	}
	rt := base.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	hc := *base
	hc.Transport = &roundTripper{base: rt, headers: headers, limit: int64(c.o.MaxResultBytes)}
	return &hc
}

type roundTripper struct {
	base    http.RoundTripper
	headers map[string]string
	limit   int64
}

func (r *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(r.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range r.headers {
			req.Header.Set(k, v)
		}
	}
	res, err := r.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	res.Body = &limitedBody{rc: res.Body, left: r.limit, limit: r.limit}
	return res, nil
}

// ErrTooLarge is returned reading a message over [Options.MaxResultBytes].
var ErrTooLarge = errors.New("MCP message too large")

type limitedBody struct {
	rc          io.ReadCloser
	left, limit int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, fmt.Errorf("%w: over the %d-byte limit", ErrTooLarge, b.limit)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// base capability methods the MCP client contributes nothing to.

// Prompt implements [host.Capability].
func (*Client) Prompt(context.Context, int) (string, error) { return "", nil }

// Hooks implements [host.Capability].
func (*Client) Hooks() []host.HookGrant { return nil }

// FireHook implements [host.Capability].
func (*Client) FireHook(context.Context, host.HookGrant, yep.HookFireParams) (yep.HookFireResult, error) {
	return yep.HookFireResult{Decision: yep.DecisionAllow}, nil
}

// Commands implements [host.Capability].
func (*Client) Commands() []host.CommandGrant { return nil }

// ExecuteCommand implements [host.Capability].
func (*Client) ExecuteCommand(context.Context, string, string) (yep.CommandExecuteResult, error) {
	return yep.CommandExecuteResult{}, yep.ErrMethodNotFound
}

// MCPServers implements [host.Capability].
func (*Client) MCPServers() []yep.MCPServerDecl { return nil }

// Skills implements [host.Capability].
func (*Client) Skills() []string { return nil }

// ConfigSchema implements [host.Capability].
func (*Client) ConfigSchema() json.RawMessage { return nil }
