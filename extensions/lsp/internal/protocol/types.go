// Package protocol holds the small subset of Language Server Protocol 3.17
// types the lsp extension speaks, and the exact conversion between the
// agent's 1-based line and character (Unicode code point) columns and the
// position encoding a server negotiated.
//
// The types are hand-written and deliberately minimal: only the fields the
// seven tools read or send are declared, and unknown fields are ignored on
// decoding. Fields whose shape varies between servers (hover contents,
// definition results, document symbols) are kept as json.RawMessage and
// decoded by the helpers in this package.
package protocol

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
)

// A DocumentURI is a file URI such as "file:///home/me/x.go".
type DocumentURI string

// URIFromPath returns the file URI of an absolute path.
func URIFromPath(path string) DocumentURI {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path)}
	return DocumentURI(u.String())
}

// Path returns the local path of a file URI, or "" when the URI is not a
// file URI.
func (u DocumentURI) Path() string {
	p, err := url.Parse(string(u))
	if err != nil || p.Scheme != "file" {
		return ""
	}
	return filepath.FromSlash(p.Path)
}

// Position is a zero-based line and character offset; the offset counts
// code units of the negotiated [Encoding].
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is a half-open span between two positions.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Location is a range in a document.
type Location struct {
	URI   DocumentURI `json:"uri"`
	Range Range       `json:"range"`
}

// LocationLink is the richer form of a definition result.
type LocationLink struct {
	TargetURI            DocumentURI `json:"targetUri"`
	TargetRange          Range       `json:"targetRange"`
	TargetSelectionRange Range       `json:"targetSelectionRange"`
}

// TextDocumentIdentifier names a document.
type TextDocumentIdentifier struct {
	URI DocumentURI `json:"uri"`
}

// VersionedTextDocumentIdentifier names a document at a version; Version is
// nil (null) when the edit applies to whatever is on disk.
type VersionedTextDocumentIdentifier struct {
	URI     DocumentURI `json:"uri"`
	Version *int32      `json:"version"`
}

// TextDocumentItem is an opened document.
type TextDocumentItem struct {
	URI        DocumentURI `json:"uri"`
	LanguageID string      `json:"languageId"`
	Version    int32       `json:"version"`
	Text       string      `json:"text"`
}

// TextDocumentPositionParams names a position in a document.
type TextDocumentPositionParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
	Position     Position               `json:"position"`
}

// DidOpenTextDocumentParams is textDocument/didOpen.
type DidOpenTextDocumentParams struct {
	TextDocument TextDocumentItem `json:"textDocument"`
}

// TextDocumentContentChangeEvent is a full-text change (the only kind this
// client sends).
type TextDocumentContentChangeEvent struct {
	Text string `json:"text"`
}

// DidChangeTextDocumentParams is textDocument/didChange.
type DidChangeTextDocumentParams struct {
	TextDocument   VersionedTextDocumentIdentifier  `json:"textDocument"`
	ContentChanges []TextDocumentContentChangeEvent `json:"contentChanges"`
}

// DidCloseTextDocumentParams is textDocument/didClose.
type DidCloseTextDocumentParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
}

// File change types of workspace/didChangeWatchedFiles.
const (
	FileCreated = 1
	FileChanged = 2
	FileDeleted = 3
)

// FileEvent is one watched-file change.
type FileEvent struct {
	URI  DocumentURI `json:"uri"`
	Type int         `json:"type"`
}

// DidChangeWatchedFilesParams is workspace/didChangeWatchedFiles.
type DidChangeWatchedFilesParams struct {
	Changes []FileEvent `json:"changes"`
}

// ReferenceParams is textDocument/references.
type ReferenceParams struct {
	TextDocumentPositionParams
	Context struct {
		IncludeDeclaration bool `json:"includeDeclaration"`
	} `json:"context"`
}

// RenameParams is textDocument/rename.
type RenameParams struct {
	TextDocumentPositionParams
	NewName string `json:"newName"`
}

// TextEdit replaces a range with new text.
type TextEdit struct {
	Range   Range  `json:"range"`
	NewText string `json:"newText"`
}

// TextDocumentEdit is a set of edits to one document version.
type TextDocumentEdit struct {
	TextDocument VersionedTextDocumentIdentifier `json:"textDocument"`
	Edits        []TextEdit                      `json:"edits"`
}

