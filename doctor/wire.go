package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"yolop.dev/core"
	"yolop.dev/core/tap"
	"yolop.dev/core/yep"
)

// A direction is the way a message travels.
type direction int

const (
	toServer direction = iota // host → server (the server's stdin)
	toHost                    // server → host (the server's stdout)
)

func (d direction) String() string {
	if d == toServer {
		return "host→server"
	}
	return "server→host"
}

// sender names who wrote a message travelling in d.
func (d direction) sender() string {
	if d == toServer {
		return "host"
	}
	return "server"
}

// A wireMsg is one line seen on the wire, classified by its fields as the
// protocol classifies it.
type wireMsg struct {
	seq  int
	conn int // which spawned instance (0 = the first)
	dir  direction
	at   time.Time
	raw  []byte

	method string          // for requests and notifications
	id     json.RawMessage // nil for notifications
	params json.RawMessage
	result json.RawMessage
	err    *yep.Error
	// answers is the method of the request a response answers, "" when
	// unknown.
	answers string
	// problems are what makes the message not conform (minor ones left
	// out), one line each.
	problems []string
}

func (m *wireMsg) isRequest() bool      { return m.method != "" && m.id != nil }
func (m *wireMsg) isNotification() bool { return m.method != "" && m.id == nil }
func (m *wireMsg) isResponse() bool     { return m.method == "" && m.id != nil }

// A problem is one message that does not conform to the protocol.
type problem struct {
	dir    direction
	what   string // method, or "response to <method>"
	detail string
	line   string // excerpt
	// minor problems are tolerated by the host (a missing "jsonrpc"
	// member, an unknown method) and graded as warnings.
	minor bool
}

// A wire is a [core.Transport] that interposes on every instance it
// starts: through [tap.Wrap] it sees each line in both directions, validates it against the
// YEP schema, and can hold back what the server sends (to make the server
// look slow) or drop it (to make it look dead), without changing the host
// code that talks to it.
type wire struct {
	inner   core.Transport
	schemas *schemas

	mu       sync.Mutex
	msgs     []*wireMsg
	problems []problem
	insts    []*tapInstance
	changed  chan struct{} // closed and replaced whenever msgs grows
}

func newWire(inner core.Transport, s *schemas) *wire {
	return &wire{inner: inner, schemas: s, changed: make(chan struct{})}
}

// Start implements [core.Transport].
func (w *wire) Start(ctx context.Context, spec core.ServerSpec) (core.Instance, error) {
	inst, err := w.inner.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	t := &tapInstance{w: w, n: len(w.insts), pending: [2]map[string]string{{}, {}}}
	w.insts = append(w.insts, t)
	w.mu.Unlock()
	t.out = &holdReader{r: inst.Stdout(), release: make(chan struct{})}
	held := &heldInstance{Instance: inst, out: t.out, in: &closeTimer{WriteCloser: inst.Stdin(), t: t}}
	t.Instance = tap.Wrap(held, t.n, spec.Name, func(l tap.Line) { w.line(t, l) })
	return t, nil
}

// latest returns the most recently started instance, or nil.
func (w *wire) latest() *tapInstance {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.insts) == 0 {
		return nil
	}
	return w.insts[len(w.insts)-1]
}

// live returns the newest instance whose server has not exited, or nil:
// the one the extension is talking to (the doctor runs one extension, and
// a respawn starts a new instance). It identifies the server on any
// transport, with or without a process id.
func (w *wire) live() *tapInstance {
	w.mu.Lock()
	defer w.mu.Unlock()
	if n := len(w.insts); n > 0 {
		t := w.insts[n-1]
		select {
		case <-t.Done():
		default:
			return t
		}
	}
	return nil
}

// mark returns the sequence number the next message will get.
func (w *wire) mark() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.msgs)
}

// since returns the messages from sequence number from on.
func (w *wire) since(from int) []*wireMsg {
	w.mu.Lock()
	defer w.mu.Unlock()
	if from > len(w.msgs) {
		return nil
	}
	return append([]*wireMsg(nil), w.msgs[from:]...)
}

// waitFor returns the first message from sequence number from on that
// satisfies pred, waiting for it until ctx ends.
func (w *wire) waitFor(ctx context.Context, from int, pred func(*wireMsg) bool) (*wireMsg, bool) {
	for {
		w.mu.Lock()
		for _, m := range w.msgs[min(from, len(w.msgs)):] {
			if pred(m) {
				w.mu.Unlock()
				return m, true
			}
		}
		from = len(w.msgs)
		ch := w.changed
		w.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, false
		}
	}
}

// response finds the response travelling in dir to request id on conn,
// from sequence number from on.
func (w *wire) response(ctx context.Context, from, conn int, dir direction, id json.RawMessage) (*wireMsg, bool) {
	return w.waitFor(ctx, from, func(m *wireMsg) bool {
		return m.conn == conn && m.dir == dir && m.isResponse() && bytes.Equal(m.id, id)
	})
}

