// Package tui is the terminal UI of `yolop session --tui`: a Bubble Tea
// program that renders what the session commands (yolop.dev/harness/repl)
// report and reads the user's keys. It holds rendering and key handling
// only; the commands, the agent's turns, the status board and the answers'
// meaning all live in harness.
//
// The UI runs inline (no alternate screen): finished transcript lines are
// printed above the live area, so they stay in the terminal's scrollback,
// and the live area below them holds the line the model is still
// streaming, the ask overlay, the input line and the status bar.
//
// A [UI] is the session's [repl.Output] (Event, Raw) and its
// [host.AskSink] (Ask): both may be called from any goroutine, and they
// reach the program as messages, in the order they were made.
package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	tea "charm.land/bubbletea/v2"

	"yolop.dev/core/yep"
	"yolop.dev/harness"
	"yolop.dev/harness/repl"
)

// KeysHelp describes the UI's keys, for /help.
const KeysHelp = "keys: Enter runs the line (the UI stays live while it runs), Alt+Enter (or Shift+Enter, Ctrl-J) starts a new line in it, / opens the command palette (Up/Down choose, Tab fills in the choice, Enter runs it, Esc closes), Up/Down walk the history, Ctrl-R searches it, Ctrl-C cancels the running call or turn, twice on an idle prompt quits, Ctrl-D on an empty line quits; a question takes the keys first: Enter answers, Up/Down and typing choose among options, Esc cancels"

// A Dispatch runs one input line (a command or a message to the model)
// and reports whether it asked to end the session. Cancelling ctx cancels
// what it runs (Ctrl-C).
type Dispatch func(ctx context.Context, line string) (quit bool)

// Options configure a [UI]. In and Out are required.
type Options struct {
	// In and Out are the terminal.
	In  io.Reader
	Out io.Writer
	// Colour styles the status bar, the overlay and the hints; false
	// renders plain text (and tells Bubble Tea to send no colour).
	Colour bool
	// Fullscreen runs the UI on the alternate screen: the transcript is
	// drawn above the live area (its last lines that fit) instead of
	// being printed into the scrollback, and the terminal's screen comes
	// back as it was when the UI ends. False runs it inline.
	Fullscreen bool
	// Status renders the status bar for a width in columns; nil shows
	// none. It is called when the UI starts, on resize and after
	// [UI.StatusChanged].
	Status func(width int) string
	// Palette lists what the command palette offers (a session's
	// [repl.REPL.Palette]); nil opens none until [UI.SetPalette].
	Palette func() []repl.Entry
	// History is the line history that Up/Down and Ctrl-R walk, and that
	// each line run is added to; nil keeps none.
	History *harness.History
}

// A UI is the terminal UI of a session. Create it with [New], start it
// with [UI.Start] before the session reports anything, hand it the
// command layer with [UI.SetDispatch] once the session is open, and wait
// for the user to leave with [UI.Wait].
type UI struct {
	o    Options
	prog *tea.Program // nil in tests
	// send delivers a message to the model; print prints finished lines
	// above the live area. Both are called with mu held, so what is
	// printed and what is shown keep the order they were made in.
	send  func(tea.Msg)
	print func(text string)

	// screen is the transcript drawn on the alternate screen (Fullscreen).
	screen *screenLog

	mu sync.Mutex
	tr transcript // the open reply, the running calls (transcript.go)

	pal paletteSource // what the command palette lists

	// dispatch has its own lock: the model reads it on Enter, while a
	// sender may hold mu waiting for the model to take its message.
	dmu      sync.Mutex
	dispatch Dispatch

	askID   atomic.Uint64
	done    chan struct{} // closed when the program has ended
	doneErr error
}

// New returns a UI over the terminal o.In and o.Out. Nothing is drawn
// before [UI.Start].
func New(o Options) *UI {
	u := &UI{o: o, done: make(chan struct{})}
	opts := []tea.ProgramOption{tea.WithInput(o.In), tea.WithOutput(o.Out), tea.WithoutSignalHandler()}
	if !o.Colour {
		// NO_COLOR is how Bubble Tea is told to send no colour.
		opts = append(opts, tea.WithEnvironment(append(os.Environ(), "NO_COLOR=1")))
	}
	u.tr.ticker = tea.Tick // the spinner's frames
	u.prog = tea.NewProgram(newModel(u), opts...)
	u.send = u.prog.Send
	u.print = func(text string) {
		select {
		case <-u.done:
			// The program has ended and given the terminal back: what
			// the session still says (closing warnings) prints plainly.
			fmt.Fprintln(o.Out, text)
		default:
			u.prog.Send(tea.Println(text)())
		}
	}
	if o.Fullscreen {
		u.print = u.fullscreenPrint(u.print)
	}
	return u
}

