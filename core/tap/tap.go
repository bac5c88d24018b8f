// Package tap provides a [core.Transport] decorator that observes every
// line a capability server and its host exchange, in both directions,
// without changing what either side sees.
//
// It is the seam recorders, protocol checkers (the doctor) and debugging
// tools build on: they wrap the session's transport instead of forking
// the engine.
package tap

import (
	"bytes"
	"context"
	"io"
	"sync"
	"time"

	"yolop.dev/core"
)

// A Direction is the way a line travels.
type Direction int

const (
	// ToServer is a line the host wrote to the server's stdin.
	ToServer Direction = iota
	// ToHost is a line the server wrote to its stdout.
	ToHost
)

func (d Direction) String() string {
	if d == ToServer {
		return "host→server"
	}
	return "server→host"
}

// MaxLine is the longest line a tap buffers to observe: the host's own
// message limit (16 MiB, default_max_message_bytes in meta.json). A longer
// line passes through unobserved and is reported as a [Line] with
// Oversize set.
const MaxLine = 16 << 20

// A Line is one line seen on the wire.
type Line struct {
	// Instance numbers the instances a [Transport] started, from 0, in
	// the order their Start returned.
	Instance int
	// Name is the extension name of the instance's [core.ServerSpec].
	Name string
	// Dir is the way the line travelled.
	Dir Direction
	// At is when the tap saw the line: before the server could read it
	// (ToServer), or before the host could (ToHost).
	At time.Time
	// Data is the line without its newline or a trailing carriage
	// return. Observers must not keep it past the call; copy it.
	Data []byte
	// Oversize reports a line longer than [MaxLine]; Data is nil.
	Oversize bool
}

// A Transport is a [core.Transport] that reports every line of every
// instance it starts to Observe, each way, and otherwise passes both
// streams through unchanged: bytes reach the other side as they were
// read or written, in the same chunks.
//
// Observe is called synchronously, from the goroutine that reads the
// server's stdout or writes its stdin, before the other side can see the
// line; it may be called concurrently for different directions and
// instances. It must return quickly (queue, do not wait on the
// connection), since the connection waits for it.
type Transport struct {
	// Inner starts the instances.
	Inner core.Transport
	// Observe receives every line. Nil observes nothing.
	Observe func(Line)

	mu sync.Mutex
	n  int
}

// Start implements [core.Transport].
func (t *Transport) Start(ctx context.Context, spec core.ServerSpec) (core.Instance, error) {
	inst, err := t.Inner.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	n := t.n
	t.n++
	t.mu.Unlock()
	return Wrap(inst, n, spec.Name, t.Observe), nil
}

// Wrap returns inst with its streams tapped: every line is reported to
// observe as a [Line] numbered n and named name. The returned instance
// keeps inst's other methods, and its optional [core.Cooperative] answer.
func Wrap(inst core.Instance, n int, name string, observe func(Line)) core.Instance {
	if observe == nil {
		observe = func(Line) {}
	}
	o := &observer{n: n, name: name, observe: observe}
	ti := &instance{Instance: inst,
		out: &reader{o: o, r: inst.Stdout()},
		in:  &writer{o: o, w: inst.Stdin()}}
	if c, ok := inst.(core.Cooperative); ok {
		return &cooperative{instance: ti, coop: c.Cooperative()}
	}
	return ti
}

type observer struct {
	n       int
	name    string
	observe func(Line)
}

func (o *observer) line(dir Direction, b []byte) {
	o.observe(Line{Instance: o.n, Name: o.name, Dir: dir, At: time.Now(), Data: bytes.TrimRight(b, "\r")})
}

func (o *observer) oversize(dir Direction) {
	o.observe(Line{Instance: o.n, Name: o.name, Dir: dir, At: time.Now(), Oversize: true})
}

type instance struct {
	core.Instance
	out *reader
	in  *writer
}

func (i *instance) Stdout() io.Reader     { return i.out }
func (i *instance) Stdin() io.WriteCloser { return i.in }

type cooperative struct {
	*instance
	coop bool
}

func (c *cooperative) Cooperative() bool { return c.coop }

// A splitter cuts a stream into lines, bounded by MaxLine.
type splitter struct {
	partial  []byte
	oversize bool // the rest of a line too long to observe is passing
}

// feed observes every line b completes.
func (s *splitter) feed(o *observer, dir Direction, b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if s.oversize {
				return
			}
			s.partial = append(s.partial, b...)
			if len(s.partial) > MaxLine {
				s.partial = nil
				s.oversize = true
				o.oversize(dir)
			}
			return
		}
		if s.oversize {
			s.oversize = false
		} else if len(s.partial) > 0 {
			s.partial = append(s.partial, b[:i]...)
			if len(s.partial) > MaxLine {
				o.oversize(dir)
			} else {
				s.observe(o, dir, s.partial)
			}
			s.partial = s.partial[:0]
		} else {
			s.observe(o, dir, b[:i])
		}
		b = b[i+1:]
	}
}

func (s *splitter) observe(o *observer, dir Direction, line []byte) {
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	o.line(dir, line)
}

// end observes an unterminated last line.
func (s *splitter) end(o *observer, dir Direction) {
	if !s.oversize && len(s.partial) > 0 {
		s.observe(o, dir, s.partial)
	}
	s.partial, s.oversize = nil, false
}

// A reader passes the server's stdout through and observes each line
// before returning the bytes that complete it.
type reader struct {
	o *observer
	r io.Reader
	s splitter // only the connection's single reader touches it
}

func (r *reader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.s.feed(r.o, ToHost, p[:n])
	if err != nil {
		r.s.end(r.o, ToHost)
	}
	return n, err
}

// A writer passes the host's messages to the server's stdin and observes
// each line before writing it: the server may answer before Write
// returns, and its answer must find the request already observed.
//
// The connection has one writer, but the host may close stdin while a
// write is under way (a cancel still going out as the session closes), so
// the splitter is guarded. The lock is not held across the write itself:
// closing must still unblock a write stuck on a full pipe.
type writer struct {
	o      *observer
	w      io.WriteCloser
	mu     sync.Mutex
	s      splitter
	closed bool // bytes written after Close are not observed: the server never reads them
}

func (w *writer) Write(b []byte) (int, error) {
	w.mu.Lock()
	if !w.closed {
		w.s.feed(w.o, ToServer, b)
	}
	w.mu.Unlock()
	return w.w.Write(b)
}

func (w *writer) Close() error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		w.s.end(w.o, ToServer)
	}
	w.mu.Unlock()
	return w.w.Close()
}
