package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"yolop.dev/extensions/lsp/internal/client"
	"yolop.dev/extensions/lsp/internal/protocol"
)

// DiagnosticsArgs are lsp_diagnostics' arguments.
type DiagnosticsArgs struct {
	// File limits the answer to one file; empty means the whole workspace.
	File string `json:"file,omitempty"`
	// Severity is the least severe level shown: "error", "warning",
	// "information" or "hint" (the default: everything).
	Severity string `json:"severity,omitempty"`
}

var severityNames = map[int]string{
	protocol.SeverityError: "error", protocol.SeverityWarning: "warning",
	protocol.SeverityInformation: "info", protocol.SeverityHint: "hint",
}

func severityLevel(s string) (int, error) {
	switch strings.ToLower(s) {
	case "", "hint", "all":
		return protocol.SeverityHint, nil
	case "error", "errors":
		return protocol.SeverityError, nil
	case "warning", "warnings", "warn":
		return protocol.SeverityWarning, nil
	case "information", "info":
		return protocol.SeverityInformation, nil
	}
	return 0, fmt.Errorf("%w: severity %q; use error, warning, information or hint", ErrInvalidArgs, s)
}

// diag is one diagnostic placed for the agent.
type diag struct {
	place
	severity int
	message  string
	source   string
}

// Diagnostics implements lsp_diagnostics for one file or the workspace,
// with pushed or pulled diagnostics, whichever the server supports. After
// a change it waits briefly (diagnostics_wait_ms) for fresh results.
func (s *Service) Diagnostics(ctx context.Context, raw json.RawMessage) (string, error) {
	var a DiagnosticsArgs
	if err := decodeArgs(raw, &a); err != nil {
		return "", err
	}
	level, err := severityLevel(a.Severity)
	if err != nil {
		return "", err
	}
	if a.File != "" {
		return s.fileDiagnostics(ctx, a.File, level)
	}
	return s.workspaceDiagnostics(ctx, level)
}

func (s *Service) fileDiagnostics(ctx context.Context, file string, level int) (string, error) {
	path, err := s.resolvePath(file)
	if err != nil {
		return "", err
	}
	h, err := s.m.For(ctx, path)
	if err != nil {
		return "", err
	}
	uri := protocol.URIFromPath(path)
	before := h.Client.Document(path)
	gen := h.Client.DiagnosticsGen(uri)
	refreshed, err := s.m.Refresh(ctx, h)
	if err != nil {
		return "", s.callError(ctx, h, "sync", err)
	}
	doc, err := s.open(ctx, h, path)
	if err != nil {
		return "", err
	}
	var items []protocol.Diagnostic
	if client.Supported(h.Client.Capabilities().DiagnosticProvider) {
		var rep protocol.DocumentDiagnosticReport
		if err := s.call(ctx, h, "textDocument/diagnostic", protocol.DocumentDiagnosticParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}}, &rep); err != nil {
			return "", err
		}
		items = rep.Items
	} else {
		changed := before == nil || before.Version != doc.Version
		_, published := h.Client.Diagnostics(uri)
		deadline := time.Now().Add(s.m.Config().DiagnosticsWait())
		if changed || !published {
			fresh, err := h.Client.WaitDiagnostics(ctx, uri, gen, doc.Version, remaining(deadline))
			if err != nil {
				return "", s.callError(ctx, h, "textDocument/publishDiagnostics", err)
			}
			if fresh {
				// A server may publish in stages (syntax, then types):
				// let it settle.
				if _, err := h.Client.WaitIdle(ctx, 150*time.Millisecond, remaining(deadline)); err != nil {
					return "", s.callError(ctx, h, "textDocument/publishDiagnostics", err)
				}
			}
		} else if refreshed {
			// Other files changed: give the server a moment to re-check.
			if _, err := h.Client.WaitIdle(ctx, 300*time.Millisecond, remaining(deadline)); err != nil {
				return "", s.callError(ctx, h, "textDocument/publishDiagnostics", err)
			}
		}
		items, _ = h.Client.Diagnostics(uri)
	}
	tx := s.texts(h)
	var ds []diag
	for _, d := range items {
		if sev(d) > level {
			continue
		}
		ds = append(ds, s.diag(tx, uri, d))
	}
	if len(ds) == 0 {
		return fmt.Sprintf("No problems in %s (%s).", s.rel(path), h.Name), nil
	}
	return s.formatDiags(ds, s.m.Config().Limit()), nil
}

