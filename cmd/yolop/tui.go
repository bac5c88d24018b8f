package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/term"

	"yolop.dev/cmd/yolop/internal/tui"
	"yolop.dev/harness"
	mcpclient "yolop.dev/mcp/client"
)

// tuiLogName is the file, in the config directory, that the host log goes
// to while the terminal UI owns the screen.
const tuiLogName = "tui.log"

// logSwitch is the host log's writer: stderr, or a file while the
// terminal UI runs, so log lines never cross the UI.
type logSwitch struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *logSwitch) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// to sends the log to w and returns a func that puts back the writer it
// replaced.
func (l *logSwitch) to(w io.Writer) (restore func()) {
	l.mu.Lock()
	old := l.w
	l.w = w
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		l.w = old
		l.mu.Unlock()
	}
}

// startTUI opens the terminal UI over in and the terminal stdout, with
// the host log moved to tui.log in the config directory (appended,
// scrubbed, at the YOLOP_LOG level as on stderr). stop ends the UI and
// puts the log back on stderr. Without a terminal on both sides it
// fails, saying which one is not.
func (a *app) startTUI(in io.Reader) (ui *tui.UI, stop func(), err error) {
	file, ok := in.(*os.File)
	switch {
	case !ok || !term.IsTerminal(int(file.Fd())):
		return nil, nil, fmt.Errorf("yolop session --tui: stdin is not a terminal; the terminal UI needs one (without --tui the line mode reads any stdin)")
	case a.ttyOut == nil || !term.IsTerminal(int(a.ttyOut.Fd())):
		return nil, nil, fmt.Errorf("yolop session --tui: stdout is not a terminal; the terminal UI needs one (without --tui the line mode writes to any stdout)")
	}
	restore := func() {}
	if h, herr := a.harness(); herr == nil && a.logOut != nil {
		path := filepath.Join(h.ConfigDir(), tuiLogName)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, nil, fmt.Errorf("yolop session --tui: the log file's directory: %w", err)
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("yolop session --tui: opening the log file (the UI keeps the log off the screen): %w", err)
		}
		back := a.logOut.to(a.scrub.Writer(f))
		restore = func() { back(); f.Close() }
	}
	o := tui.Options{In: file, Out: a.ttyOut, Colour: a.colourOn}
	if h, err := a.harness(); err == nil {
		o.History = h.History() // the line editor's too, kept across sessions
	}
	ui = tui.New(o)
	ui.Start()
	return ui, func() { ui.Stop(); restore() }, nil
}

// statusBoard is the session's status board for the UI's bar: the model
// in use and its context window (when one is configured), the MCP
// servers' states, and onChange called on every change.
func (a *app) statusBoard(ctx context.Context, h *harness.Harness, s *harness.Session, flag, model string, withModel bool, mcp *mcpclient.Client, onChange func()) *harness.StatusBoard {
	window := 0
	if !withModel {
		model = ""
	} else if c, err := h.ResolveModel(ctx, flag); err == nil {
		window, _ = h.ModelContextWindow(ctx, s, c)
	}
	b := harness.NewStatusBoard(s.Session, model, window, onChange)
	if mcp != nil {
		b.SetMCP(func() []harness.MCPState {
			var out []harness.MCPState
			for _, st := range mcp.Status() {
				out = append(out, harness.MCPState{Name: st.Name, State: st.State})
			}
			return out
		})
	}
	return b
}
