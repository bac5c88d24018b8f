package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"yolop.dev/extensions/lsp/internal/client"
	"yolop.dev/extensions/lsp/internal/protocol"
)

// Definition implements lsp_definition: where the symbol at the position
// is defined, one "path:line:column: source line" per result.
func (s *Service) Definition(ctx context.Context, raw json.RawMessage) (string, error) {
	var a PositionArgs
	if err := decodeArgs(raw, &a); err != nil {
		return "", err
	}
	t, err := s.at(ctx, a)
	if err != nil {
		return "", err
	}
	if !client.Supported(t.h.Client.Capabilities().DefinitionProvider) {
		return "", fmt.Errorf("%s does not provide definitions", t.h.Name)
	}
	var res json.RawMessage
	if err := s.call(ctx, t.h, "textDocument/definition", protocol.TextDocumentPositionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: t.doc.URI}, Position: t.pos,
	}, &res); err != nil {
		return "", err
	}
	locs, err := protocol.Locations(res)
	if err != nil {
		return "", fmt.Errorf("%s sent a definition answer this client cannot read: %w", t.h.Name, err)
	}
	if len(locs) == 0 {
		return fmt.Sprintf("No definition found for %s at %s.", quoteOr(t.word, "the symbol"), s.where(t)), nil
	}
	tx := s.texts(t.h)
	var b strings.Builder
	for i, l := range locs {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s.place(tx, l).String())
	}
	return b.String(), nil
}

func quoteOr(w, alt string) string {
	if w == "" {
		return alt
	}
	return "`" + w + "`"
}

// ReferencesArgs are lsp_references' arguments.
type ReferencesArgs struct {
	PositionArgs
	// IncludeDeclaration lists the declaration too; nil means true.
	IncludeDeclaration *bool `json:"include_declaration,omitempty"`
	// Limit caps the lines shown; zero means the configured max_results.
	Limit int `json:"limit,omitempty"`
}

// References implements lsp_references: every use of the symbol at the
// position, capped, with a count of what was cut.
func (s *Service) References(ctx context.Context, raw json.RawMessage) (string, error) {
	var a ReferencesArgs
	if err := decodeArgs(raw, &a); err != nil {
		return "", err
	}
	t, err := s.at(ctx, a.PositionArgs)
	if err != nil {
		return "", err
	}
	if !client.Supported(t.h.Client.Capabilities().ReferencesProvider) {
		return "", fmt.Errorf("%s does not provide references", t.h.Name)
	}
	p := protocol.ReferenceParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: t.doc.URI}, Position: t.pos,
	}}
	p.Context.IncludeDeclaration = a.IncludeDeclaration == nil || *a.IncludeDeclaration
	var locs []protocol.Location
	if err := s.call(ctx, t.h, "textDocument/references", p, &locs); err != nil {
		return "", err
	}
	if len(locs) == 0 {
		return fmt.Sprintf("No references found for %s at %s.", quoteOr(t.word, "the symbol"), s.where(t)), nil
	}
	tx := s.texts(t.h)
	places := make([]place, 0, len(locs))
	seen := map[string]bool{}
	files := map[string]bool{}
	for _, l := range locs {
		pl := s.place(tx, l)
		key := fmt.Sprintf("%s:%d:%d", pl.rel, pl.line, pl.col)
		if seen[key] {
			continue
		}
		seen[key] = true
		files[pl.rel] = true
		places = append(places, pl)
	}
	sortPlaces(places)
	limit := a.Limit
	if limit <= 0 {
		limit = s.m.Config().Limit()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s to %s in %s", plural(len(places), "reference", "references"), quoteOr(t.word, "the symbol"), plural(len(files), "file", "files"))
	if len(places) > limit {
		fmt.Fprintf(&b, "; showing the first %d, %d more not shown (pass a larger limit to see them)", limit, len(places)-limit)
		places = places[:limit]
	}
	b.WriteString(":")
	for _, pl := range places {
		b.WriteString("\n")
		b.WriteString(pl.String())
	}
	return b.String(), nil
}

// Hover implements lsp_hover: the type and documentation of the symbol at
// the position, as plain text.
func (s *Service) Hover(ctx context.Context, raw json.RawMessage) (string, error) {
	var a PositionArgs
	if err := decodeArgs(raw, &a); err != nil {
		return "", err
	}
	t, err := s.at(ctx, a)
	if err != nil {
		return "", err
	}
	if !client.Supported(t.h.Client.Capabilities().HoverProvider) {
		return "", fmt.Errorf("%s does not provide hover information", t.h.Name)
	}
	var h *protocol.Hover
	if err := s.call(ctx, t.h, "textDocument/hover", protocol.TextDocumentPositionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: t.doc.URI}, Position: t.pos,
	}, &h); err != nil {
		return "", err
	}
	text := ""
	if h != nil {
		text = protocol.HoverText(h.Contents)
	}
	if text == "" {
		return fmt.Sprintf("No hover information for %s at %s.", quoteOr(t.word, "the position"), s.where(t)), nil
	}
	return text, nil
}