// WorkspaceEdit is a set of changes across documents. DocumentChanges
// elements are TextDocumentEdits or resource operations (create, rename,
// delete), told apart by a "kind" member.
type WorkspaceEdit struct {
	Changes         map[DocumentURI][]TextEdit `json:"changes,omitempty"`
	DocumentChanges []json.RawMessage          `json:"documentChanges,omitempty"`
}

// Diagnostic severities.
const (
	SeverityError       = 1
	SeverityWarning     = 2
	SeverityInformation = 3
	SeverityHint        = 4
)

// Diagnostic is one problem a server reports.
type Diagnostic struct {
	Range    Range           `json:"range"`
	Severity int             `json:"severity,omitempty"`
	Code     json.RawMessage `json:"code,omitempty"`
	Source   string          `json:"source,omitempty"`
	Message  string          `json:"message"`
}

// PublishDiagnosticsParams is textDocument/publishDiagnostics.
type PublishDiagnosticsParams struct {
	URI         DocumentURI  `json:"uri"`
	Version     *int32       `json:"version,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

// DocumentDiagnosticParams is textDocument/diagnostic (pull).
type DocumentDiagnosticParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
}

// DocumentDiagnosticReport is the answer to textDocument/diagnostic; Kind
// is "full" (Items set) or "unchanged".
type DocumentDiagnosticReport struct {
	Kind  string       `json:"kind"`
	Items []Diagnostic `json:"items"`
}

// Hover is the answer to textDocument/hover. Contents is MarkupContent, a
// MarkedString, or an array of MarkedStrings; see [HoverText].
type Hover struct {
	Contents json.RawMessage `json:"contents"`
}

// Symbol kinds (the subset with names; others print as a number).
var symbolKinds = [...]string{
	1: "File", "Module", "Namespace", "Package", "Class", "Method", "Property",
	"Field", "Constructor", "Enum", "Interface", "Function", "Variable",
	"Constant", "String", "Number", "Boolean", "Array", "Object", "Key",
	"Null", "EnumMember", "Struct", "Event", "Operator", "TypeParameter",
}

// SymbolKindName names an LSP symbol kind.
func SymbolKindName(k int) string {
	if k > 0 && k < len(symbolKinds) {
		return symbolKinds[k]
	}
	return "Symbol"
}

// DocumentSymbol is one node of a hierarchical document outline.
type DocumentSymbol struct {
	Name           string           `json:"name"`
	Detail         string           `json:"detail,omitempty"`
	Kind           int              `json:"kind"`
	Range          Range            `json:"range"`
	SelectionRange Range            `json:"selectionRange"`
	Children       []DocumentSymbol `json:"children,omitempty"`
}

// SymbolInformation is a flat symbol (document or workspace symbols).
// Location.Range may be absent for a WorkspaceSymbol; it is zero then.
type SymbolInformation struct {
	Name          string   `json:"name"`
	Kind          int      `json:"kind"`
	ContainerName string   `json:"containerName,omitempty"`
	Location      Location `json:"location"`
}

// WorkspaceSymbolParams is workspace/symbol.
type WorkspaceSymbolParams struct {
	Query string `json:"query"`
}

// DocumentSymbolParams is textDocument/documentSymbol.
type DocumentSymbolParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
}

// CodeActionContext carries the diagnostics at the range and an optional
// kind filter.
type CodeActionContext struct {
	Diagnostics []Diagnostic `json:"diagnostics"`
	Only        []string     `json:"only,omitempty"`
	TriggerKind int          `json:"triggerKind,omitempty"`
}

// CodeActionParams is textDocument/codeAction.
type CodeActionParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
	Range        Range                  `json:"range"`
	Context      CodeActionContext      `json:"context"`
}

// Command is a server command the client may execute.
type Command struct {
	Title     string            `json:"title"`
	Command   string            `json:"command"`
	Arguments []json.RawMessage `json:"arguments,omitempty"`
}

// CodeAction is a code action; a bare Command in a codeAction answer is
// decoded into one with only Command set (see [DecodeCodeActions]). Data is
// kept so the action can be resolved.
type CodeAction struct {
	Title       string `json:"title"`
	Kind        string `json:"kind,omitempty"`
	IsPreferred bool   `json:"isPreferred,omitempty"`
	Disabled    *struct {
		Reason string `json:"reason"`
	} `json:"disabled,omitempty"`
	Edit    *WorkspaceEdit  `json:"edit,omitempty"`
	Command *Command        `json:"command,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// ExecuteCommandParams is workspace/executeCommand.
type ExecuteCommandParams struct {
	Command   string            `json:"command"`
	Arguments []json.RawMessage `json:"arguments,omitempty"`
}

// ApplyWorkspaceEditParams is the server's workspace/applyEdit request.
type ApplyWorkspaceEditParams struct {
	Label string        `json:"label,omitempty"`
	Edit  WorkspaceEdit `json:"edit"`
}

// ApplyWorkspaceEditResult answers workspace/applyEdit.
type ApplyWorkspaceEditResult struct {
	Applied       bool   `json:"applied"`
	FailureReason string `json:"failureReason,omitempty"`
}

// ConfigurationParams is the server's workspace/configuration request.
type ConfigurationParams struct {
	Items []struct {
		ScopeURI string `json:"scopeUri,omitempty"`
		Section  string `json:"section,omitempty"`
	} `json:"items"`
}

// WorkspaceFolder is a root the server works in.
type WorkspaceFolder struct {
	URI  DocumentURI `json:"uri"`
	Name string      `json:"name"`
}

// ProgressParams is $/progress; Value.Kind is "begin", "report" or "end".
type ProgressParams struct {
	Token json.RawMessage `json:"token"`
	Value struct {
		Kind    string `json:"kind"`
		Title   string `json:"title,omitempty"`
		Message string `json:"message,omitempty"`
	} `json:"value"`
}

// LogMessageParams is window/logMessage and window/showMessage.
type LogMessageParams struct {
	Type    int    `json:"type"`
	Message string `json:"message"`
}

// Locations decodes a definition-style answer: null, a Location, an array
// of Locations, or an array of LocationLinks (reduced to their target
// selection range).
func Locations(raw json.RawMessage) ([]Location, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil, nil
	}
	if s[0] == '{' {
		var l Location
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, err
		}
		return []Location{l}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, err
	}
	out := make([]Location, 0, len(items))
	for _, it := range items {
		var probe struct {
			TargetURI DocumentURI `json:"targetUri"`
		}
		_ = json.Unmarshal(it, &probe)
		if probe.TargetURI != "" {
			var ll LocationLink
			if err := json.Unmarshal(it, &ll); err != nil {
				return nil, err
			}
			out = append(out, Location{URI: ll.TargetURI, Range: ll.TargetSelectionRange})
			continue
		}
		var l Location
		if err := json.Unmarshal(it, &l); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// DocumentSymbols decodes a textDocument/documentSymbol answer, which is
// either hierarchical DocumentSymbols or flat SymbolInformation. Exactly
// one of the results is non-nil unless the answer is empty.
func DocumentSymbols(raw json.RawMessage) ([]DocumentSymbol, []SymbolInformation, error) {
	var items []json.RawMessage
	if s := strings.TrimSpace(string(raw)); s == "" || s == "null" {
		return nil, nil, nil
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, nil, err
	}
	if len(items) == 0 {
		return nil, nil, nil
	}
	var probe struct {
		Location *json.RawMessage `json:"location"`
	}
	_ = json.Unmarshal(items[0], &probe)
	if probe.Location != nil {
		var si []SymbolInformation
		err := json.Unmarshal(raw, &si)
		return nil, si, err
	}
	var ds []DocumentSymbol
	err := json.Unmarshal(raw, &ds)
	return ds, nil, err
}

// DecodeCodeActions decodes a textDocument/codeAction answer, whose items
// are CodeActions or bare Commands.
func DecodeCodeActions(raw json.RawMessage) ([]CodeAction, error) {
	var items []json.RawMessage
	if s := strings.TrimSpace(string(raw)); s == "" || s == "null" {
		return nil, nil
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, err
	}
	out := make([]CodeAction, 0, len(items))
	for _, it := range items {
		var probe struct {
			Command json.RawMessage `json:"command"`
		}
		_ = json.Unmarshal(it, &probe)
		if len(probe.Command) > 0 && probe.Command[0] == '"' {
			var c Command
			if err := json.Unmarshal(it, &c); err != nil {
				return nil, err
			}
			out = append(out, CodeAction{Title: c.Title, Command: &c})
			continue
		}
		var a CodeAction
		if err := json.Unmarshal(it, &a); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}
