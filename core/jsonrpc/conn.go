package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/internal/jsonscan"
	"yolop.dev/core/yep"
)

// A Handler serves the requests and notifications a peer sends.
//
// Requests are handled concurrently, each on its own goroutine, bounded by
// [Options.MaxConcurrentHandlers]; ctx is cancelled when the peer cancels
// the request or the connection closes. The result is encoded as the
// response; an error is sent as the response's error object (a *yep.Error
// as it is, anything else as an internal error).
//
// Notifications are handled one at a time on the connection's reader
// goroutine, in arrival order; req.ID is nil and the result is ignored. A
// notification handler must not block: hand slow work to another goroutine.
type Handler interface {
	Handle(ctx context.Context, req *Request) (result any, err error)
}

// HandlerFunc adapts a function to [Handler].
type HandlerFunc func(ctx context.Context, req *Request) (any, error)

// Handle implements [Handler].
func (f HandlerFunc) Handle(ctx context.Context, req *Request) (any, error) { return f(ctx, req) }

// A Request is an incoming request or notification.
type Request struct {
	Method string
	// Params is the raw params member; nil when absent. It stays valid
	// after the handler returns.
	Params json.RawMessage
	// ID is the request id, or nil for a notification.
	ID yep.ID
	// Conn is the connection the request arrived on.
	Conn *Conn
}

// IsNotification reports whether the request expects no response.
func (r *Request) IsNotification() bool { return r.ID == nil }

// Options configure a [Conn]. The zero value is valid.
type Options struct {
	// Framer frames messages. Nil means NDJSON.
	Framer Framer
	// Handler serves incoming requests and notifications. Nil answers every
	// request with method-not-found and ignores notifications.
	Handler Handler
	// Logger receives protocol warnings (skipped lines, dropped responses),
	// rate-limited by WarnBurst and WarnInterval. Nil means no logging.
	Logger hclog.Logger
	// MaxMessageSize bounds one incoming message. Zero means 16 MiB.
	MaxMessageSize int
	// MaxConcurrentHandlers bounds requests handled at once. Zero means 64.
	MaxConcurrentHandlers int
	// MaxQueuedRequests bounds requests received but not finished; beyond
	// it a request is answered with the retryable overloaded error. Zero
	// means 4096.
	MaxQueuedRequests int
	// CancelMethod is the method that cancels a request by id. Empty means
	// "cancel" (YEP).
	CancelMethod string
	// CancelNotification sends and accepts the cancel method as a
	// notification (LSP's "$/cancelRequest") instead of a request. A call
	// cancelled this way still resolves at once on the calling side.
	CancelNotification bool
	// PeerGone is called once when reading ends with a read error (io.EOF
	// for a clean end), but not when the connection ended for
	// MaxViolations. It returns the cause reported to pending calls, e.g.
	// enriched with the process's exit status. Nil reports the read error
	// as it is.
	PeerGone func(readErr error) error
	// Closer is closed by [Conn.Close] to release the underlying stream.
	// Nil means Close only stops the connection.
	Closer io.Closer
	// MaxViolations is how many protocol violations the peer may send
	// within ViolationWindow: lines that are not JSON, invalid messages
	// (each also skipped, and answered or failed as the protocol says),
	// oversized messages and the messages a handler refuses with
	// [Conn.ReportViolation]. At the limit the connection ends, as Close would,
	// with a *[ProtocolError]. Zero means [DefaultMaxViolations] (100);
	// negative means no limit.
	MaxViolations int
	// ViolationWindow is the sliding window MaxViolations is counted in.
	// Zero means [DefaultViolationWindow] (10s).
	ViolationWindow time.Duration
	// OnViolation, if set, is called once for each protocol violation,
	// those of [Conn.ReportViolation] included, e.g. to count them. It
	// must not block. Nil means violations are only logged and limited.
	OnViolation func()
	// WarnBurst is how many protocol warnings are logged at once; past it,
	// one more is logged per WarnInterval and the rest are counted into a
	// "suppressed N protocol warnings" line, so a flood cannot flood the
	// log. Zero means [DefaultWarnBurst] (10).
	WarnBurst int
	// WarnInterval is how often one more warning may be logged once the
	// burst is spent. Zero means [DefaultWarnInterval] (1s).
	WarnInterval time.Duration
}

