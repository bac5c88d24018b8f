package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
	"yolop.dev/extensions/lsp/internal/manager"
	"yolop.dev/extensions/lsp/internal/protocol"
	"yolop.dev/extensions/lsp/internal/tools"
)

// prompt is the static system-prompt contribution; the manifest carries
// the same text (package/prompt.md). The "call lsp_* FIRST" wording is
// load-bearing: agents adopt the tools only when told so plainly.
const prompt = "For code navigation call the `lsp_*` tools FIRST, before grep or reading files: " +
	"lsp_definition to jump to a definition, lsp_references for every use, lsp_hover for types and docs, " +
	"lsp_symbols for a file outline or a workspace symbol search, lsp_diagnostics after each edit, " +
	"lsp_rename for renames across files (never rename by hand), and lsp_code_actions for quick fixes. " +
	"Positions are 1-based line and column in characters; instead of a column you may pass the symbol name on that line."

// extension wires the tool service into an SDK server. The manager is
// created on the first tool call, once the workspace root is known.
type extension struct {
	log hclog.Logger
	srv *sdk.Server

	mu   sync.Mutex
	cfg  manager.Config
	root string // set by workspace/changed before the first tool call
	svc  *tools.Service
}

func newExtension(stderr io.Writer) *extension {
	log := hclog.New(&hclog.LoggerOptions{
		Name:   "lsp",
		Output: stderr,
		Level:  hclog.LevelFromString(os.Getenv("YOLOP_LOG")),
	})
	e := &extension{log: log}
	e.cfg, _ = manager.ParseConfig(nil)
	s := sdk.NewServer(sdk.Info{Name: "lsp", Version: version, Status: true}, sdk.Options{Logger: log})
	s.Prompt(prompt)
	s.OnConfig(func(cfg json.RawMessage) error {
		c, err := manager.ParseConfig(cfg)
		if err != nil {
			return err
		}
		e.mu.Lock()
		e.cfg = c
		e.mu.Unlock()
		return nil
	})
	s.OnConfigChanged(func(ctx context.Context, cfg json.RawMessage) (bool, error) {
		c, err := manager.ParseConfig(cfg)
		if err != nil {
			return false, err
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.svc == nil {
			if !equalServers(e.cfg, c) {
				return true, nil
			}
			e.cfg = c
			return false, nil
		}
		if e.svc.Manager().SetConfig(c) {
			return true, nil
		}
		e.cfg = c
		return false, nil
	})
	s.OnWorkspaceChanged(func(root string) {
		if root == "" {
			return
		}
		root = canonical(root)
		e.mu.Lock()
		svc := e.svc
		e.root = root
		e.mu.Unlock()
		if svc != nil {
			svc.Manager().Reroot(root)
		}
	})
	e.tool(s, "lsp_definition", func(svc *tools.Service, ctx context.Context, c *sdk.ToolCall) (string, error) {
		return svc.Definition(ctx, c.Args)
	})
	e.tool(s, "lsp_references", func(svc *tools.Service, ctx context.Context, c *sdk.ToolCall) (string, error) {
		return svc.References(ctx, c.Args)
	})
	e.tool(s, "lsp_hover", func(svc *tools.Service, ctx context.Context, c *sdk.ToolCall) (string, error) {
		return svc.Hover(ctx, c.Args)
	})
	e.tool(s, "lsp_diagnostics", func(svc *tools.Service, ctx context.Context, c *sdk.ToolCall) (string, error) {
		return svc.Diagnostics(ctx, c.Args)
	})
	e.tool(s, "lsp_symbols", func(svc *tools.Service, ctx context.Context, c *sdk.ToolCall) (string, error) {
		return svc.Symbols(ctx, c.Args)
	})
	e.tool(s, "lsp_code_actions", func(svc *tools.Service, ctx context.Context, c *sdk.ToolCall) (string, error) {
		return svc.CodeActions(ctx, c.Args)
	})
	s.StreamingTool("lsp_rename", e.handler(func(svc *tools.Service, ctx context.Context, c *sdk.ToolCall) (string, error) {
		return svc.Rename(ctx, c.Args, func(line string) { _ = c.Update(line) })
	}))
	e.srv = s
	return e
}

func equalServers(a, b manager.Config) bool {
	ja, _ := json.Marshal(a.Servers)
	jb, _ := json.Marshal(b.Servers)
	return string(ja) == string(jb)
}

type toolFunc func(svc *tools.Service, ctx context.Context, c *sdk.ToolCall) (string, error)

func (e *extension) tool(s *sdk.Server, name string, f toolFunc) { s.Tool(name, e.handler(f)) }

// handler adapts a tool function: a tool-level failure becomes a result
// the agent reads (is_error), cancellation stays a protocol error.
func (e *extension) handler(f toolFunc) sdk.ToolHandler {
	return func(ctx context.Context, c *sdk.ToolCall) (yep.ToolResult, error) {
		out, err := f(e.service(), ctx, c)
		if err != nil {
			if ctx.Err() != nil {
				return yep.ToolResult{}, yep.ErrCancelled
			}
			return yep.ToolResult{Output: err.Error(), IsError: true}, nil
		}
		return yep.ToolResult{Output: out}, nil
	}
}

// service returns the tool service, creating the manager at the
// workspace root the host sent (else the working directory).
func (e *extension) service() *tools.Service {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.svc != nil {
		return e.svc
	}
	root := e.root
	if root == "" {
		root = e.srv.Init().WorkspaceRoot
	}
	if root == "" {
		root, _ = os.Getwd()
	}
	root = canonical(root)
	var svc *tools.Service
	m := manager.New(root, e.cfg, manager.Options{
		Logger: e.log,
		OnStatus: func(text string) {
			if err := e.srv.Status(text); err != nil && !errors.Is(err, sdk.ErrNotAdvertised) {
				e.log.Debug("status/changed not sent", "error", err)
			}
		},
		ApplyEdit: func(ctx context.Context, h *manager.Handle, edit protocol.WorkspaceEdit) protocol.ApplyWorkspaceEditResult {
			return svc.ServerApplyEdit(ctx, h, edit)
		},
	})
	svc = tools.New(m, e.log)
	e.svc = svc
	return svc
}

// serve runs the YEP connection and stops every language server after it.
// A nil r and w mean the process's stdin and stdout.
func (e *extension) serve(ctx context.Context, r io.Reader, w io.Writer) error {
	var err error
	if r == nil {
		err = e.srv.Serve(ctx)
	} else {
		err = e.srv.ServeConn(ctx, r, w)
	}
	e.mu.Lock()
	svc := e.svc
	e.mu.Unlock()
	if svc != nil {
		svc.Manager().Shutdown()
	}
	return err
}

// canonical makes a workspace root absolute with symlinks resolved, so
// paths the servers report compare equal to it.
func canonical(root string) string {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	return root
}
