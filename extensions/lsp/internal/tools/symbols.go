package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"yolop.dev/extensions/lsp/internal/client"
	"yolop.dev/extensions/lsp/internal/protocol"
)

// SymbolsArgs are lsp_symbols' arguments: a file for its outline, or a
// query to search the workspace (both: the file's outline filtered by the
// query).
type SymbolsArgs struct {
	File  string `json:"file,omitempty"`
	Query string `json:"query,omitempty"`
}

// Symbols implements lsp_symbols.
func (s *Service) Symbols(ctx context.Context, raw json.RawMessage) (string, error) {
	var a SymbolsArgs
	if err := decodeArgs(raw, &a); err != nil {
		return "", err
	}
	if a.File != "" {
		return s.documentSymbols(ctx, a)
	}
	if strings.TrimSpace(a.Query) == "" {
		return "", fmt.Errorf("%w: give file (for its outline) or query (to search the workspace)", ErrInvalidArgs)
	}
	return s.workspaceSymbols(ctx, a.Query)
}

func (s *Service) documentSymbols(ctx context.Context, a SymbolsArgs) (string, error) {
	path, err := s.resolvePath(a.File)
	if err != nil {
		return "", err
	}
	h, err := s.server(ctx, path)
	if err != nil {
		return "", err
	}
	doc, err := s.open(ctx, h, path)
	if err != nil {
		return "", err
	}
	if !client.Supported(h.Client.Capabilities().DocumentSymbolProvider) {
		return "", fmt.Errorf("%s does not provide document symbols", h.Name)
	}
	var res json.RawMessage
	if err := s.call(ctx, h, "textDocument/documentSymbol", protocol.DocumentSymbolParams{TextDocument: protocol.TextDocumentIdentifier{URI: doc.URI}}, &res); err != nil {
		return "", err
	}
	tree, flat, err := protocol.DocumentSymbols(res)
	if err != nil {
		return "", fmt.Errorf("%s sent symbols this client cannot read: %w", h.Name, err)
	}
	enc := h.Client.Encoding()
	q := strings.ToLower(a.Query)
	var lines []string
	var walk func(ds []protocol.DocumentSymbol, depth int)
	walk = func(ds []protocol.DocumentSymbol, depth int) {
		for _, d := range ds {
			if q == "" || strings.Contains(strings.ToLower(d.Name), q) {
				l, _ := doc.Text.Column(d.SelectionRange.Start, enc)
				line := fmt.Sprintf("%s%s %s", strings.Repeat("  ", depth), protocol.SymbolKindName(d.Kind), d.Name)
				if d.Detail != "" {
					line += " " + clip(oneLine(d.Detail), 100)
				}
				lines = append(lines, fmt.Sprintf("%s — line %d", line, l))
			}
			walk(d.Children, depth+1)
		}
	}
	walk(tree, 0)
	for _, si := range flat {
		if q != "" && !strings.Contains(strings.ToLower(si.Name), q) {
			continue
		}
		l, _ := doc.Text.Column(si.Location.Range.Start, enc)
		line := fmt.Sprintf("%s %s", protocol.SymbolKindName(si.Kind), si.Name)
		if si.ContainerName != "" {
			line += " (in " + si.ContainerName + ")"
		}
		lines = append(lines, fmt.Sprintf("%s — line %d", line, l))
	}
	if len(lines) == 0 {
		if q != "" {
			return fmt.Sprintf("No symbols matching %q in %s.", a.Query, s.rel(path)), nil
		}
		return fmt.Sprintf("No symbols in %s.", s.rel(path)), nil
	}
	return s.capLines(fmt.Sprintf("%s in %s", plural(len(lines), "symbol", "symbols"), s.rel(path)), lines), nil
}

func (s *Service) capLines(header string, lines []string) string {
	limit := s.m.Config().Limit()
	var b strings.Builder
	b.WriteString(header)
	if len(lines) > limit {
		fmt.Fprintf(&b, "; showing the first %d, %d more not shown", limit, len(lines)-limit)
		lines = lines[:limit]
	}
	b.WriteString(":\n")
	b.WriteString(strings.Join(lines, "\n"))
	return b.String()
}

func (s *Service) workspaceSymbols(ctx context.Context, query string) (string, error) {
	hs, errs := s.m.Workspace(ctx)
	if len(hs) == 0 {
		if len(errs) > 0 {
			return "", errors.Join(errs...)
		}
		return "No language server handles the files in this workspace.", nil
	}
	type hit struct {
		line string
		rank int
	}
	var hits []hit
	q := strings.ToLower(query)
	for _, h := range hs {
		if !client.Supported(h.Client.Capabilities().WorkspaceSymbolProvider) {
			continue
		}
		if _, err := s.m.Refresh(ctx, h); err != nil {
			return "", s.callError(ctx, h, "sync", err)
		}
		if err := s.m.Settle(ctx, h); err != nil {
			return "", s.callError(ctx, h, "initial load", err)
		}
		var res []protocol.SymbolInformation
		if err := s.call(ctx, h, "workspace/symbol", protocol.WorkspaceSymbolParams{Query: query}, &res); err != nil {
			return "", err
		}
		tx := s.texts(h)
		for _, si := range res {
			pl := s.place(tx, si.Location)
			line := fmt.Sprintf("%s %s — %s:%d:%d", protocol.SymbolKindName(si.Kind), si.Name, pl.rel, pl.line, pl.col)
			if si.ContainerName != "" {
				line += " (in " + si.ContainerName + ")"
			}
			// Rank: exact names, then names containing the query, then
			// the server's fuzzy matches; inside the workspace first.
			name := strings.ToLower(si.Name)
			if i := strings.LastIndexByte(name, '.'); i >= 0 {
				name = name[i+1:]
			}
			rank := 2
			switch {
			case name == q:
				rank = 0
			case strings.Contains(name, q):
				rank = 1
			}
			if pl.rel == pl.path {
				rank += 3 // outside the workspace root
			}
			hits = append(hits, hit{line, rank})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].rank < hits[j].rank })
	lines := make([]string, len(hits))
	for i, h := range hits {
		lines[i] = h.line
	}
	var b strings.Builder
	if len(lines) == 0 {
		fmt.Fprintf(&b, "No workspace symbols match %q.", query)
	} else {
		b.WriteString(s.capLines(fmt.Sprintf("%s matching %q", plural(len(lines), "symbol", "symbols"), query), lines))
	}
	for _, e := range errs {
		fmt.Fprintf(&b, "\nNot searched: %v", e)
	}
	return b.String(), nil
}
