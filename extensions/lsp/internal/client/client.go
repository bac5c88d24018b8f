// Package client is a Language Server Protocol client over a
// [jsonrpc.Conn] with the Content-Length framer.
//
// A [Client] performs the initialize handshake (negotiating the position
// encoding: UTF-8 when the server offers it, else UTF-16), keeps the
// server's view of documents equal to the files on disk (didOpen,
// didChange, didClose, didChangeWatchedFiles), collects pushed diagnostics
// and work-done progress, answers the requests servers send to clients
// (workspace/configuration, client/registerCapability,
// window/workDoneProgress/create, workspace/applyEdit, …), sends
// $/cancelRequest when a call's context ends, and stops the server with
// shutdown and exit.
//
// A Client knows nothing about processes: it speaks over any reader and
// writer. Starting, watching and restarting server processes is the
// manager's job.
package client

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/yep"
	"yolop.dev/extensions/lsp/internal/protocol"
)

// Options configure a [Client]. Every field's zero value is usable unless
// it says otherwise.
type Options struct {
	// Name names the server in messages, e.g. "gopls".
	Name string
	// Root is the absolute workspace root. Required.
	Root string
	// Logger receives the server's log messages at debug level. Nil means
	// no logging.
	Logger hclog.Logger
	// Encodings are the position encodings offered, most preferred first.
	// Nil means UTF-8, then UTF-16.
	Encodings []protocol.Encoding
	// InitializationOptions is sent as initialize's initializationOptions.
	InitializationOptions json.RawMessage
	// Settings answers workspace/configuration: an object whose members are
	// looked up by each item's section (dotted paths descend). Nil answers
	// an empty object for every item.
	Settings json.RawMessage
	// LanguageID returns the languageId of a file. Nil derives it from the
	// file extension.
	LanguageID func(path string) string
	// ApplyEdit handles a server's workspace/applyEdit request. Nil refuses
	// every such request.
	ApplyEdit func(ctx context.Context, edit protocol.WorkspaceEdit) protocol.ApplyWorkspaceEditResult
	// MaxOpen bounds the documents kept open; the least recently used is
	// closed beyond it. Zero means 64.
	MaxOpen int
	// Closer is closed when the client closes, to release the stream.
	Closer io.Closer
	// PeerGone turns the read error that ended the connection into the
	// cause pending calls fail with (e.g. the process's exit status).
	PeerGone func(readErr error) error
	// NoProcessID sends initialize's processId as null instead of this
	// process's pid. Set it when the server cannot see this process — it
	// runs in a PID namespace of its own — or a server that watches the pid
	// (vscode-languageserver's, in pyright and typescript-language-server)
	// finds no such process and exits. Its life is then tied to ours by the
	// transport instead.
	NoProcessID bool
}

// ServerCapabilities is the part of the server's capabilities the tools
// consult. Provider fields are raw because servers send a boolean or an
// options object; see [Supported].
type ServerCapabilities struct {
	PositionEncoding        protocol.Encoding `json:"positionEncoding,omitempty"`
	DefinitionProvider      json.RawMessage   `json:"definitionProvider,omitempty"`
	ReferencesProvider      json.RawMessage   `json:"referencesProvider,omitempty"`
	HoverProvider           json.RawMessage   `json:"hoverProvider,omitempty"`
	RenameProvider          json.RawMessage   `json:"renameProvider,omitempty"`
	DocumentSymbolProvider  json.RawMessage   `json:"documentSymbolProvider,omitempty"`
	WorkspaceSymbolProvider json.RawMessage   `json:"workspaceSymbolProvider,omitempty"`
	CodeActionProvider      json.RawMessage   `json:"codeActionProvider,omitempty"`
	DiagnosticProvider      json.RawMessage   `json:"diagnosticProvider,omitempty"`
	ExecuteCommandProvider  *struct {
		Commands []string `json:"commands"`
	} `json:"executeCommandProvider,omitempty"`
}

