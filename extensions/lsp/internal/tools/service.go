// Package tools implements the seven lsp_* tools of the lsp extension as
// plain Go over the server [manager.Manager]: definition, references,
// hover, diagnostics, rename, symbols and code actions. Every answer is
// compact text for an agent, with paths relative to the workspace root and
// 1-based line and column numbers counted in characters (Unicode code
// points), whatever position encoding the server negotiated.
//
// Edits (rename, code actions) go through a two-step [Plan]: the server's
// WorkspaceEdit is checked — only files inside the workspace root, no file
// create/rename/delete operations, no overlapping edits — and applied to
// the content the server saw; [Service.Apply] then refuses, writing
// nothing, when any of those files changed on disk since.
package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/yep"
	"yolop.dev/extensions/lsp/internal/client"
	"yolop.dev/extensions/lsp/internal/manager"
	"yolop.dev/extensions/lsp/internal/protocol"
)

// A Service runs the tools against a manager's servers. Its methods are
// safe for concurrent use.
type Service struct {
	m   *manager.Manager
	log hclog.Logger

	mu sync.Mutex
	// applied collects the files written by server-initiated edits
	// (workspace/applyEdit) while a code action's command runs; two code
	// actions applied at the same moment may each list the other's files.
	applied []string
}

// New returns a Service over m. Pass the returned service's
// [Service.ServerApplyEdit] as the manager's Options.ApplyEdit so
// server-initiated edits get the same safety checks.
func New(m *manager.Manager, log hclog.Logger) *Service {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Service{m: m, log: log}
}

// Manager returns the service's manager.
func (s *Service) Manager() *manager.Manager { return s.m }

// PositionArgs address a place in a file: a path (relative to the
// workspace root, or absolute), a 1-based line, and a 1-based column in
// characters — or, instead of the column, a symbol name on that line.
type PositionArgs struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column,omitempty"`
	Symbol string `json:"symbol,omitempty"`
}

// target is a resolved position: the server, the synced document and the
// LSP position in the server's encoding.
type target struct {
	h   *manager.Handle
	doc *client.Document
	pos protocol.Position
	// word is the identifier at the position, if any.
	word string
}

func (s *Service) root() string { return s.m.Root() }

// resolvePath makes a tool's file argument absolute and checks it exists.
func (s *Service) resolvePath(file string) (string, error) {
	if strings.TrimSpace(file) == "" {
		return "", fmt.Errorf("%w: file is required (a path relative to the workspace root)", ErrInvalidArgs)
	}
	p := file
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.root(), p)
	}
	p = filepath.Clean(p)
	fi, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("%w: file %s: %v", ErrInvalidArgs, file, errors.Unwrap(err))
	}
	if fi.IsDir() {
		return "", fmt.Errorf("%w: %s is a directory; give a source file", ErrInvalidArgs, file)
	}
	return p, nil
}

// rel returns path relative to the workspace root, or as it is when it
// lies outside.
func (s *Service) rel(path string) string {
	r, err := filepath.Rel(s.root(), path)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return path
	}
	return filepath.ToSlash(r)
}

// server returns the warm server for a file and brings its view up to date.
func (s *Service) server(ctx context.Context, path string) (*manager.Handle, error) {
	h, err := s.m.For(ctx, path)
	if err != nil {
		return nil, err
	}
	if _, err := s.m.Refresh(ctx, h); err != nil {
		return nil, s.callError(ctx, h, "sync", err)
	}
	return h, nil
}

// open syncs a document and, on a fresh server, waits for it to settle.
func (s *Service) open(ctx context.Context, h *manager.Handle, path string) (*client.Document, error) {
	doc, err := h.Client.Sync(ctx, path)
	if err != nil {
		return nil, s.callError(ctx, h, "textDocument/didOpen", err)
	}
	if err := s.m.Settle(ctx, h); err != nil {
		return nil, s.callError(ctx, h, "initial load", err)
	}
	return doc, nil
}

// at resolves PositionArgs.
func (s *Service) at(ctx context.Context, a PositionArgs) (*target, error) {
	path, err := s.resolvePath(a.File)
	if err != nil {
		return nil, err
	}
	if a.Line < 1 {
		return nil, fmt.Errorf("%w: line must be 1 or more (lines are 1-based)", ErrInvalidArgs)
	}
	if a.Column < 1 && a.Symbol == "" {
		return nil, fmt.Errorf("%w: give column (1-based, in characters) or symbol (a name on line %d)", ErrInvalidArgs, a.Line)
	}
	h, err := s.server(ctx, path)
	if err != nil {
		return nil, err
	}
	doc, err := s.open(ctx, h, path)
	if err != nil {
		return nil, err
	}
	if a.Line > doc.Text.LineCount() {
		return nil, fmt.Errorf("%w: line %d is past the end of %s (%d lines)", ErrInvalidArgs, a.Line, a.File, doc.Text.LineCount())
	}
	col := a.Column
	line := doc.Text.Line(a.Line - 1)
	if a.Symbol != "" {
		c, ok := findSymbol(line, a.Symbol, a.Column)
		if !ok {
			return nil, fmt.Errorf("%w: %q does not occur on line %d of %s: %s", ErrInvalidArgs, a.Symbol, a.Line, a.File, strings.TrimSpace(line))
		}
		col = c
	}
	pos, err := doc.Text.Position(a.Line, col, h.Client.Encoding())
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidArgs, a.File, err)
	}
	return &target{h: h, doc: doc, pos: pos, word: wordAt([]rune(line), col)}, nil
}