// ErrClosed is matched, with errors.Is, by the error every pending and
// later call fails with once the connection is gone.
var ErrClosed = errors.New("connection closed")

// A ClosedError reports a call that failed because the connection ended.
type ClosedError struct {
	// Cause says why: the peer went away (with the transport's reason) or
	// the connection was closed locally.
	Cause error
}

func (e *ClosedError) Error() string {
	if e.Cause == nil || e.Cause == io.EOF {
		return "connection closed: the peer went away (end of stream)"
	}
	return "connection closed: " + e.Cause.Error()
}

// Unwrap returns ErrClosed and the cause.
func (e *ClosedError) Unwrap() []error { return []error{ErrClosed, e.Cause} }

// A CancelledError resolves a call whose context ended before its response
// arrived. It matches yep.ErrCancelled and the context's error.
type CancelledError struct {
	Method string
	Cause  error
}

func (e *CancelledError) Error() string {
	return fmt.Sprintf("%s: cancelled (%v)", e.Method, e.Cause)
}

// Unwrap returns yep.ErrCancelled and the context's error.
func (e *CancelledError) Unwrap() []error { return []error{yep.ErrCancelled, e.Cause} }

// An InvalidResponseError fails a call whose response the connection
// rejected: the line named the call's id but broke the envelope rules (both
// or neither of result and error, a batch array, a missing "jsonrpc" or one
// other than "2.0", a duplicate or case-variant member, an id written as a
// number that is not an integer, such as 2.0), so it has no single meaning.
// The call fails as soon as the line is read.
type InvalidResponseError struct {
	// Method is the method of the call that failed.
	Method string
	// Reason names the violation, e.g. "both result and error".
	Reason string
}

func (e *InvalidResponseError) Error() string {
	if e.Method == "" {
		return "invalid response: " + e.Reason
	}
	return e.Method + ": invalid response: " + e.Reason
}

// A Conn is a JSON-RPC connection. Its methods are safe for concurrent use.
type Conn struct {
	opts   Options
	reader MessageReader
	writer MessageWriter
	raw    io.Writer // what writer frames onto, for NotifyEach's one write
	log    hclog.Logger

	nextID  atomic.Int64
	writeMu chan struct{} // one-slot write lock that respects contexts

	mu       sync.Mutex
	pending  map[int64]*pending
	incoming map[string]context.CancelFunc
	closeErr error // set once the connection is done
	notifyN  int   // pending calls with an OnNotify

	vmu        sync.Mutex
	violations violationLog // guarded by vmu

	queued  atomic.Int64
	sem     chan struct{}
	role    chan struct{} // hands the reading role to an idle worker
	idle    atomic.Int64  // workers waiting for the reading role
	baseCtx context.Context
	stop    context.CancelFunc
	done    chan struct{}
	wg      sync.WaitGroup // readers, workers and cancel senders
	readWG  sync.WaitGroup // done when reading has ended
	cr      callerRole     // the calling side's reading (callerread.go)
}

type pending struct {
	ch       chan reply
	onNotify func(method string, params json.RawMessage)
}

type reply struct {
	result json.RawMessage
	err    error
	role   bool // the reading role comes with it (callerread.go)
}

// NewConn starts a connection reading from r and writing to w. Reading
// runs until r ends or Close is called, always on exactly one goroutine at
// a time (see serve).
func NewConn(r io.Reader, w io.Writer, opts Options) *Conn {
	if opts.Framer == nil {
		opts.Framer = NDJSON
	}
	if opts.MaxMessageSize <= 0 {
		opts.MaxMessageSize = DefaultMaxMessageSize
	}
	if opts.MaxConcurrentHandlers <= 0 {
		opts.MaxConcurrentHandlers = 64
	}
	if opts.MaxQueuedRequests <= 0 {
		opts.MaxQueuedRequests = 4096
	}
	if opts.CancelMethod == "" {
		opts.CancelMethod = yep.MethodCancel
	}
	if opts.MaxViolations == 0 {
		opts.MaxViolations = DefaultMaxViolations
	}
	if opts.ViolationWindow <= 0 {
		opts.ViolationWindow = DefaultViolationWindow
	}
	if opts.WarnBurst <= 0 {
		opts.WarnBurst = DefaultWarnBurst
	}
	if opts.WarnInterval <= 0 {
		opts.WarnInterval = DefaultWarnInterval
	}
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	ctx, stop := context.WithCancel(context.Background())
	c := &Conn{
		opts:     opts,
		reader:   opts.Framer.NewReader(r, opts.MaxMessageSize),
		writer:   opts.Framer.NewWriter(w),
		raw:      w,
		log:      log,
		writeMu:  make(chan struct{}, 1),
		pending:  make(map[int64]*pending),
		incoming: make(map[string]context.CancelFunc),
		sem:      make(chan struct{}, opts.MaxConcurrentHandlers),
		role:     make(chan struct{}),
		baseCtx:  ctx,
		stop:     stop,
		done:     make(chan struct{}),
	}
	c.violations = newViolationLog(&opts)
	c.cr.dl = interruptible(r, c.reader)
	c.readWG.Add(1)
	c.wg.Add(1)
	go c.serve(true, nil)
	return c
}

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended, once Done is closed.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeErr
}

