package tools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"yolop.dev/extensions/lsp/internal/manager"
	"yolop.dev/extensions/lsp/internal/protocol"
	"yolop.dev/internal/atomicfile"
)

// A Plan is a checked workspace edit, ready for [Service.Apply]: the new
// content of every file, computed from the content the server saw.
type Plan struct {
	h     *manager.Handle
	files []plannedFile
	edits int
}

type plannedFile struct {
	path  string
	rel   string
	base  [32]byte // hash of the content the edit was computed against
	mode  fs.FileMode
	next  []byte
	edits int
}

// Files returns the files the plan changes, relative to the workspace
// root.
func (p *Plan) Files() []string {
	out := make([]string, len(p.files))
	for i, f := range p.files {
		out[i] = f.rel
	}
	return out
}

// Edits returns the number of text edits in the plan.
func (p *Plan) Edits() int { return p.edits }

// plan checks a server's workspace edit and computes the new contents.
func (s *Service) plan(h *manager.Handle, we protocol.WorkspaceEdit) (*Plan, error) {
	byPath := map[string][]protocol.TextEdit{}
	versions := map[string]*int32{}
	for uri, edits := range we.Changes {
		p := uri.Path()
		if p == "" {
			return nil, fmt.Errorf("%w: the edit touches %s, which is not a local file", ErrUnsafeEdit, uri)
		}
		byPath[p] = append(byPath[p], edits...)
	}
	for _, raw := range we.DocumentChanges {
		var probe struct {
			Kind string `json:"kind"`
		}
		_ = json.Unmarshal(raw, &probe)
		if probe.Kind != "" {
			return nil, fmt.Errorf("%w: the edit would %s files, which the lsp tools do not do; make that change by hand", ErrUnsafeEdit, probe.Kind)
		}
		var tde protocol.TextDocumentEdit
		if err := json.Unmarshal(raw, &tde); err != nil {
			return nil, fmt.Errorf("%s sent an edit this client cannot read: %w", h.Name, err)
		}
		p := tde.TextDocument.URI.Path()
		if p == "" {
			return nil, fmt.Errorf("%w: the edit touches %s, which is not a local file", ErrUnsafeEdit, tde.TextDocument.URI)
		}
		byPath[p] = append(byPath[p], tde.Edits...)
		versions[p] = tde.TextDocument.Version
	}
	root, err := filepath.EvalSymlinks(s.root())
	if err != nil {
		return nil, fmt.Errorf("workspace root %s: %w", s.root(), err)
	}
	var outside []string
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
		if !inside(root, p) {
			outside = append(outside, p)
		}
	}
	if len(outside) > 0 {
		sort.Strings(outside)
		return nil, fmt.Errorf("%w: it would change files outside the workspace root %s: %s; nothing was written", ErrUnsafeEdit, s.root(), strings.Join(outside, ", "))
	}
	sort.Strings(paths)
	plan := &Plan{h: h}
	enc := h.Client.Encoding()
	for _, p := range paths {
		disk, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("%w: cannot read %s: %v", ErrUnsafeEdit, s.rel(p), err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%w: cannot stat %s: %v", ErrUnsafeEdit, s.rel(p), err)
		}
		base := disk
		if doc := h.Client.Document(p); doc != nil {
			// The server computed the edit against the text it was sent.
			if v := versions[p]; v != nil && *v != doc.Version {
				return nil, fmt.Errorf("%w: %s changed since the edit was computed (version %d, now %d); run the tool again", ErrUnsafeEdit, s.rel(p), *v, doc.Version)
			}
			base = []byte(doc.Text.String())
			if !bytes.Equal(base, disk) {
				return nil, fmt.Errorf("%w: %s changed on disk since the edit was computed; run the tool again", ErrUnsafeEdit, s.rel(p))
			}
		}
		next, err := applyEdits(protocol.NewText(string(base)), byPath[p], enc)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrUnsafeEdit, s.rel(p), err)
		}
		plan.files = append(plan.files, plannedFile{
			path: p, rel: s.rel(p), base: sha256.Sum256(base), mode: fi.Mode().Perm(), next: next, edits: len(byPath[p]),
		})
		plan.edits += len(byPath[p])
	}
	return plan, nil
}

