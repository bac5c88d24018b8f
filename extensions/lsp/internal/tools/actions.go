package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"yolop.dev/extensions/lsp/internal/client"
	"yolop.dev/extensions/lsp/internal/protocol"
)

// CodeActionsArgs are lsp_code_actions' arguments: a position (or a range
// up to end_line/end_column), an optional kind prefix filter, and apply,
// the 1-based number of a listed action to apply.
type CodeActionsArgs struct {
	PositionArgs
	EndLine   int    `json:"end_line,omitempty"`
	EndColumn int    `json:"end_column,omitempty"`
	Kind      string `json:"kind,omitempty"`
	Apply     int    `json:"apply,omitempty"`
}

// CodeActions implements lsp_code_actions: without apply it lists the
// actions available at the position or range; with apply it applies that
// action's edit (with the same safety checks as rename) and runs its
// command, then lists the changed files.
func (s *Service) CodeActions(ctx context.Context, raw json.RawMessage) (string, error) {
	var a CodeActionsArgs
	if err := decodeArgs(raw, &a); err != nil {
		return "", err
	}
	t, err := s.at(ctx, a.PositionArgs)
	if err != nil {
		return "", err
	}
	caps := t.h.Client.Capabilities()
	if !client.Supported(caps.CodeActionProvider) {
		return "", fmt.Errorf("%s does not provide code actions", t.h.Name)
	}
	rng := protocol.Range{Start: t.pos, End: t.pos}
	if a.EndLine > 0 {
		ec := a.EndColumn
		if ec < 1 {
			ec = len([]rune(t.doc.Text.Line(a.EndLine-1))) + 1
		}
		end, err := t.doc.Text.Position(a.EndLine, ec, t.h.Client.Encoding())
		if err != nil {
			return "", fmt.Errorf("%w: end of range: %v", ErrInvalidArgs, err)
		}
		rng.End = end
	}
	var diags []protocol.Diagnostic
	stored, _ := t.h.Client.Diagnostics(t.doc.URI)
	for _, d := range stored {
		if d.Range.Start.Line <= rng.End.Line && d.Range.End.Line >= rng.Start.Line {
			diags = append(diags, d)
		}
	}
	params := protocol.CodeActionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: t.doc.URI},
		Range:        rng,
		Context:      protocol.CodeActionContext{Diagnostics: diags, TriggerKind: 1},
	}
	if diags == nil {
		params.Context.Diagnostics = []protocol.Diagnostic{}
	}
	if a.Kind != "" {
		params.Context.Only = []string{a.Kind}
	}
	var res json.RawMessage
	if err := s.call(ctx, t.h, "textDocument/codeAction", params, &res); err != nil {
		return "", err
	}
	all, err := protocol.DecodeCodeActions(res)
	if err != nil {
		return "", fmt.Errorf("%s sent code actions this client cannot read: %w", t.h.Name, err)
	}
	var actions []protocol.CodeAction
	for _, ca := range all {
		if ca.Disabled == nil && (a.Kind == "" || strings.HasPrefix(ca.Kind, a.Kind)) {
			actions = append(actions, ca)
		}
	}
	if a.Apply == 0 {
		if len(actions) == 0 {
			return fmt.Sprintf("No code actions at %s.", s.where(t)), nil
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s at %s (apply one with apply=<number> and the same position):", plural(len(actions), "code action", "code actions"), s.where(t))
		for i, ca := range actions {
			fmt.Fprintf(&b, "\n%d. %s", i+1, ca.Title)
			if ca.Kind != "" {
				fmt.Fprintf(&b, " [%s]", ca.Kind)
			}
			if ca.IsPreferred {
				b.WriteString(" (preferred)")
			}
		}
		return b.String(), nil
	}
	if a.Apply < 1 || a.Apply > len(actions) {
		return "", fmt.Errorf("%w: apply=%d, but %s are available at %s; list them first (omit apply)", ErrInvalidArgs, a.Apply, plural(len(actions), "code action", "code actions"), s.where(t))
	}
	ca := actions[a.Apply-1]
	if ca.Edit == nil && ca.Command == nil && caps.CodeActionResolve() {
		var resolved protocol.CodeAction
		if err := s.call(ctx, t.h, "codeAction/resolve", ca, &resolved); err != nil {
			return "", err
		}
		ca = resolved
	}
	var files []string
	if ca.Edit != nil {
		plan, err := s.plan(t.h, *ca.Edit)
		if err != nil {
			return "", err
		}
		written, err := s.Apply(ctx, plan, nil)
		if err != nil {
			return "", err
		}
		files = append(files, written...)
	}
	if ca.Command != nil {
		s.mu.Lock()
		s.applied = nil
		s.mu.Unlock()
		if err := s.call(ctx, t.h, "workspace/executeCommand", protocol.ExecuteCommandParams{Command: ca.Command.Command, Arguments: ca.Command.Arguments}, nil); err != nil {
			return "", err
		}
		s.mu.Lock()
		files = append(files, s.applied...)
		s.applied = nil
		s.mu.Unlock()
	}
	if len(files) == 0 {
		return fmt.Sprintf("Applied code action %q; no files changed.", ca.Title), nil
	}
	return fmt.Sprintf("Applied code action %q; changed %s:\n%s", ca.Title, plural(len(files), "file", "files"), strings.Join(dedupe(files), "\n")), nil
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	out := in[:0:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
