package client

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"yolop.dev/extensions/lsp/internal/protocol"
)

// languageIDs maps file extensions to LSP language identifiers.
var languageIDs = map[string]string{
	".go": "go", ".rs": "rust", ".py": "python", ".pyi": "python",
	".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescriptreact",
	".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascriptreact",
	".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".java": "java",
	".rb": "ruby", ".lua": "lua", ".zig": "zig", ".json": "json", ".md": "markdown",
}

func (c *Client) languageID(path string) string {
	if c.opts.LanguageID != nil {
		if id := c.opts.LanguageID(path); id != "" {
			return id
		}
	}
	if id, ok := languageIDs[strings.ToLower(filepath.Ext(path))]; ok {
		return id
	}
	return strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
}

// Document returns the open document for path, or nil.
func (c *Client) Document(path string) *Document {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.docs[path]
}

// Sync makes the server see path exactly as it is on disk: it opens the
// document (didOpen) or sends its new text (didChange) when it changed, and
// closes it (didClose) when the file is gone. It returns the document as
// the server now sees it. path must be absolute.
func (c *Client) Sync(ctx context.Context, path string) (*Document, error) {
	c.docMu.Lock()
	defer c.docMu.Unlock()
	return c.syncLocked(ctx, path)
}

func (c *Client) syncLocked(ctx context.Context, path string) (*Document, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			c.closeLocked(ctx, path)
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not a source file", path)
	}
	c.mu.Lock()
	doc := c.docs[path]
	c.useClock++
	if doc != nil {
		doc.used = c.useClock
	}
	c.mu.Unlock()
	if doc != nil && doc.modTime.Equal(fi.ModTime()) && doc.size == fi.Size() {
		return doc, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	h := hashOf(data)
	if doc != nil && doc.Hash == h {
		c.mu.Lock()
		doc.modTime, doc.size = fi.ModTime(), fi.Size()
		c.mu.Unlock()
		return doc, nil
	}
	uri := protocol.URIFromPath(path)
	nd := &Document{Path: path, URI: uri, Text: protocol.NewText(string(data)), Hash: h, modTime: fi.ModTime(), size: fi.Size()}
	if doc == nil {
		nd.Version = 1
		err = c.conn.Notify(ctx, "textDocument/didOpen", protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{
			URI: uri, LanguageID: c.languageID(path), Version: 1, Text: string(data),
		}})
	} else {
		nd.Version = doc.Version + 1
		v := nd.Version
		err = c.conn.Notify(ctx, "textDocument/didChange", protocol.DidChangeTextDocumentParams{
			TextDocument:   protocol.VersionedTextDocumentIdentifier{URI: uri, Version: &v},
			ContentChanges: []protocol.TextDocumentContentChangeEvent{{Text: string(data)}},
		})
	}
	if err != nil {
		return nil, fmt.Errorf("%s: sync %s: %w", c.opts.Name, path, err)
	}
	c.changeSent()
	c.mu.Lock()
	c.useClock++
	nd.used = c.useClock
	nd.gen = c.diagGen
	c.docs[path] = nd
	var evict *Document
	if len(c.docs) > c.opts.MaxOpen {
		for _, d := range c.docs {
			if d != nd && (evict == nil || d.used < evict.used) {
				evict = d
			}
		}
	}
	c.mu.Unlock()
	if evict != nil {
		c.closeLocked(ctx, evict.Path)
	}
	return nd, nil
}

// closeLocked sends didClose for path if it is open; docMu must be held.
func (c *Client) closeLocked(ctx context.Context, path string) {
	c.mu.Lock()
	doc := c.docs[path]
	delete(c.docs, path)
	c.mu.Unlock()
	if doc != nil {
		_ = c.conn.Notify(ctx, "textDocument/didClose", protocol.DidCloseTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: doc.URI}})
	}
}

// CloseDocument sends didClose for path if it is open.
func (c *Client) CloseDocument(ctx context.Context, path string) {
	c.docMu.Lock()
	defer c.docMu.Unlock()
	c.closeLocked(ctx, path)
}

// SyncOpen re-syncs every open document whose file changed on disk (or
// closes it when the file is gone), so requests that span files see the
// current content. It reports whether any document changed.
func (c *Client) SyncOpen(ctx context.Context) (changed bool, err error) {
	c.docMu.Lock()
	defer c.docMu.Unlock()
	c.mu.Lock()
	paths := make([]string, 0, len(c.docs))
	for p := range c.docs {
		paths = append(paths, p)
	}
	c.mu.Unlock()
	for _, p := range paths {
		c.mu.Lock()
		before := c.docs[p]
		c.mu.Unlock()
		doc, err := c.syncLocked(ctx, p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return changed, err
		}
		if doc != before {
			changed = true
		}
	}
	return changed, nil
}

// FilesChanged tells the server that files changed on disk (because the
// caller wrote them): each is re-synced, and opened when it was not open,
// so the server diagnoses its new text and reports the version it saw.
func (c *Client) FilesChanged(ctx context.Context, paths []string) error {
	c.docMu.Lock()
	defer c.docMu.Unlock()
	for _, p := range paths {
		c.mu.Lock()
		if doc := c.docs[p]; doc != nil {
			doc.modTime = time.Time{} // force a re-read: the caller knows it changed
		}
		c.mu.Unlock()
		if _, err := c.syncLocked(ctx, p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// NotifyWatched reports file events the caller detected itself (e.g. by
// scanning the workspace) with workspace/didChangeWatchedFiles.
func (c *Client) NotifyWatched(ctx context.Context, events []protocol.FileEvent) error {
	if len(events) == 0 {
		return nil
	}
	c.changeSent()
	return c.conn.Notify(ctx, "workspace/didChangeWatchedFiles", protocol.DidChangeWatchedFilesParams{Changes: events})
}