// isIdent reports whether r can be part of an identifier.
func isIdent(r rune) bool {
	return r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// findSymbol returns the 1-based code-point column of sym as a whole word
// on line: the occurrence containing near when near > 0, else the first.
func findSymbol(line, sym string, near int) (int, bool) {
	rl, rs := []rune(line), []rune(sym)
	var cols []int
	for i := 0; i+len(rs) <= len(rl); i++ {
		if string(rl[i:i+len(rs)]) != sym {
			continue
		}
		if i > 0 && isIdent(rl[i-1]) && isIdent(rs[0]) {
			continue
		}
		if j := i + len(rs); j < len(rl) && isIdent(rl[j]) && isIdent(rs[len(rs)-1]) {
			continue
		}
		cols = append(cols, i+1)
	}
	if len(cols) == 0 {
		return 0, false
	}
	if near > 0 {
		for _, c := range cols {
			if near >= c && near < c+len(rs) {
				return c, true
			}
		}
		best := cols[0]
		for _, c := range cols {
			if abs(c-near) < abs(best-near) {
				best = c
			}
		}
		return best, true
	}
	return cols[0], true
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// wordAt returns the identifier covering 1-based column col.
func wordAt(line []rune, col int) string {
	i := col - 1
	if i < 0 || i >= len(line) || !isIdent(line[i]) {
		return ""
	}
	a, b := i, i
	for a > 0 && isIdent(line[a-1]) {
		a--
	}
	for b < len(line) && isIdent(line[b]) {
		b++
	}
	return string(line[a:b])
}

// call sends one request under the configured timeout and explains
// failures.
func (s *Service) call(ctx context.Context, h *manager.Handle, method string, params, result any) error {
	cctx, cancel := context.WithTimeout(ctx, s.m.Config().RequestTimeout())
	defer cancel()
	err := h.Client.Call(cctx, method, params, result)
	if err != nil {
		return s.callError(ctx, h, method, err)
	}
	return nil
}

// callError turns a failed request into a message naming the server.
func (s *Service) callError(ctx context.Context, h *manager.Handle, method string, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s did not answer %s within %v; it may still be indexing the workspace — retry, or raise request_timeout_ms in the lsp extension's config", h.Name, method, s.m.Config().RequestTimeout())
	case errors.Is(err, jsonrpc.ErrClosed):
		var ee *manager.ExitedError
		if errors.As(err, &ee) {
			return fmt.Errorf("%s failed: %w", method, ee)
		}
		return fmt.Errorf("%s failed: language server %s is gone (%v); it is restarted on the next call", method, h.Name, err)
	case errors.Is(err, yep.ErrMethodNotFound):
		return fmt.Errorf("%s does not support %s", h.Name, method)
	}
	var we *yep.Error
	if errors.As(err, &we) {
		return fmt.Errorf("%s answered %s with an error: %s", h.Name, method, we.Message)
	}
	return fmt.Errorf("%s: %s: %w", h.Name, method, err)
}

// texts caches file contents for formatting result locations.
type texts struct {
	h     *manager.Handle
	files map[string]*protocol.Text
}

func (s *Service) texts(h *manager.Handle) *texts {
	return &texts{h: h, files: map[string]*protocol.Text{}}
}

func (t *texts) get(path string) *protocol.Text {
	if tx, ok := t.files[path]; ok {
		return tx
	}
	var tx *protocol.Text
	if d := t.h.Client.Document(path); d != nil {
		tx = d.Text
	} else if b, err := os.ReadFile(path); err == nil {
		tx = protocol.NewText(string(b))
	}
	t.files[path] = tx
	return tx
}

// place is a location converted for the agent.
type place struct {
	path      string // absolute
	rel       string
	line, col int
	text      string // the source line, trimmed
}

func (s *Service) place(t *texts, loc protocol.Location) place {
	p := loc.URI.Path()
	if p == "" {
		return place{path: string(loc.URI), rel: string(loc.URI), line: loc.Range.Start.Line + 1, col: loc.Range.Start.Character + 1}
	}
	pl := place{path: p, rel: s.rel(p)}
	if tx := t.get(p); tx != nil {
		pl.line, pl.col = tx.Column(loc.Range.Start, t.h.Client.Encoding())
		pl.text = clip(strings.TrimSpace(tx.Line(loc.Range.Start.Line)), 160)
	} else {
		pl.line, pl.col = loc.Range.Start.Line+1, loc.Range.Start.Character+1
	}
	return pl
}

func (p place) String() string {
	s := fmt.Sprintf("%s:%d:%d", p.rel, p.line, p.col)
	if p.text != "" {
		s += ": " + p.text
	}
	return s
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func sortPlaces(ps []place) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].rel != ps[j].rel {
			return ps[i].rel < ps[j].rel
		}
		if ps[i].line != ps[j].line {
			return ps[i].line < ps[j].line
		}
		return ps[i].col < ps[j].col
	})
}

// where formats the tool's own position for messages.
func (s *Service) where(t *target) string {
	l, c := t.doc.Text.Column(t.pos, t.h.Client.Encoding())
	return fmt.Sprintf("%s:%d:%d", s.rel(t.doc.Path), l, c)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// decodeArgs decodes a tool's JSON arguments, refusing unknown fields so a
// misspelt argument ("colum") is reported instead of silently ignored.
func decodeArgs(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage(`{}`)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v (see the tool's input schema)", ErrInvalidArgs, err)
	}
	return nil
}

// remaining returns the time left until deadline, or zero.
func remaining(deadline time.Time) time.Duration {
	d := time.Until(deadline)
	if d < 0 {
		return 0
	}
	return d
}