// Supported reports whether a provider capability is present and not
// false.
func Supported(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s != "" && s != "false" && s != "null"
}

// CodeActionResolve reports whether the server resolves code actions
// lazily (codeActionProvider.resolveProvider).
func (c ServerCapabilities) CodeActionResolve() bool {
	var o struct {
		ResolveProvider bool `json:"resolveProvider"`
	}
	_ = json.Unmarshal(c.CodeActionProvider, &o)
	return o.ResolveProvider
}

// A Document is the server's view of one open file: the text last sent and
// its version.
type Document struct {
	Path    string
	URI     protocol.DocumentURI
	Version int32
	Text    *protocol.Text
	// Hash is the SHA-256 of the text.
	Hash    [32]byte
	gen     uint64 // diagnostics generation when this text was sent
	modTime time.Time
	size    int64
	used    uint64
}

type diagEntry struct {
	items   []protocol.Diagnostic
	gen     uint64
	version *int32 // the document version the server diagnosed, if it said
}

// A Client is a connection to one language server. Its methods are safe
// for concurrent use.
type Client struct {
	conn *jsonrpc.Conn
	opts Options
	log  hclog.Logger
	enc  protocol.Encoding
	caps ServerCapabilities
	info struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}

	docMu sync.Mutex // serialises document syncs (open/change/close order)

	mu       sync.Mutex
	docs     map[string]*Document
	useClock uint64
	diags    map[protocol.DocumentURI]*diagEntry
	diagGen  uint64
	progress map[string]string // active work-done progress: token → title
	changed  chan struct{}     // closed and replaced on every diagnostics/progress event
	lastEvt  time.Time         // last diagnostics, progress or change
	lastPub  time.Time         // last publishDiagnostics
	lastChg  time.Time         // last change this client sent
	latency  time.Duration     // from a change to the first publish after it
	lastProg time.Time         // last work-done progress begin or end
	progEnds int               // work-done progress reports that ended
	// status is set once the server sent experimental/serverStatus
	// (rust-analyzer); quiescent is its last word on whether it has
	// finished loading.
	status, quiescent bool
}

// Start speaks to a server over r and w: it runs the initialize handshake
// and sends initialized. On error the connection is closed.
func Start(ctx context.Context, r io.Reader, w io.Writer, opts Options) (*Client, error) {
	if opts.Root == "" {
		return nil, errors.New("lsp client: Options.Root is required")
	}
	if opts.Name == "" {
		opts.Name = "language server"
	}
	if opts.MaxOpen <= 0 {
		opts.MaxOpen = 64
	}
	if opts.Encodings == nil {
		opts.Encodings = []protocol.Encoding{protocol.UTF8, protocol.UTF16}
	}
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	c := &Client{
		opts:     opts,
		log:      log,
		docs:     make(map[string]*Document),
		diags:    make(map[protocol.DocumentURI]*diagEntry),
		progress: make(map[string]string),
		changed:  make(chan struct{}),
	}
	c.conn = jsonrpc.NewConn(r, w, jsonrpc.Options{
		Framer:             jsonrpc.ContentLength,
		CancelMethod:       "$/cancelRequest",
		CancelNotification: true,
		Handler:            jsonrpc.HandlerFunc(c.handle),
		Logger:             log,
		Closer:             opts.Closer,
		PeerGone:           opts.PeerGone,
	})
	if err := c.initialize(ctx); err != nil {
		c.conn.Close()
		c.conn.Wait()
		return nil, err
	}
	return c, nil
}

