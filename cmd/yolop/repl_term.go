package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/term"

	"yolop.dev/harness"
)

// historyFile is where the REPL keeps its history, in the config dir.
const historyFile = harness.HistoryFile

// A termIO is the REPL on a terminal: x/term's line editor (cursor
// movement, word and line deletion, history with up/down, tab completion)
// over the terminal in raw mode. Ctrl-C never reaches the editor: it is
// read by a pump that calls interrupt (cancelling the running call) or,
// at the prompt, clears the line. Reads are one at a time: a command line,
// or an answer to a question an extension asks.
type termIO struct {
	t    *term.Terminal
	fd   int
	old  *term.State
	in   *ttyBuffer
	hist *harness.History

	src     io.ReadCloser // what the pump reads: the terminal, closable
	release func()        // undoes what pollableTTY changed
	pumped  chan struct{} // closed when the pump has stopped

	mu sync.Mutex // one ReadLine or ReadPassword at a time

	amu       sync.Mutex
	answering context.CancelFunc // cancels the open question, if any
}

func (ti *termIO) setAnswering(cancel context.CancelFunc) {
	ti.amu.Lock()
	ti.answering = cancel
	ti.amu.Unlock()
}

// cancelAnswer cancels the open question, after calling before, and
// reports whether there was one.
func (ti *termIO) cancelAnswer(before func()) bool {
	ti.amu.Lock()
	cancel := ti.answering
	ti.amu.Unlock()
	if cancel == nil {
		return false
	}
	before()
	cancel()
	return true
}

// openTerm puts in (a terminal) in raw mode and returns the line editor
// writing to out. interrupt cancels the running call, if any, on Ctrl-C;
// complete lists the completions of a partial line.
func openTerm(in, out *os.File, hist *harness.History, interrupt func() bool, complete func(prefix string) []string) (*termIO, error) {
	fd := int(in.Fd())
	old, err := term.MakeRaw(fd)
	if err != nil {
		return nil, err
	}
	src, release, err := pollableTTY(in)
	if err != nil {
		_ = term.Restore(fd, old)
		return nil, err
	}
	buf := newTTYBuffer()
	ti := &termIO{fd: fd, old: old, in: buf, hist: hist, src: src, release: release, pumped: make(chan struct{})}
	ti.t = term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{buf, out}, "yolop> ")
	ti.t.History = hist
	ti.t.AutoCompleteCallback = func(line string, pos int, key rune) (string, int, bool) {
		if key != '\t' {
			return "", 0, false
		}
		return harness.CompleteLine(line, pos, complete(line[:pos]))
	}
	go func() {
		defer close(ti.pumped)
		buf.pump(src, func() {
			// Ctrl-C cancels an open question as well as the call that
			// asked it, and drops what was typed for it and not yet
			// read: once the call returns, the prompt may take the
			// terminal before the question's reader does, and must not
			// get a half answer.
			// (Dropped before the cancel, which makes Answer inject the
			// keys that end its read.)
			asking := ti.cancelAnswer(buf.discard)
			interrupt()
			if !asking {
				// Ctrl-U: Ctrl-C clears the line, at an idle prompt and
				// what was typed ahead while a call ran alike (the prompt
				// may be redrawn before the call has quite ended).
				buf.inject("\x15")
			}
		})
	}()
	return ti, nil
}

// Close stops reading the terminal and restores its modes.
func (ti *termIO) Close() {
	_ = ti.src.Close() // ends the pump's pending read
	<-ti.pumped
	ti.release()
	_ = term.Restore(ti.fd, ti.old)
}

// Write writes output above the prompt, which is redrawn after it.
func (ti *termIO) Write(p []byte) (int, error) { return ti.t.Write(p) }

// ReadLine reads a command line at the prompt; io.EOF is Ctrl-D on an
// empty line (or the end of input).
func (ti *termIO) ReadLine() (string, error) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	ti.t.SetPrompt("yolop> ")
	return ti.t.ReadLine()
}

// Answer reads the answer to a question: with echo off for a secret, and
// never into the history.
func (ti *termIO) Answer(ctx context.Context, prompt string, secret bool) (string, error) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	// Cancelled before its read began (it may have waited for the
	// prompt's read to end): read nothing, so the terminal's next line
	// stays a command.
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("the question was cancelled: %w", err)
	}
	// A question whose asker gives up (Ctrl-C cancelled its call) ends
	// the read: the line typed so far is erased and entered empty
	// (Ctrl-E, Ctrl-U, Enter), so the next line is a command again rather
	// than a late answer no one reads.
	stop := context.AfterFunc(ctx, func() { ti.in.inject("\x05\x15\r") })
	defer stop()
	var line string
	var err error
	if secret {
		line, err = ti.t.ReadPassword(prompt)
	} else {
		ti.t.History = noHistory{}
		ti.t.SetPrompt(prompt)
		line, err = ti.t.ReadLine()
		ti.t.History = ti.hist
		ti.t.SetPrompt("yolop> ")
	}
	if err == nil && ctx.Err() != nil {
		return "", fmt.Errorf("the question was cancelled: %w", ctx.Err())
	}
	return line, err
}

// A ttyBuffer holds what the terminal sent until the line editor reads it.
// The pump reads the terminal all the time, so Ctrl-C is seen while a call
// runs and nothing else is reading.
type ttyBuffer struct {
	mu   sync.Mutex
	cond *sync.Cond
	buf  []byte
	err  error
}

func newTTYBuffer() *ttyBuffer {
	b := &ttyBuffer{}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *ttyBuffer) pump(r io.Reader, ctrlC func()) {
	chunk := make([]byte, 256)
	for {
		n, err := r.Read(chunk)
		for _, c := range chunk[:n] {
			if c == 3 {
				ctrlC()
				continue
			}
			b.mu.Lock()
			b.buf = append(b.buf, c)
			b.mu.Unlock()
			b.cond.Broadcast()
		}
		if err != nil {
			b.mu.Lock()
			b.err = err
			b.mu.Unlock()
			b.cond.Broadcast()
			return
		}
	}
}

// discard drops what the terminal sent and no one has read yet.
func (b *ttyBuffer) discard() {
	b.mu.Lock()
	b.buf = b.buf[:0]
	b.mu.Unlock()
}

func (b *ttyBuffer) inject(s string) {
	b.mu.Lock()
	b.buf = append(b.buf, s...)
	b.mu.Unlock()
	b.cond.Broadcast()
}

// Read implements io.Reader.
func (b *ttyBuffer) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.buf) == 0 && b.err == nil {
		b.cond.Wait()
	}
	if len(b.buf) == 0 {
		return 0, b.err
	}
	n := copy(p, b.buf)
	b.buf = b.buf[n:]
	return n, nil
}

// noHistory records nothing: answers to questions stay out of the history.
type noHistory struct{}

func (noHistory) Add(string)    {}
func (noHistory) Len() int      { return 0 }
func (noHistory) At(int) string { return "" }