// CallOptions tune one call. The zero value is valid.
type CallOptions struct {
	// OnNotify receives, in arrival order and on the reading goroutine,
	// every notification whose params carry "request_id" equal to this
	// call's id, until the call resolves. It must not block.
	OnNotify func(method string, params json.RawMessage)
	// OnID, if set, is called with the call's id before it is sent.
	OnID func(id yep.ID)
}

// Call sends a request and waits for its response, decoding the result
// into result (which may be nil, or a *json.RawMessage to keep it raw).
//
// If ctx ends first, Call sends a cancel for the request and returns a
// *[CancelledError] at once. An error response is returned as a *yep.Error.
// If the connection ends, the error is a *[ClosedError].
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	return c.CallWith(ctx, method, params, result, CallOptions{})
}

// CallWith is [Conn.Call] with per-call options.
func (c *Conn) CallWith(ctx context.Context, method string, params, result any, co CallOptions) error {
	if err := ctx.Err(); err != nil {
		return &CancelledError{Method: method, Cause: err} // never sent
	}
	id := c.nextID.Add(1)
	p := &pending{ch: make(chan reply, 1), onNotify: co.OnNotify}
	c.mu.Lock()
	if c.closeErr != nil {
		err := c.closeErr
		c.mu.Unlock()
		return &ClosedError{Cause: err}
	}
	c.pending[id] = p
	if p.onNotify != nil {
		c.notifyN++
	}
	c.mu.Unlock()
	if co.OnID != nil {
		co.OnID(yep.IntID(id))
	}

	buf := getBuf()
	buf.str(`{"jsonrpc":"2.0","id":`)
	buf.B = appendInt(buf.B, id)
	buf.str(`,"method":`)
	appendString(buf, method)
	err := appendParams(buf, params)
	if err == nil {
		buf.ch('}')
		err = c.write(ctx, buf.B)
	}
	putBuf(buf)
	if err != nil {
		c.forget(id)
		if ctx.Err() != nil {
			return &CancelledError{Method: method, Cause: ctx.Err()}
		}
		if cerr := c.Err(); cerr != nil {
			return &ClosedError{Cause: cerr}
		}
		return fmt.Errorf("%s: %w", method, err)
	}

	if c.takeParked() {
		return c.readForCall(ctx, method, id, p, result)
	}
	select {
	case r := <-p.ch:
		return decodeReply(method, c.takeRole(r), result)
	case <-ctx.Done():
		return c.cancelled(method, id, p, result, ctx.Err())
	}
}

// cancelled ends a call whose context ended with cause: the response, if
// it won the race, else a cancel sent and a *CancelledError.
func (c *Conn) cancelled(method string, id int64, p *pending, result any, cause error) error {
	if !c.forget(id) {
		// The response won the race; use it.
		return decodeReply(method, c.takeRole(<-p.ch), result)
	}
	c.sendCancel(yep.IntID(id))
	return &CancelledError{Method: method, Cause: cause}
}

// takeRole parks the reading role if r brought it.
func (c *Conn) takeRole(r reply) reply {
	if r.role {
		c.parkRole()
	}
	return r
}

