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

// wantTUI reports whether the session runs in the terminal UI: with
// --tui or --fullscreen always (an error without a terminal, or with
// --json or --plain), and by default when stdin and stdout are a terminal
// and neither --plain nor --json is given. A scripted input (the demo's)
// never does.
func (a *app) wantTUI(f sessionFlags, in io.Reader, echoIn bool) (bool, error) {
	flag := ""
	switch {
	case f.fullscreen:
		flag = "--fullscreen"
	case f.tui:
		flag = "--tui"
	}
	if flag == "" {
		return !f.plain && !f.json && !echoIn && terminal(in) && a.ttyOut != nil && terminal(a.ttyOut), nil
	}
	switch {
	case f.json:
		return false, fmt.Errorf("yolop session: %s and --json do not go together: --json is one JSON event per line for a program, %s a screen for a person", flag, flag)
	case f.plain:
		return false, fmt.Errorf("yolop session: %s and --plain do not go together: --plain is the line editor instead of the terminal UI", flag)
	}
	return true, nil
}

// terminal reports whether r is a terminal.
func terminal(r io.Reader) bool {
	file, ok := r.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

// startTUI opens the terminal UI over in and the terminal stdout, with
// the host log moved to tui.log in the config directory (appended,
// scrubbed, at the YOLOP_LOG level as on stderr). stop ends the UI and
// puts the log back on stderr. Without a terminal on both sides it
// fails, saying which one is not.
func (a *app) startTUI(in io.Reader, sf sessionFlags) (ui *tui.UI, stop func(), err error) {
	flag := "--tui"
	if sf.fullscreen {
		flag = "--fullscreen"
	}
	file, _ := in.(*os.File)
	switch {
	case !terminal(in):
		return nil, nil, fmt.Errorf("yolop session %s: stdin is not a terminal; the terminal UI needs one (without %s the line mode reads any stdin)", flag, flag)
	case a.ttyOut == nil || !terminal(a.ttyOut):
		return nil, nil, fmt.Errorf("yolop session %s: stdout is not a terminal; the terminal UI needs one (without %s the line mode writes to any stdout)", flag, flag)
	}
	restore := func() {}
	if h, herr := a.harness(); herr == nil && a.logOut != nil {
		path := filepath.Join(h.ConfigDir(), tuiLogName)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, nil, fmt.Errorf("yolop session: the directory of the terminal UI's log file: %w", err)
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("yolop session: opening the terminal UI's log file (the UI keeps the log off the screen): %w", err)
		}
		back := a.logOut.to(a.scrub.Writer(f))
		restore = func() { back(); f.Close() }
	}
	o := tui.Options{In: file, Out: a.ttyOut, Colour: a.colourOn, Fullscreen: sf.fullscreen}
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
	b.SetKeptOff(s.KeptOff())
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