// inside reports whether p (resolved through symlinks as far as it exists)
// lies inside root.
func inside(root, p string) bool {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	} else if r, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		p = filepath.Join(r, filepath.Base(p))
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// applyEdits applies LSP text edits to a text. Edits must not overlap;
// inserts at one position keep their order.
func applyEdits(t *protocol.Text, edits []protocol.TextEdit, enc protocol.Encoding) ([]byte, error) {
	type span struct {
		start, end, order int
		text              string
	}
	spans := make([]span, len(edits))
	for i, e := range edits {
		a, b := t.Offset(e.Range.Start, enc), t.Offset(e.Range.End, enc)
		if b < a {
			return nil, fmt.Errorf("edit %d has its end before its start", i+1)
		}
		spans[i] = span{a, b, i, e.NewText}
	}
	sort.SliceStable(spans, func(i, j int) bool {
		if spans[i].start != spans[j].start {
			return spans[i].start < spans[j].start
		}
		return spans[i].order < spans[j].order
	})
	src := t.String()
	var out strings.Builder
	pos := 0
	for i, sp := range spans {
		if sp.start < pos {
			return nil, fmt.Errorf("edits %d and %d overlap", spans[i-1].order+1, sp.order+1)
		}
		out.WriteString(src[pos:sp.start])
		out.WriteString(sp.text)
		pos = sp.end
	}
	out.WriteString(src[pos:])
	return []byte(out.String()), nil
}

// Apply writes a plan. It first checks that no file changed on disk since
// the edit was computed and refuses, writing nothing, if one did. Each file
// is replaced atomically; progress, if not nil, is called after each file
// with a line such as "2/5 files patched: pkg/a.go". It returns the changed
// files, relative to the workspace root.
func (s *Service) Apply(ctx context.Context, p *Plan, progress func(string)) ([]string, error) {
	var changed []string
	for _, f := range p.files {
		if err := unchanged(f); err != nil {
			changed = append(changed, f.rel)
		}
	}
	if len(changed) > 0 {
		return nil, fmt.Errorf("%w: %s changed since the edit was computed; nothing was written — run the tool again", ErrUnsafeEdit, strings.Join(changed, ", "))
	}
	var written []string
	var abs []string
	defer func() {
		if len(abs) > 0 {
			p.h.Touched(abs)
			if err := p.h.Client.FilesChanged(context.WithoutCancel(ctx), abs); err != nil {
				s.log.Debug("notify server of applied edit", "error", err)
			}
		}
	}()
	for i, f := range p.files {
		if err := ctx.Err(); err != nil {
			return written, fmt.Errorf("edit interrupted after %d of %d files (%s): %w", len(written), len(p.files), strings.Join(written, ", "), err)
		}
		if err := unchanged(f); err != nil {
			return written, fmt.Errorf("%w: %s changed while the edit was being applied; %d of %d files were written (%s)", ErrUnsafeEdit, f.rel, len(written), len(p.files), strings.Join(written, ", "))
		}
		if err := atomicfile.Write(f.path, f.next, f.mode); err != nil {
			return written, fmt.Errorf("write %s: %w; %d of %d files were written (%s)", f.rel, err, len(written), len(p.files), strings.Join(written, ", "))
		}
		written = append(written, f.rel)
		abs = append(abs, f.path)
		if progress != nil {
			progress(fmt.Sprintf("%d/%d files patched: %s", i+1, len(p.files), f.rel))
		}
	}
	return written, nil
}

func unchanged(f plannedFile) error {
	b, err := os.ReadFile(f.path)
	if err != nil {
		return err
	}
	if sha256.Sum256(b) != f.base {
		return errors.New("changed")
	}
	return nil
}

// ServerApplyEdit serves a server's workspace/applyEdit request (sent while
// a code action's command runs) with the same checks as the tools' own
// edits.
func (s *Service) ServerApplyEdit(ctx context.Context, h *manager.Handle, we protocol.WorkspaceEdit) protocol.ApplyWorkspaceEditResult {
	plan, err := s.plan(h, we)
	if err != nil {
		return protocol.ApplyWorkspaceEditResult{FailureReason: err.Error()}
	}
	files, err := s.Apply(ctx, plan, nil)
	s.mu.Lock()
	s.applied = append(s.applied, files...)
	s.mu.Unlock()
	if err != nil {
		return protocol.ApplyWorkspaceEditResult{FailureReason: err.Error()}
	}
	return protocol.ApplyWorkspaceEditResult{Applied: true}
}