// A ValidJSONUnmarshaler decodes a call's result from bytes the
// connection has already checked to be valid JSON, so it may skip the
// validation pass json.Unmarshal makes before decoding
// ([yep.ToolResult] is one).
type ValidJSONUnmarshaler interface {
	UnmarshalValidJSON(b []byte) error
}

func decodeReply(method string, r reply, result any) error {
	if r.err != nil {
		if ire, ok := r.err.(*InvalidResponseError); ok {
			ire.Method = method
		}
		return r.err
	}
	if result == nil {
		return nil
	}
	if raw, ok := result.(*json.RawMessage); ok {
		*raw = r.result
		return nil
	}
	if u, ok := result.(ValidJSONUnmarshaler); ok {
		// The whole message was validated when it was read.
		if err := u.UnmarshalValidJSON(r.result); err != nil {
			return fmt.Errorf("%s: decoding result: %w", method, err)
		}
		return nil
	}
	if err := json.Unmarshal(r.result, result); err != nil {
		return fmt.Errorf("%s: decoding result: %w", method, err)
	}
	return nil
}

// forget removes a pending call, reporting whether it was still pending.
func (c *Conn) forget(id int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pending[id]
	if ok {
		delete(c.pending, id)
		if p.onNotify != nil {
			c.notifyN--
		}
	}
	return ok
}

// sendCancel tells the peer to abort request id, without waiting long.
func (c *Conn) sendCancel(id yep.ID) {
	params := yep.CancelParams{ID: id}
	if c.opts.CancelNotification {
		ctx, cancel := context.WithTimeout(c.baseCtx, time.Second)
		defer cancel()
		_ = c.Notify(ctx, c.opts.CancelMethod, params)
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		ctx, cancel := context.WithTimeout(c.baseCtx, 5*time.Second)
		defer cancel()
		var res yep.CancelResult
		if err := c.Call(ctx, c.opts.CancelMethod, params, &res); err != nil && !errors.Is(err, ErrClosed) {
			c.log.Debug("cancel request failed", "id", id.String(), "error", err)
		}
	}()
}

// Notify sends a notification.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	if err := c.Err(); err != nil {
		return &ClosedError{Cause: err}
	}
	buf := getBuf()
	defer putBuf(buf)
	buf.str(`{"jsonrpc":"2.0","method":`)
	appendString(buf, method)
	if err := appendParams(buf, params); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	buf.ch('}')
	if err := c.write(ctx, buf.B); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// NotifyEach sends a notification of method for each of params, in order,