// counts returns how many messages went each way.
func (w *wire) counts() (toSrv, toHst int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.msgs {
		if m.dir == toServer {
			toSrv++
		} else {
			toHst++
		}
	}
	return toSrv, toHst
}

func (w *wire) problemList() []problem {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]problem(nil), w.problems...)
}

// observe classifies and validates one line.
func (w *wire) observe(t *tapInstance, dir direction, line []byte) {
	w.observeAt(t, dir, time.Now(), line)
}

// observeAt classifies and validates one line seen at at.
func (w *wire) observeAt(t *tapInstance, dir direction, at time.Time, line []byte) {
	line = bytes.TrimRight(line, "\r")
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	m := &wireMsg{conn: t.n, dir: dir, at: at, raw: bytes.Clone(line)}
	var probs []problem
	bad := func(what, format string, args ...any) {
		probs = append(probs, problem{dir: dir, what: what, detail: fmt.Sprintf(format, args...), line: excerpt(line)})
	}
	minor := func(what, format string, args ...any) {
		bad(what, format, args...)
		probs[len(probs)-1].minor = true
	}
	var env struct {
		JSONRPC *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &env); err != nil {
		if dir == toHost {
			bad("stdout", "the server printed a line that is not a JSON-RPC message (stdout carries only protocol JSON; log to stderr): %v", err)
		} else {
			bad("stdin", "the host wrote a line that is not a JSON object: %v", err)
		}
		w.record(m, probs)
		return
	}
	switch {
	case env.JSONRPC == nil:
		minor("envelope", `message without "jsonrpc": "2.0" (the host accepts it; send it)`)
	case *env.JSONRPC != "2.0":
		bad("envelope", `"jsonrpc" is %q; it must be "2.0"`, *env.JSONRPC)
	}
	if string(env.ID) == "null" {
		env.ID = nil
	}
	m.id = env.ID
	m.params, m.result = env.Params, env.Result

	s := w.schemas
	w.mu.Lock()
	pending := t.pending[dir]
	answered := t.pending[1-dir]
	w.mu.Unlock()

	switch {
	case env.Method != nil:
		m.method = *env.Method
		if m.method == "" {
			bad("envelope", `"method" is empty`)
			break
		}
		if env.Result != nil || env.Error != nil {
			bad(m.method, `a request or notification must not carry "result" or "error"`)
		}
		info, known := yep.Method(m.method)
		if !known {
			minor(m.method, "unknown method (not in YEP %s); the receiver answers -32601 or ignores it", yep.ProtocolVersion)
			break
		}
		wantDir := yep.ToServer
		if dir == toHost {
			wantDir = yep.ToHost
		}
		if info.Direction != yep.Both && info.Direction != wantDir {
			bad(m.method, "%s is sent %s, never by the %s", m.method, strings.ReplaceAll(string(info.Direction), "_", " "), dir.sender())
		}
		isReq := m.id != nil
		if isReq != (info.Kind == yep.Request) {
			bad(m.method, "%s is a %s but was sent as a %s", m.method, info.Kind, map[bool]string{true: "request", false: "notification"}[isReq])
		}
		if isReq {
			if !validID(m.id) {
				bad(m.method, "id %s is not a string or an integer", m.id)
			}
			w.mu.Lock()
			pending[string(m.id)] = m.method
			w.mu.Unlock()
		}
		for _, p := range validate(s.params[m.method], m.params) {
			bad(m.method, "params %s", p)
		}
	case env.ID != nil:
		w.mu.Lock()
		method, ok := answered[string(env.ID)]
		delete(answered, string(env.ID))
		w.mu.Unlock()
		m.answers = method
		what := "response to " + method
		if !ok {
			what = "response"
			minor(what, "answers id %s, which names no request in flight from the %s", env.ID, (1 - dir).sender())
		}
		switch {
		case env.Result != nil && env.Error != nil:
			bad(what, `a response carries both "result" and "error"`)
		case env.Error != nil:
			var e yep.Error
			if json.Unmarshal(env.Error, &e) == nil {
				m.err = &e
			}
			for _, p := range validate(s.error, env.Error) {
				bad(what, "error %s", p)
			}
		case env.Result == nil:
			bad(what, `a response carries neither "result" nor "error"`)
		case ok:
			if sch := s.result[method]; sch != nil {
				for _, p := range validate(sch, env.Result) {
					bad(what, "result %s", p)
				}
			}
		}
	default:
		bad("envelope", `a message with neither "method" nor "id"`)
	}
	w.record(m, probs)
}

func (w *wire) record(m *wireMsg, probs []problem) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m.seq = len(w.msgs)
	for _, p := range probs {
		if !p.minor {
			m.problems = append(m.problems, p.detail)
		}
	}
	w.msgs = append(w.msgs, m)
	w.problems = append(w.problems, probs...)
	close(w.changed)
	w.changed = make(chan struct{})
}

func validID(id json.RawMessage) bool {
	var v any
	d := json.NewDecoder(bytes.NewReader(id))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return false
	}
	switch x := v.(type) {
	case string:
		return true
	case json.Number:
		_, err := x.Int64()
		return err == nil
	}
	return false
}