func sev(d protocol.Diagnostic) int {
	if d.Severity == 0 {
		return protocol.SeverityError
	}
	return d.Severity
}

func (s *Service) diag(tx *texts, uri protocol.DocumentURI, d protocol.Diagnostic) diag {
	src := d.Source
	if code := strings.Trim(string(d.Code), `"`); code != "" && code != "null" {
		if src != "" {
			src += "/"
		}
		src += code
	}
	pl := s.place(tx, protocol.Location{URI: uri, Range: d.Range})
	pl.text = ""
	return diag{place: pl, severity: sev(d), message: d.Message, source: src}
}

func (s *Service) workspaceDiagnostics(ctx context.Context, level int) (string, error) {
	hs, errs := s.m.Workspace(ctx)
	if len(hs) == 0 {
		if len(errs) > 0 {
			return "", errors.Join(errs...)
		}
		return "No language server handles the files in this workspace.", nil
	}
	deadline := time.Now().Add(s.m.Config().DiagnosticsWait())
	var ds []diag
	var names []string
	for _, h := range hs {
		names = append(names, h.Name)
		if _, err := s.m.Refresh(ctx, h); err != nil {
			return "", s.callError(ctx, h, "sync", err)
		}
		if _, err := h.Client.WaitSynced(ctx, remaining(deadline)); err != nil {
			return "", s.callError(ctx, h, "textDocument/publishDiagnostics", err)
		}
		if _, err := h.Client.WaitIdle(ctx, 300*time.Millisecond, remaining(deadline)); err != nil {
			return "", s.callError(ctx, h, "textDocument/publishDiagnostics", err)
		}
		tx := s.texts(h)
		for uri, items := range h.Client.AllDiagnostics() {
			for _, d := range items {
				if sev(d) <= level {
					ds = append(ds, s.diag(tx, uri, d))
				}
			}
		}
	}
	var b strings.Builder
	if len(ds) == 0 {
		fmt.Fprintf(&b, "No problems found in the workspace (%s).", strings.Join(names, ", "))
	} else {
		b.WriteString(s.formatDiags(ds, s.m.Config().Limit()))
	}
	for _, e := range errs {
		fmt.Fprintf(&b, "\nNot checked: %v", e)
	}
	return b.String(), nil
}

func (s *Service) formatDiags(ds []diag, limit int) string {
	sort.SliceStable(ds, func(i, j int) bool {
		if ds[i].rel != ds[j].rel {
			return ds[i].rel < ds[j].rel
		}
		if ds[i].line != ds[j].line {
			return ds[i].line < ds[j].line
		}
		return ds[i].severity < ds[j].severity
	})
	counts := map[int]int{}
	files := map[string]bool{}
	for _, d := range ds {
		counts[d.severity]++
		files[d.rel] = true
	}
	var parts []string
	for _, sv := range []int{1, 2, 3, 4} {
		if n := counts[sv]; n > 0 {
			name := severityNames[sv]
			if n > 1 && sv <= 2 {
				name += "s"
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, name))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s) in %s", plural(len(ds), "problem", "problems"), strings.Join(parts, ", "), plural(len(files), "file", "files"))
	if len(ds) > limit {
		fmt.Fprintf(&b, "; showing the first %d, %d more not shown", limit, len(ds)-limit)
		ds = ds[:limit]
	}
	b.WriteString(":")
	for _, d := range ds {
		fmt.Fprintf(&b, "\n%s:%d:%d: %s: %s", d.rel, d.line, d.col, severityNames[d.severity], oneLine(d.message))
		if d.source != "" {
			fmt.Fprintf(&b, " (%s)", d.source)
		}
	}
	return b.String()
}

func oneLine(s string) string {
	return clip(strings.Join(strings.Fields(s), " "), 300)
}
