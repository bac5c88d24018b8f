package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"yolop.dev/extensions/lsp/internal/client"
	"yolop.dev/extensions/lsp/internal/protocol"
)

// RenameArgs are lsp_rename's arguments.
type RenameArgs struct {
	PositionArgs
	NewName string `json:"new_name"`
}

// A RenamePlan is a computed rename waiting to be applied.
type RenamePlan struct {
	*Plan
	Old, New string
}

// PlanRename asks the server for the rename's workspace edit and checks it
// (see [Plan]); nothing is written.
func (s *Service) PlanRename(ctx context.Context, raw json.RawMessage) (*RenamePlan, error) {
	var a RenameArgs
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.NewName) == "" {
		return nil, fmt.Errorf("%w: new_name is required", ErrInvalidArgs)
	}
	t, err := s.at(ctx, a.PositionArgs)
	if err != nil {
		return nil, err
	}
	if !client.Supported(t.h.Client.Capabilities().RenameProvider) {
		return nil, fmt.Errorf("%s does not support rename", t.h.Name)
	}
	var we *protocol.WorkspaceEdit
	if err := s.call(ctx, t.h, "textDocument/rename", protocol.RenameParams{
		TextDocumentPositionParams: protocol.TextDocumentPositionParams{
			TextDocument: protocol.TextDocumentIdentifier{URI: t.doc.URI}, Position: t.pos,
		},
		NewName: a.NewName,
	}, &we); err != nil {
		return nil, err
	}
	if we == nil || (len(we.Changes) == 0 && len(we.DocumentChanges) == 0) {
		return nil, fmt.Errorf("%s found nothing to rename at %s", t.h.Name, s.where(t))
	}
	p, err := s.plan(t.h, *we)
	if err != nil {
		return nil, err
	}
	return &RenamePlan{Plan: p, Old: t.word, New: a.NewName}, nil
}

// Rename implements lsp_rename: it plans the rename, applies it with
// per-file progress, and lists the changed files.
func (s *Service) Rename(ctx context.Context, raw json.RawMessage, progress func(string)) (string, error) {
	rp, err := s.PlanRename(ctx, raw)
	if err != nil {
		return "", err
	}
	return s.ApplyRename(ctx, rp, progress)
}

// ApplyRename applies a planned rename (see [Service.Apply]).
func (s *Service) ApplyRename(ctx context.Context, rp *RenamePlan, progress func(string)) (string, error) {
	files, err := s.Apply(ctx, rp.Plan, progress)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Renamed %s to `%s`: %s in %s:", quoteOr(rp.Old, "the symbol"), rp.New, plural(rp.Edits(), "edit", "edits"), plural(len(files), "file", "files"))
	for _, f := range files {
		b.WriteString("\n")
		b.WriteString(f)
	}
	return b.String(), nil
}