func excerpt(b []byte) string {
	const max = 160
	if len(b) <= max {
		return string(b)
	}
	return string(b[:max]) + fmt.Sprintf("… (%d bytes)", len(b))
}

// A tapInstance is a [core.Instance] whose streams pass through the wire:
// a [tap.Wrap] of the server's instance, whose stdout first passes through
// a holdReader the doctor controls.
type tapInstance struct {
	core.Instance
	w   *wire
	n   int
	out *holdReader
	// pending maps request ids to methods, per direction of the request.
	pending [2]map[string]string // guarded by w.mu

	stdinClosed time.Time // guarded by w.mu
}

// stdinClosedAt says when the host closed the server's stdin.
func (t *tapInstance) stdinClosedAt() time.Time {
	t.w.mu.Lock()
	defer t.w.mu.Unlock()
	return t.stdinClosed
}

// line observes one line the tap saw.
func (w *wire) line(t *tapInstance, l tap.Line) {
	dir := toServer
	if l.Dir == tap.ToHost {
		dir = toHost
	}
	if l.Oversize {
		if dir == toHost {
			w.record(&wireMsg{conn: t.n, dir: toHost, at: l.At}, []problem{{dir: toHost, what: "stdout",
				detail: fmt.Sprintf("a line longer than %d bytes: the host skips it (put large payloads in files and send the path)", maxObservedLine)}})
		}
		return
	}
	w.observeAt(t, dir, l.At, l.Data)
}

// maxObservedLine is the longest line the tap buffers to validate: the
// host's own message limit (16 MiB, default_max_message_bytes in
// meta.json).
const maxObservedLine = tap.MaxLine

// A heldInstance is the server's instance with its stdout behind a
// holdReader and its stdin's closing timed.
type heldInstance struct {
	core.Instance
	out *holdReader
	in  *closeTimer
}

func (h *heldInstance) Stdout() io.Reader     { return h.out }
func (h *heldInstance) Stdin() io.WriteCloser { return h.in }

// A closeTimer notes when the host closes the server's stdin.
type closeTimer struct {
	io.WriteCloser
	t *tapInstance
}

func (c *closeTimer) Close() error {
	c.t.w.mu.Lock()
	if c.t.stdinClosed.IsZero() {
		c.t.stdinClosed = time.Now()
	}
	c.t.w.mu.Unlock()
	return c.WriteCloser.Close()
}

// A holdReader passes the server's stdout through, whole lines at a time.
// It can hold lines back (the host sees a slow server) or drain everything
// still unread (the host sees a server that died without answering). The
// tap reads from it, so a held line is observed only once the hold ends
// with resume, and a dropped one never.
type holdReader struct {
	r io.Reader

	mu      sync.Mutex
	held    bool
	drain   bool
	release chan struct{} // closed when a hold ends
	out     []byte        // whole lines ready for the host
	partial []byte
	err     error
	buf     [32 << 10]byte
}

// hold makes the host see nothing from the server until resume or drop.
func (r *holdReader) hold() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.held {
		r.held = true
		r.release = make(chan struct{})
	}
}

// resume delivers what was held and lets later lines through.
func (r *holdReader) resume() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held {
		r.held = false
		close(r.release)
	}
}

// drop discards whatever the server wrote and has not been delivered, up
// to the end of its output: the host sees the stream end as if the server
// had died before writing it.
func (r *holdReader) drop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.drain = true
	r.out = nil
	r.partial = nil
	if r.held {
		r.held = false
		close(r.release)
	}
}

func (r *holdReader) Read(p []byte) (int, error) {
	for {
		r.mu.Lock()
		switch {
		case r.drain:
			r.mu.Unlock()
			_, _ = io.Copy(io.Discard, r.r)
			return 0, io.EOF
		case r.held:
			ch := r.release
			r.mu.Unlock()
			<-ch
			continue
		case len(r.out) > 0:
			n := copy(p, r.out)
			r.out = r.out[n:]
			r.mu.Unlock()
			return n, nil
		case r.err != nil:
			err := r.err
			r.mu.Unlock()
			return 0, err
		}
		r.mu.Unlock()

		n, err := r.r.Read(r.buf[:])
		r.mu.Lock()
		if !r.drain {
			// Only the new bytes can hold the last newline: searching the
			// whole partial line again on every read made a long line
			// quadratic.
			i := 0
			if j := bytes.LastIndexByte(r.buf[:n], '\n'); j >= 0 {
				i = len(r.partial) + j + 1
			}
			b := append(r.partial, r.buf[:n]...)
			switch {
			case err != nil:
				i = len(b)
				r.err = err
			case len(b)-i > maxObservedLine:
				// Pass a line too long to observe through for the host to
				// refuse, but do not buffer it.
				i = len(b)
			}
			r.out = append(r.out, b[:i]...)
			r.partial = append(b[:0], b[i:]...) // in place: no copy of a long line per read
		}
		r.mu.Unlock()
	}
}