func (c *Client) initialize(ctx context.Context) error {
	encs := make([]string, len(c.opts.Encodings))
	for i, e := range c.opts.Encodings {
		encs[i] = string(e)
	}
	kinds := make([]int, 26)
	for i := range kinds {
		kinds[i] = i + 1
	}
	rootURI := protocol.URIFromPath(c.opts.Root)
	var pid any = os.Getpid()
	if c.opts.NoProcessID {
		pid = nil
	}
	params := map[string]any{
		"processId":  pid,
		"clientInfo": map[string]string{"name": "yolop-extension-lsp"},
		"rootUri":    rootURI,
		"rootPath":   c.opts.Root,
		"workspaceFolders": []protocol.WorkspaceFolder{
			{URI: rootURI, Name: filepath.Base(c.opts.Root)},
		},
		"capabilities": map[string]any{
			"general": map[string]any{"positionEncodings": encs},
			"window":  map[string]any{"workDoneProgress": true},
			// rust-analyzer reports its load in several progress reports
			// with gaps between them; this status says when all are done.
			"experimental": map[string]any{"serverStatusNotification": true},
			"workspace": map[string]any{
				"configuration":    true,
				"workspaceFolders": true,
				"applyEdit":        true,
				"workspaceEdit": map[string]any{
					"documentChanges":    true,
					"resourceOperations": []string{},
				},
				"symbol":                 map[string]any{"symbolKind": map[string]any{"valueSet": kinds}},
				"didChangeWatchedFiles":  map[string]any{"dynamicRegistration": true},
				"executeCommand":         map[string]any{},
				"diagnostics":            map[string]any{"refreshSupport": false},
				"workspaceFolderChanges": false,
			},
			"textDocument": map[string]any{
				"synchronization": map[string]any{"didSave": false, "willSave": false},
				"definition":      map[string]any{"linkSupport": true},
				"references":      map[string]any{},
				"hover":           map[string]any{"contentFormat": []string{"markdown", "plaintext"}},
				"rename":          map[string]any{"prepareSupport": false},
				"documentSymbol": map[string]any{
					"hierarchicalDocumentSymbolSupport": true,
					"symbolKind":                        map[string]any{"valueSet": kinds},
				},
				"codeAction": map[string]any{
					"codeActionLiteralSupport": map[string]any{"codeActionKind": map[string]any{"valueSet": []string{
						"", "quickfix", "refactor", "refactor.extract", "refactor.inline", "refactor.rewrite",
						"source", "source.organizeImports", "source.fixAll",
					}}},
					"resolveSupport":     map[string]any{"properties": []string{"edit"}},
					"dataSupport":        true,
					"isPreferredSupport": true,
					"disabledSupport":    true,
				},
				"publishDiagnostics": map[string]any{"versionSupport": true},
				"diagnostic":         map[string]any{"dynamicRegistration": false},
			},
		},
	}
	if len(c.opts.InitializationOptions) > 0 {
		params["initializationOptions"] = c.opts.InitializationOptions
	}
	var res struct {
		Capabilities ServerCapabilities `json:"capabilities"`
		ServerInfo   struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"serverInfo"`
	}
	if err := c.conn.Call(ctx, "initialize", params, &res); err != nil {
		return fmt.Errorf("%s: initialize: %w", c.opts.Name, err)
	}
	c.caps = res.Capabilities
	c.info = res.ServerInfo
	switch res.Capabilities.PositionEncoding {
	case "":
		c.enc = protocol.UTF16
	case protocol.UTF8, protocol.UTF16, protocol.UTF32:
		c.enc = res.Capabilities.PositionEncoding
	default:
		return fmt.Errorf("%s: initialize: the server chose position encoding %q, which this client does not know", c.opts.Name, res.Capabilities.PositionEncoding)
	}
	if err := c.conn.Notify(ctx, "initialized", struct{}{}); err != nil {
		return fmt.Errorf("%s: initialized: %w", c.opts.Name, err)
	}
	return nil
}

// Name returns the server's name as given in Options.
func (c *Client) Name() string { return c.opts.Name }

// Root returns the workspace root.
func (c *Client) Root() string { return c.opts.Root }

// Encoding returns the negotiated position encoding.
func (c *Client) Encoding() protocol.Encoding { return c.enc }

// Capabilities returns the server's capabilities.
func (c *Client) Capabilities() ServerCapabilities { return c.caps }

// ServerInfo returns the name and version the server reported, if any.
func (c *Client) ServerInfo() (name, version string) { return c.info.Name, c.info.Version }

// Done is closed when the connection to the server has ended.
func (c *Client) Done() <-chan struct{} { return c.conn.Done() }

// Err returns why the connection ended, once Done is closed.
func (c *Client) Err() error { return c.conn.Err() }

// Call sends a request and decodes its result (see [jsonrpc.Conn.Call]).
// When ctx ends first, $/cancelRequest is sent and Call returns at once
// with an error matching yep.ErrCancelled.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	return c.conn.Call(ctx, method, params, result)
}

// Notify sends a notification.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	return c.conn.Notify(ctx, method, params)
}

// Close stops the server politely: a shutdown request bounded by ctx, the
// exit notification, then the connection is closed. It waits for the
// connection's goroutines.
func (c *Client) Close(ctx context.Context) error {
	var err error
	select {
	case <-c.conn.Done():
	default:
		if err = c.conn.Call(ctx, "shutdown", nil, nil); err == nil {
			err = c.conn.Notify(ctx, "exit", nil)
		}
	}
	c.conn.Close()
	c.conn.Wait()
	if err != nil && !errors.Is(err, jsonrpc.ErrClosed) {
		return fmt.Errorf("%s: shutdown: %w", c.opts.Name, err)
	}
	return nil
}

// handle serves the server's requests and notifications.
func (c *Client) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	switch req.Method {
	case "textDocument/publishDiagnostics":
		var p protocol.PublishDiagnosticsParams
		if err := json.Unmarshal(req.Params, &p); err == nil {
			c.storeDiagnostics(p.URI, p.Version, p.Diagnostics)
		}
		return nil, nil
	case "$/progress":
		var p protocol.ProgressParams
		if err := json.Unmarshal(req.Params, &p); err == nil {
			c.trackProgress(p)
		}
		return nil, nil
	case "experimental/serverStatus":
		var p struct {
			Quiescent bool `json:"quiescent"`
		}
		if err := json.Unmarshal(req.Params, &p); err == nil {
			c.mu.Lock()
			c.status, c.quiescent = true, p.Quiescent
			c.notifyLocked()
			c.mu.Unlock()
		}
		return nil, nil
	case "window/logMessage", "window/showMessage":
		var p protocol.LogMessageParams
		if err := json.Unmarshal(req.Params, &p); err == nil {
			c.log.Debug("server message", "server", c.opts.Name, "type", p.Type, "message", p.Message)
		}
		return nil, nil
	case "workspace/configuration":
		var p protocol.ConfigurationParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, yep.Errorf(yep.CodeInvalidParams, "workspace/configuration: %v", err)
		}
		out := make([]json.RawMessage, len(p.Items))
		for i, it := range p.Items {
			out[i] = lookupSection(c.opts.Settings, it.Section)
		}
		return out, nil
	case "client/registerCapability", "client/unregisterCapability",
		"window/workDoneProgress/create", "window/showMessageRequest",
		"workspace/semanticTokens/refresh", "workspace/inlayHint/refresh",
		"workspace/inlineValue/refresh", "workspace/codeLens/refresh",
		"workspace/diagnostic/refresh", "workspace/foldingRange/refresh":
		return nil, nil
	case "window/showDocument":
		return map[string]bool{"success": false}, nil
	case "workspace/workspaceFolders":
		return []protocol.WorkspaceFolder{{URI: protocol.URIFromPath(c.opts.Root), Name: filepath.Base(c.opts.Root)}}, nil
	case "workspace/applyEdit":
		var p protocol.ApplyWorkspaceEditParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, yep.Errorf(yep.CodeInvalidParams, "workspace/applyEdit: %v", err)
		}
		if c.opts.ApplyEdit == nil {
			return protocol.ApplyWorkspaceEditResult{FailureReason: "this client applies edits only through its own tools"}, nil
		}
		return c.opts.ApplyEdit(ctx, p.Edit), nil
	}
	if req.IsNotification() {
		return nil, nil
	}
	return nil, yep.Errorf(yep.CodeMethodNotFound, "method %q is not supported by this client", req.Method)
}

// lookupSection returns the member of settings at a dotted section path,
// or an empty object.
func lookupSection(settings json.RawMessage, section string) json.RawMessage {
	empty := json.RawMessage(`{}`)
	if len(settings) == 0 {
		return empty
	}
	cur := settings
	if section == "" {
		return cur
	}
	for _, part := range strings.Split(section, ".") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(cur, &m); err != nil {
			return empty
		}
		next, ok := m[part]
		if !ok {
			return empty
		}
		cur = next
	}
	return cur
}

// changeSent records that a change notification went to the server.
func (c *Client) changeSent() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastChg = time.Now()
	c.lastEvt = c.lastChg
}

// notifyLocked wakes waiters; c.mu must be held.
func (c *Client) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
	c.lastEvt = time.Now()
}

func (c *Client) storeDiagnostics(uri protocol.DocumentURI, version *int32, items []protocol.Diagnostic) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.diagGen++
	c.diags[uri] = &diagEntry{items: items, gen: c.diagGen, version: version}
	now := time.Now()
	if !c.lastChg.IsZero() && !c.lastPub.After(c.lastChg) {
		c.latency = now.Sub(c.lastChg)
	}
	c.notifyLocked()
	c.lastPub = c.lastEvt
}

func (c *Client) trackProgress(p protocol.ProgressParams) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tok := string(p.Token)
	switch p.Value.Kind {
	case "begin":
		c.progress[tok] = p.Value.Title
	case "end":
		delete(c.progress, tok)
		c.progEnds++
	default:
		return
	}
	c.notifyLocked()
	c.lastProg = c.lastEvt
}

// DiagnosticsGen returns the generation of the last diagnostics published
// for uri (0 when none); a later publish has a larger generation.
func (c *Client) DiagnosticsGen(uri protocol.DocumentURI) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.diags[uri]; e != nil {
		return e.gen
	}
	return 0
}

// Diagnostics returns the last diagnostics published for uri and whether
// any were published.
func (c *Client) Diagnostics(uri protocol.DocumentURI) ([]protocol.Diagnostic, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.diags[uri]
	if e == nil {
		return nil, false
	}
	return e.items, true
}

// AllDiagnostics returns every non-empty set of published diagnostics by
// document.
func (c *Client) AllDiagnostics() map[protocol.DocumentURI][]protocol.Diagnostic {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[protocol.DocumentURI][]protocol.Diagnostic, len(c.diags))
	for u, e := range c.diags {
		if len(e.items) > 0 {
			out[u] = e.items
		}
	}
	return out
}

// WaitDiagnostics waits until diagnostics newer than generation after are
// published for uri, at most wait; when the server tells which document
// version it diagnosed, that version must be at least minVersion (so a
// late publish for older text does not count). It reports whether fresh
// ones arrived.
func (c *Client) WaitDiagnostics(ctx context.Context, uri protocol.DocumentURI, after uint64, minVersion int32, wait time.Duration) (bool, error) {
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		c.mu.Lock()
		e := c.diags[uri]
		ch := c.changed
		c.mu.Unlock()
		if e != nil && e.gen > after && (e.version == nil || *e.version >= minVersion) {
			return true, nil
		}
		if timedOut, err := c.await(ctx, ch, nil, t.C); timedOut || err != nil {
			return false, err
		}
	}
}

// WaitIdle waits until the server has no work-done progress in flight and
// nothing was published for quiet (or for three times the server's last
// change-to-publish latency, when longer), at most limit. When nothing was
// published since the last change this client sent, it waits at least five
// times quiet, so a server slow to start re-checking is not taken for idle.
// It reports whether the server went idle.
func (c *Client) WaitIdle(ctx context.Context, quiet, limit time.Duration) (bool, error) {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		busy := len(c.progress) > 0
		since := time.Since(c.lastEvt)
		// A server re-checks in rounds after a change (the changed file
		// first, then its dependents), each about as long as the first:
		// stay until a few rounds' time passed without news.
		wait := max(quiet, 3*c.latency)
		if !c.lastPub.After(c.lastChg) {
			wait = max(5*quiet, wait)
		}
		ch := c.changed
		c.mu.Unlock()
		var tick <-chan time.Time
		if !busy {
			if since >= wait {
				return true, nil
			}
			tick = time.After(wait - since)
		}
		if timedOut, err := c.await(ctx, ch, tick, deadline.C); timedOut || err != nil {
			return false, err
		}
	}
}

// WaitSynced waits until the server has published diagnostics for the
// current text of every open document (by version when the server reports
// versions, else any publish after the text was sent), at most limit. It
// reports whether all of them caught up.
func (c *Client) WaitSynced(ctx context.Context, limit time.Duration) (bool, error) {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		behind := false
		for _, d := range c.docs {
			e := c.diags[d.URI]
			switch {
			case e == nil:
				behind = true
			case e.version != nil:
				behind = behind || *e.version < d.Version
			default:
				behind = behind || e.gen <= d.gen
			}
		}
		ch := c.changed
		c.mu.Unlock()
		if !behind {
			return true, nil
		}
		if timedOut, err := c.await(ctx, ch, nil, deadline.C); timedOut || err != nil {
			return false, err
		}
	}
}

// WaitReady waits until a freshly started server has loaded its project,
// at most limit: many servers report the load as work-done progress, some
// only once the first document is open, and answer poorly until it ends.
// The server is taken as ready when no progress is in flight and either a
// progress report has ended or nothing (progress or document change)
// happened for settle. A server that sends experimental/serverStatus
// (rust-analyzer, whose load is several progress reports in a row) is
// ready when that status says quiescent. It reports whether the server
// became ready.
func (c *Client) WaitReady(ctx context.Context, settle, limit time.Duration) (bool, error) {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		if c.status {
			quiescent, ch := c.quiescent, c.changed
			c.mu.Unlock()
			if quiescent {
				return true, nil
			}
			if timedOut, err := c.await(ctx, ch, nil, deadline.C); timedOut || err != nil {
				return false, err
			}
			continue
		}
		busy := len(c.progress) > 0
		loaded := c.progEnds > 0
		last := c.lastProg
		if c.lastChg.After(last) {
			last = c.lastChg
		}
		if !busy && loaded {
			c.mu.Unlock()
			return true, nil
		}
		ch := c.changed
		c.mu.Unlock()
		var tick <-chan time.Time
		if !busy {
			since := time.Since(last)
			if since >= settle {
				return true, nil
			}
			tick = time.After(settle - since)
		}
		if timedOut, err := c.await(ctx, ch, tick, deadline.C); timedOut || err != nil {
			return false, err
		}
	}
}

// Busy returns the titles of work-done progress in flight.
func (c *Client) Busy() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.progress))
	for _, t := range c.progress {
		out = append(out, t)
	}
	return out
}

// hashOf returns the SHA-256 of b.
func hashOf(b []byte) [32]byte { return sha256.Sum256(b) }

// await blocks until the client's state changes (ch) or tick fires, so a
// wait loop can look again. It reports timedOut when deadline fires first,
// and an error when ctx ends or the connection closes.
func (c *Client) await(ctx context.Context, ch <-chan struct{}, tick, deadline <-chan time.Time) (timedOut bool, err error) {
	select {
	case <-ch:
	case <-tick:
	case <-deadline:
		return true, nil
	case <-ctx.Done():
		return false, ctx.Err()
	case <-c.conn.Done():
		return false, &jsonrpc.ClosedError{Cause: c.conn.Err()}
	}
	return false, nil
}