// framed into one write: the peer reads the batch with one wake-up where
// one write each would wake it once per notification. A params value that
// does not encode fails the batch before anything is sent.
func NotifyEach[T any](ctx context.Context, c *Conn, method string, params []T) error {
	if len(params) == 0 {
		return nil
	}
	if err := c.Err(); err != nil {
		return &ClosedError{Cause: err}
	}
	out := getBuf()
	defer putBuf(out)
	framed := c.opts.Framer.NewWriter((*appendWriter)(&out.B))
	msg := getBuf()
	defer putBuf(msg)
	for i := range params {
		msg.B = msg.B[:0]
		msg.str(`{"jsonrpc":"2.0","method":`)
		appendString(msg, method)
		if err := appendParams(msg, params[i]); err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
		msg.ch('}')
		if err := framed.Write(msg.B); err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
	}
	select {
	case c.writeMu <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
	_, err := c.raw.Write(out.B)
	<-c.writeMu
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// appendWriter is an io.Writer appending to a byte slice.
type appendWriter []byte

func (w *appendWriter) Write(p []byte) (int, error) {
	*w = append(*w, p...)
	return len(p), nil
}

// write sends one message under the write lock.
func (c *Conn) write(ctx context.Context, msg []byte) error {
	select {
	case c.writeMu <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	err := c.writer.Write(msg)
	<-c.writeMu
	return err
}

// Close ends the connection: pending calls fail, handlers' contexts are
// cancelled, and Options.Closer is closed. It does not wait for the peer.
func (c *Conn) Close() error {
	c.shutdown(errors.New("closed by the local side"))
	var err error
	if c.opts.Closer != nil {
		err = c.opts.Closer.Close()
	}
	return err
}

// Wait blocks until reading has ended and every handler has finished.
// Call it after Close, or after the peer went away, to be sure no goroutine
// of the connection is left.
func (c *Conn) Wait() {
	c.readWG.Wait()
	c.wg.Wait()
}

// shutdown marks the connection done with cause and fails pending calls.
func (c *Conn) shutdown(cause error) {
	c.mu.Lock()
	if c.closeErr != nil {
		c.mu.Unlock()
		return
	}
	// Handlers' contexts end before the connection reads as closed, so a
	// handler whose write fails because of the close also finds its
	// context done, and answers cancelled rather than failed.
	c.stop()
	c.closeErr = cause
	pend := c.pending
	c.pending = map[int64]*pending{}
	c.notifyN = 0
	c.mu.Unlock()
	close(c.done)
	for _, p := range pend {
		p.ch <- reply{err: &ClosedError{Cause: cause}}
	}
	if c.cr.dl != nil {
		// A caller reading for its answer returns now, without waiting for
		// the stream to end; a parked role passes on, so reading ends.
		c.interrupt()
		c.unpark()
	}
}

// serve is the body of every connection goroutine. The goroutine holding
// the reading role (role) reads and dispatches messages; when one is a
// request to run, it passes the role to an idle worker (or a new
// goroutine) and runs the request itself, so a request is handled by the
// goroutine that read it, with no hand-off on the critical path (a
// leader/follower reader). Done, it waits idle for the role again; at most
// MaxConcurrentHandlers goroutines stay idle.
func (c *Conn) serve(role bool, j *job) {
	defer c.wg.Done()
	for {
		if role {
			next, st := c.readUntilJob()
			switch {
			case st == readEnded:
				c.readWG.Done()
				return
			case st == roleGiven:
				// A caller took the role with its answer; wait idle.
				role = false
			case c.moreBuffered() || roleHandoff == "immediate":
				// Another message is already here: let another goroutine
				// read it while this one runs the request.
				c.passRole()
				role, j = false, &next
			default:
				// Keep the role while the request runs; if it runs past
				// roleHandoffDelay, a timer passes the role on, so reading
				// (and with it a cancel for this request) never waits
				// longer than that. A short request on an idle connection
				// then wakes no other goroutine or thread at all: on an
				// idle machine that wake-up costs more than the request.
				h := &deferredHandoff{c: c}
				h.timer = time.AfterFunc(roleHandoffDelay, h.pass)
				c.run(next)
				if h.keep() {
					continue // still the reader
				}
				role = false
			}
		}
		if j != nil {
			c.run(*j)
			j = nil
		}
		if c.idle.Add(1) > int64(c.opts.MaxConcurrentHandlers) {
			c.idle.Add(-1)
			return
		}
		select {
		case <-c.role:
			c.idle.Add(-1)
			role = true
		case <-c.baseCtx.Done():
			c.idle.Add(-1)
			return
		}
	}
}

// roleHandoff set to "immediate" (go build -ldflags
// "-X yolop.dev/core/jsonrpc.roleHandoff=immediate") makes the reading
// goroutine pass its role on before every request it runs, as it did
// before the deferred hand-off; core/sdk's benchmark builds such a server
// to measure the difference in one run.
var roleHandoff string

// roleHandoffDelay is how long the reading goroutine runs a request while
// still holding the reading role before the role passes to another
// goroutine.
const roleHandoffDelay = 500 * time.Microsecond

// passRole hands the reading role to an idle worker, or a new goroutine.
func (c *Conn) passRole() {
	select {
	case c.role <- struct{}{}: // an idle worker takes over reading
	default:
		c.wg.Add(1)
		go c.serve(true, nil)
	}
}

// moreBuffered reports whether the reader holds the start of another
// message already.
func (c *Conn) moreBuffered() bool {
	b, ok := c.reader.(interface{ Buffered() int })
	return ok && b.Buffered() > 0
}

// A deferredHandoff passes the reading role on from a timer unless its
// holder takes it back first; exactly one of pass and keep wins.
type deferredHandoff struct {
	c     *Conn
	timer *time.Timer
	state atomic.Int32 // 0 holding, 1 passed, 2 kept
}

func (h *deferredHandoff) pass() {
	if h.state.CompareAndSwap(0, 1) {
		h.c.passRole()
	}
}

// keep stops the timer and reports whether the caller still holds the
// role (the timer had not passed it on).
func (h *deferredHandoff) keep() bool {
	h.timer.Stop()
	return h.state.CompareAndSwap(0, 2)
}

// readState is how readUntilJob ended.
type readState int

const (
	gotJob    readState = iota // a request to run
	readEnded                  // reading has ended
	roleGiven                  // the reading role went to a caller
)

// readUntilJob reads and dispatches messages until one is a request to
// run, which it returns, until reading ends, or until it hands the reading
// role to a caller with its answer.
func (c *Conn) readUntilJob() (job, readState) {
	for {
		msg, ok := c.readMessage()
		if !ok {
			return job{}, readEnded
		}
		var j job
		run := false
		if msg != nil {
			j, run = c.dispatch(msg)
		}
		switch {
		case run:
			return j, gotJob
		case c.handOver():
			// Answering a call (an oversized message too) handed the role
			// to its caller, who now ends reading if the connection ended.
			return job{}, roleGiven
		case msg != nil && c.Err() != nil:
			c.flushSuppressed()
			return job{}, readEnded
		}
	}
}

// readMessage reads the next message. It returns nil (and true) for a
// message it skipped (an oversized one, which it answers or fails) or a
// read it interrupted itself, and false once reading has ended.
func (c *Conn) readMessage() ([]byte, bool) {
	msg, err := c.reader.Read()
	if err == nil {
		return msg, true
	}
	var tl *TooLargeError
	if errors.As(err, &tl) {
		c.handleTooLarge(tl)
		if c.cr.giveTo == nil && c.Err() != nil {
			c.flushSuppressed()
			return nil, false
		}
		return nil, true // a caller given the role ends reading if need be
	}
	if c.ownInterrupt(err) {
		return nil, true
	}
	c.flushSuppressed()
	cause := err
	if c.opts.PeerGone != nil {
		cause = c.opts.PeerGone(err)
	}
	if cause == nil {
		cause = err
	}
	c.shutdown(cause)
	return nil, false
}

// handleTooLarge answers or fails the request or call an oversized message
// belonged to, judged from its first bytes.
func (c *Conn) handleTooLarge(tl *TooLargeError) {
	env, _ := parseEnvelope(tl.Prefix)
	defer c.violation(false, fmt.Sprintf("a message over the %d-byte limit: %s", tl.Limit, truncate(tl.Prefix, 80)),
		hclog.Error, "skipped an oversized message", "limit", tl.Limit, "prefix", truncate(tl.Prefix, 120))
	if env.id == nil || yep.ValidateID(env.id) != nil {
		return
	}
	if env.hasMethod() {
		c.replyError(append(yep.ID(nil), env.id...), yep.Errorf(yep.CodeMessageTooLarge, "message exceeds %d bytes", tl.Limit))
		return
	}
	if n, ok := yep.ID(env.id).Int64(); ok {
		c.deliver(n, reply{err: yep.Errorf(yep.CodeMessageTooLarge, "response exceeds the %d-byte message limit", tl.Limit)})
	}
}

// dispatch handles one message inline, except a request to run, which it
// returns for the caller to run.
func (c *Conn) dispatch(line []byte) (job, bool) {
	if !jsonscan.Valid(line) {
		c.violation(true, fmt.Sprintf("a line that is not JSON: %q", truncate(line, 80)),
			hclog.Warn, "skipping a line that is not JSON", "line", truncate(line, 200))
		return job{}, false
	}
	env, err := parseEnvelope(line)
	if err != nil {
		reason := err.Error()
		if errors.Is(err, errNotObject) && line[jsonscan.SkipWS(line, 0)] == '[' {
			reason = reasonBatch
		}
		if env.method != nil && env.id != nil && yep.ValidateID(env.id) == nil {
			c.replyError(append(yep.ID(nil), env.id...), yep.Errorf(yep.CodeInvalidRequest, "invalid request: %v", err))
		}
		c.failRejected(line, reason)
		c.invalid(reason, line)
		return job{}, false
	}
	if !env.hasMethod() {
		if reason := env.responseFault(); reason != "" {
			c.failRejected(line, reason)
			c.invalid("invalid response: "+reason, line)
			return job{}, false
		}
		c.handleResponse(&env)
		return job{}, false
	}
	if verr := env.validate(); verr != nil {
		if env.id != nil && yep.ValidateID(env.id) == nil {
			c.replyError(append(yep.ID(nil), env.id...), verr)
		}
		c.invalid(verr.Message, line)
		return job{}, false
	}
	method, err := env.methodName()
	if err != nil {
		c.invalid("undecodable method", line)
		return job{}, false
	}
	var params json.RawMessage
	if env.params != nil && string(env.params) != "null" {
		params = bytes.Clone(env.params)
	}
	if env.id == nil || string(env.id) == "null" {
		c.handleNotification(method, params)
		return job{}, false
	}
	return c.handleRequest(method, params, bytes.Clone(env.id))
}

// invalid records a skipped invalid message as a protocol violation.
func (c *Conn) invalid(reason string, line []byte) {
	c.violation(false, fmt.Sprintf("an invalid message (%s): %s", reason, truncate(line, 80)),
		hclog.Warn, "skipping an invalid message", "error", reason, "line", truncate(line, 200))
}

// failRejected fails, with an *InvalidResponseError naming reason, every
// pending call a rejected line answers.
func (c *Conn) failRejected(line []byte, reason string) {
	for _, id := range rejectedResponseIDs(line) {
		if n, ok := callID(id); ok && c.deliver(n, reply{err: &InvalidResponseError{Reason: reason}}) {
			c.log.Debug("failed a call whose response was rejected", "id", n, "reason", reason)
		}
	}
}

func (c *Conn) handleResponse(env *envelope) {
	n, ok := yep.ID(env.id).Int64()
	if !ok {
		c.log.Debug("dropping a response to an id this side never used", "id", string(env.id))
		return
	}
	var r reply
	if env.err != nil {
		e := new(yep.Error)
		if err := json.Unmarshal(env.err, e); err != nil {
			e = yep.Errorf(yep.CodeInternalError, "malformed error object: %v", err)
		}
		r.err = e
	} else {
		r.result = bytes.Clone(env.result)
	}
	if !c.deliver(n, r) {
		c.log.Debug("dropping a response to an unknown or cancelled call", "id", n)
	}
}

func (c *Conn) deliver(id int64, r reply) bool {
	c.mu.Lock()
	p, ok := c.pending[id]
	if ok {
		delete(c.pending, id)
		if p.onNotify != nil {
			c.notifyN--
		}
		if c.giveRoleWith(p.ch, r) {
			c.mu.Unlock()
			return true // sent with the role by handOver
		}
	}
	c.mu.Unlock()
	if ok {
		p.ch <- r
	}
	return ok
}

func (c *Conn) handleNotification(method string, params json.RawMessage) {
	if method == c.opts.CancelMethod && c.opts.CancelNotification {
		c.cancelIncoming(params)
		return
	}
	if c.routeCorrelated(method, params) {
		return
	}
	if c.opts.Handler == nil {
		return
	}
	_, err := c.opts.Handler.Handle(c.baseCtx, &Request{Method: method, Params: params, Conn: c})
	if err != nil && !errors.Is(err, yep.ErrMethodNotFound) {
		c.log.Debug("notification handler failed", "method", method, "error", err)
	}
}

// routeCorrelated hands a notification carrying request_id to the pending
// call it names, if that call listens for notifications.
func (c *Conn) routeCorrelated(method string, params json.RawMessage) bool {
	c.mu.Lock()
	listening := c.notifyN > 0
	c.mu.Unlock()
	if !listening || params == nil {
		return false
	}
	rid := requestID(params)
	if rid == nil {
		return false
	}
	n, ok := yep.ID(rid).Int64()
	if !ok {
		return false
	}
	c.mu.Lock()
	p := c.pending[n]
	c.mu.Unlock()
	if p == nil || p.onNotify == nil {
		return false
	}
	p.onNotify(method, params)
	return true
}

// requestID extracts the top-level "request_id" member of params.
func requestID(params []byte) []byte {
	var id []byte
	_ = jsonscan.Members(params, func(key, val []byte) bool {
		if string(key) == "request_id" {
			id = val
			return false
		}
		return true
	})
	return id
}

func (c *Conn) cancelIncoming(params json.RawMessage) bool {
	var p yep.CancelParams
	if err := json.Unmarshal(params, &p); err != nil || p.ID.IsZero() {
		return false
	}
	c.mu.Lock()
	cancel := c.incoming[string(p.ID)]
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return cancel != nil
}

// errCancelledByPeer marks a handler context cancelled by a cancel request.
var errCancelledByPeer = errors.New("cancelled by the peer")

func (c *Conn) handleRequest(method string, params json.RawMessage, id yep.ID) (job, bool) {
	if method == c.opts.CancelMethod && !c.opts.CancelNotification {
		found := c.cancelIncoming(params)
		c.reply(id, yep.CancelResult{Cancelled: found})
		return job{}, false
	}
	if c.opts.Handler == nil {
		c.replyError(id, yep.Errorf(yep.CodeMethodNotFound, "method %q not found", method))
		return job{}, false
	}
	if c.queued.Add(1) > int64(c.opts.MaxQueuedRequests) {
		c.queued.Add(-1)
		c.replyError(id, &yep.Error{Code: yep.CodeOverloaded, Message: "too many requests in flight; retry later", Retryable: true})
		return job{}, false
	}
	ctx, cancel := context.WithCancelCause(c.baseCtx)
	key := string(id)
	c.mu.Lock()
	if _, dup := c.incoming[key]; dup {
		c.mu.Unlock()
		cancel(nil)
		c.queued.Add(-1)
		c.replyError(id, yep.Errorf(yep.CodeInvalidRequest, "request id %s is already in flight", key))
		return job{}, false
	}
	c.incoming[key] = func() { cancel(errCancelledByPeer) }
	c.mu.Unlock()

	return job{method: method, params: params, id: id, key: key, ctx: ctx, cancel: cancel}, true
}

// A job is one incoming request waiting for, or running in, a worker.
type job struct {
	method string
	params json.RawMessage
	id     yep.ID
	key    string
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// run handles one request and sends its response.
func (c *Conn) run(j job) {
	defer c.queued.Add(-1)
	defer j.cancel(nil)
	ctx := j.ctx
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
	}
	var result any
	var err error
	if ctx.Err() == nil {
		result, err = c.opts.Handler.Handle(ctx, &Request{Method: j.method, Params: j.params, ID: j.id, Conn: c})
		<-c.sem
	} else {
		// Cancelled or closed while queued: the handler never ran, so the
		// request must not be answered with a null result.
		err = yep.ErrCancelled
	}
	c.mu.Lock()
	delete(c.incoming, j.key)
	c.mu.Unlock()
	if errors.Is(context.Cause(ctx), errCancelledByPeer) {
		c.replyError(j.id, yep.ErrCancelled)
		return
	}
	if err != nil {
		c.replyError(j.id, toWireError(err))
		return
	}
	c.reply(j.id, result)
}

func toWireError(err error) *yep.Error {
	var we *yep.Error
	if errors.As(err, &we) {
		return we
	}
	if errors.Is(err, context.Canceled) {
		return yep.ErrCancelled
	}
	return &yep.Error{Code: yep.CodeInternalError, Message: err.Error()}
}

func (c *Conn) reply(id yep.ID, result any) {
	buf := getBuf()
	defer putBuf(buf)
	buf.str(`{"jsonrpc":"2.0","id":`)
	buf.raw(id)
	buf.str(`,"result":`)
	start := len(buf.B)
	if err := appendJSON(buf, result); err != nil {
		buf.B = buf.B[:start]
		c.replyError(id, yep.Errorf(yep.CodeInternalError, "encoding result: %v", err))
		return
	}
	if len(buf.B) == start {
		buf.str("null")
	}
	buf.ch('}')
	if err := c.write(context.Background(), buf.B); err != nil {
		c.log.Debug("could not send a response", "id", id.String(), "error", err)
	}
}

func (c *Conn) replyError(id yep.ID, e *yep.Error) {
	buf := getBuf()
	defer putBuf(buf)
	buf.str(`{"jsonrpc":"2.0","id":`)
	buf.raw(id)
	buf.str(`,"error":`)
	if err := appendJSON(buf, e); err != nil {
		return
	}
	buf.ch('}')
	if err := c.write(context.Background(), buf.B); err != nil {
		c.log.Debug("could not send an error response", "id", id.String(), "error", err)
	}
}

// truncate returns b, or its first n bytes and an ellipsis, never cutting
// a UTF-8 sequence in two.
func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return string(b[:n]) + "…"
}