// Start runs the program on its own goroutine: from here on the UI owns
// the terminal, and Event, Raw and Ask reach it.
func (u *UI) Start() {
	go func() {
		_, err := u.prog.Run()
		u.doneErr = err
		close(u.done)
	}()
}

// Wait blocks until the user leaves the UI (Ctrl-D, a second Ctrl-C, a
// command that ends the session) and returns the program's error, if any.
func (u *UI) Wait() error {
	<-u.done
	if u.doneErr != nil && !errors.Is(u.doneErr, tea.ErrProgramKilled) {
		return fmt.Errorf("terminal UI: %w", u.doneErr)
	}
	return nil
}

// Stop ends the program, if it still runs, and restores the terminal.
func (u *UI) Stop() {
	select {
	case <-u.done:
		return
	default:
	}
	u.prog.Send(stopMsg{})
	<-u.done
}

// SetDispatch hands the UI the command layer: Enter runs the line through
// d. Until it is set, Enter says the session is still starting.
func (u *UI) SetDispatch(d Dispatch) {
	u.dmu.Lock()
	u.dispatch = d
	u.dmu.Unlock()
}

func (u *UI) dispatcher() Dispatch {
	u.dmu.Lock()
	defer u.dmu.Unlock()
	return u.dispatch
}

// StatusChanged redraws the status bar; call it when what the bar shows
// has changed.
func (u *UI) StatusChanged() { u.emit(statusMsg{}) }

// SetStatus sets what renders the status bar (nil: no bar), replacing
// Options.Status, and redraws it.
func (u *UI) SetStatus(f func(width int) string) { u.emit(statusMsg{source: f, set: true}) }

func (u *UI) emit(msg tea.Msg) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.send(msg)
}

// Event implements repl.Output: an item with a text is a transcript line
// (or several), printed above the live area, styled by its kind; a tool
// call's events make its block (see transcript.go); other items without
// a text have no line of their own.
func (u *UI) Event(kind string, fields map[string]any, text string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.event(kind, fields, text)
}

// Raw implements repl.Output: streamed text. A tool's output is printed
// above the live area, indented under its call; the model's reply is
// shown in the live area while it streams and printed, rendered as
// markdown, when it ends.
func (u *UI) Raw(text string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.raw(text)
}

// Ask implements host.AskSink: the question opens the overlay, which
// takes the keys before anything else until it is answered, Esc cancels
// it, or ctx ends. While one question is open another is answered
// cancelled at once. The transcript shows the question and "(saved)"
// for a secret, never its value.
func (u *UI) Ask(ctx context.Context, ext string, p yep.UIAskParams) (yep.UIAskResult, error) {
	id := u.askID.Add(1)
	reply := make(chan askReply, 1)
	u.emit(askMsg{id: id, ext: ext, p: p, reply: reply})
	var r askReply
	select {
	case r = <-reply:
	case <-ctx.Done():
		u.emit(askDoneMsg{id: id})
		r = askReply{cancelled: true}
	case <-u.done:
		r = askReply{cancelled: true}
	}
	outcome := "(cancelled)"
	switch {
	case r.busy:
		// Another question was open: this one never showed.
		outcome = "(cancelled: another question was open)"
	case r.cancelled:
	case p.Secret:
		outcome = "(saved)"
	default:
		outcome = "> " + r.answer
	}
	u.Event("ask_result", nil, fmt.Sprintf("[%s asks] %s\n%s", ext, p.Prompt, outcome))
	if r.cancelled {
		return yep.UIAskResult{Cancelled: true}, nil
	}
	return yep.UIAskResult{Answer: harness.AskAnswer(p, r.answer)}, nil
}

// Messages the UI sends its model.
type (
	// partialMsg is the model's reply so far, while it streams.
	partialMsg string
	// statusMsg: what the status bar shows changed, or (set) what
	// renders it.
	statusMsg struct {
		source func(width int) string
		set    bool
	}
	// askMsg opens the overlay for a question.
	askMsg struct {
		id    uint64
		ext   string
		p     yep.UIAskParams
		reply chan askReply // buffered: the model never waits on it
	}
	// askDoneMsg closes the overlay of a question whose asker gave up.
	askDoneMsg struct{ id uint64 }
	// stopMsg ends the program from outside (Stop).
	stopMsg struct{}
	// doneMsg: a dispatched line finished.
	doneMsg struct{ quit bool }
)

// askReply is the overlay's answer to a question.
type askReply struct {
	answer    string
	cancelled bool
	busy      bool // another question was open
}
