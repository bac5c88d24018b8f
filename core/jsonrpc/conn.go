package jsonrpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/internal/json"
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

	// mu guards the connection's state: the fields below it up to vmu.
	// Every change to them is made through update (state.go).
	mu       sync.Mutex
	pending  map[int64]*pending
	incoming map[string]context.CancelFunc
	closeErr error // set once the connection is done
	notifyN  int   // pending calls with an OnNotify
	idle     int   // workers waiting for the reading role
	hold     *roleHold

	vmu        sync.Mutex
	violations violationLog // guarded by vmu

	queued  atomic.Int64
	sem     chan struct{}
	role    chan struct{} // hands the reading role to a waiting worker
	baseCtx context.Context
	stop    context.CancelFunc
	done    chan struct{}
	wg      sync.WaitGroup // readers, workers and cancel senders
}

type pending struct {
	ch       chan reply
	onNotify func(method string, params json.RawMessage)
}

type reply struct {
	result json.RawMessage
	err    error
}

// NewConn starts a connection reading from r and writing to w. Reading
// runs until r ends or Close is called, always on exactly one goroutine at
// a time (see state.go).
func NewConn(r io.Reader, w io.Writer, opts Options) *Conn {
	if opts.Framer == nil {
		opts.Framer = NDJSON
	}
	if opts.CancelMethod == "" {
		opts.CancelMethod = yep.MethodCancel
	}
	if opts.MaxViolations == 0 {
		opts.MaxViolations = DefaultMaxViolations
	}
	orDefault(&opts.MaxMessageSize, DefaultMaxMessageSize)
	orDefault(&opts.MaxConcurrentHandlers, 64)
	orDefault(&opts.MaxQueuedRequests, 4096)
	orDefault(&opts.ViolationWindow, DefaultViolationWindow)
	orDefault(&opts.WarnBurst, DefaultWarnBurst)
	orDefault(&opts.WarnInterval, DefaultWarnInterval)
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
	c.wg.Add(1)
	go c.serve(true, nil)
	return c
}

// orDefault sets *v to def when it is zero or negative.
func orDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
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
	var closed error
	c.update(func() {
		if closed = c.closeErr; closed != nil {
			return
		}
		c.pending[id] = p
		if p.onNotify != nil {
			c.notifyN++
		}
	})
	if closed != nil {
		return &ClosedError{Cause: closed}
	}
	if co.OnID != nil {
		co.OnID(yep.IntID(id))
	}

	msg, err := json.Marshal(request{JSONRPC: "2.0", ID: yep.IntID(id), Method: method, Params: params})
	if err == nil {
		err = c.write(ctx, msg)
	}
	if err != nil {
		c.take(id)
		if ctx.Err() != nil {
			return &CancelledError{Method: method, Cause: ctx.Err()}
		}
		if cerr := c.Err(); cerr != nil {
			return &ClosedError{Cause: cerr}
		}
		return fmt.Errorf("%s: %w", method, err)
	}

	select {
	case r := <-p.ch:
		return decodeReply(method, r, result)
	case <-ctx.Done():
		return c.cancelled(method, id, p, result, ctx.Err())
	}
}

// cancelled ends a call whose context ended with cause: the response, if
// it won the race, else a cancel sent and a *CancelledError.
func (c *Conn) cancelled(method string, id int64, p *pending, result any, cause error) error {
	if c.take(id) == nil {
		// The response won the race; use it.
		return decodeReply(method, <-p.ch, result)
	}
	c.sendCancel(yep.IntID(id))
	return &CancelledError{Method: method, Cause: cause}
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
	if err := json.Unmarshal(r.result, result); err != nil {
		return fmt.Errorf("%s: decoding result: %w", method, err)
	}
	return nil
}

// take removes a pending call and returns it, or nil if it was not pending.
func (c *Conn) take(id int64) *pending {
	var p *pending
	c.update(func() {
		if p = c.pending[id]; p != nil {
			delete(c.pending, id)
			if p.onNotify != nil {
				c.notifyN--
			}
		}
	})
	return p
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
	msg, err := json.Marshal(request{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if err := c.write(ctx, msg); err != nil {
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
	var out bytes.Buffer
	framed := c.opts.Framer.NewWriter(&out)
	for i := range params {
		msg, err := json.Marshal(request{JSONRPC: "2.0", Method: method, Params: params[i]})
		if err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
		if err := framed.Write(msg); err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
	}
	select {
	case c.writeMu <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
	_, err := c.raw.Write(out.Bytes())
	<-c.writeMu
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
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
	if c.opts.Closer != nil {
		return c.opts.Closer.Close()
	}
	return nil
}

// Wait blocks until reading has ended and every handler has finished.
// Call it after Close, or after the peer went away, to be sure no goroutine
// of the connection is left.
func (c *Conn) Wait() {
	c.wg.Wait() // the reader is one of them
}

// handleTooLarge answers or fails the request or call an oversized message
// belonged to, judged from its first bytes.
func (c *Conn) handleTooLarge(tl *TooLargeError) {
	env, _ := parseEnvelope(tl.Prefix)
	defer c.violation(false, fmt.Sprintf("a message over the %d-byte limit: %s", tl.Limit, truncate(tl.Prefix, 80)),
		hclog.Error, "skipped an oversized message", "limit", tl.Limit, "prefix", truncate(tl.Prefix, 120))
	if env.ID == nil || yep.ValidateID(env.ID) != nil {
		return
	}
	if env.hasMethod() {
		c.replyError(yep.ID(env.ID), yep.Errorf(yep.CodeMessageTooLarge, "message exceeds %d bytes", tl.Limit))
		return
	}
	if n, ok := yep.ID(env.ID).Int64(); ok {
		c.deliver(n, reply{err: yep.Errorf(yep.CodeMessageTooLarge, "response exceeds the %d-byte message limit", tl.Limit)})
	}
}

// dispatch handles one message inline, except a request to run, which it
// returns for the caller to run.
func (c *Conn) dispatch(line []byte) (job, bool) {
	if !json.Valid(line) {
		c.violation(true, fmt.Sprintf("a line that is not JSON: %q", truncate(line, 80)),
			hclog.Warn, "skipping a line that is not JSON", "line", truncate(line, 200))
		return job{}, false
	}
	env, err := parseEnvelope(line)
	if err != nil {
		reason := err.Error()
		if errors.Is(err, errNotObject) && isArray(line) {
			reason = reasonBatch
		}
		if env.Method != nil && env.ID != nil && yep.ValidateID(env.ID) == nil {
			c.replyError(bytes.Clone(env.ID), yep.Errorf(yep.CodeInvalidRequest, "invalid request: %v", err))
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
		if env.ID != nil && yep.ValidateID(env.ID) == nil {
			c.replyError(bytes.Clone(env.ID), verr)
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
	if env.Params != nil && string(env.Params) != "null" {
		params = env.Params
	}
	if env.ID == nil || string(env.ID) == "null" {
		c.handleNotification(method, params)
		return job{}, false
	}
	return c.handleRequest(method, params, yep.ID(env.ID))
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
	n, ok := yep.ID(env.ID).Int64()
	if !ok {
		c.log.Debug("dropping a response to an id this side never used", "id", string(env.ID))
		return
	}
	var r reply
	if env.Error != nil {
		e := new(yep.Error)
		if err := json.Unmarshal(env.Error, e); err != nil {
			e = yep.Errorf(yep.CodeInternalError, "malformed error object: %v", err)
		}
		r.err = e
	} else {
		r.result = env.Result
	}
	if !c.deliver(n, r) {
		c.log.Debug("dropping a response to an unknown or cancelled call", "id", n)
	}
}

// deliver resolves the pending call id with r, reporting whether it was
// pending.
func (c *Conn) deliver(id int64, r reply) bool {
	p := c.take(id)
	if p != nil {
		p.ch <- r
	}
	return p != nil
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
	_ = members(params, func(key string, val json.RawMessage) bool {
		if key == "request_id" {
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
	dup := false
	c.update(func() {
		if _, dup = c.incoming[key]; !dup {
			c.incoming[key] = func() { cancel(errCancelledByPeer) }
		}
	})
	if dup {
		cancel(nil)
		c.queued.Add(-1)
		c.replyError(id, yep.Errorf(yep.CodeInvalidRequest, "request id %s is already in flight", key))
		return job{}, false
	}

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
	c.update(func() { delete(c.incoming, j.key) })
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

// A request is an outgoing request, or a notification when it has no ID.
type request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      yep.ID `json:"id,omitempty"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// A response is an outgoing response: Result, or Error when it is set.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      yep.ID          `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *yep.Error      `json:"error,omitempty"`
}

func (c *Conn) reply(id yep.ID, result any) {
	res, err := json.Marshal(result)
	if err != nil {
		c.replyError(id, yep.Errorf(yep.CodeInternalError, "encoding result: %v", err))
		return
	}
	c.send(response{JSONRPC: "2.0", ID: id, Result: res})
}

func (c *Conn) replyError(id yep.ID, e *yep.Error) {
	c.send(response{JSONRPC: "2.0", ID: id, Error: e})
}

func (c *Conn) send(r response) {
	msg, err := json.Marshal(r)
	if err == nil {
		err = c.write(context.Background(), msg)
	}
	if err != nil {
		c.log.Debug("could not send a response", "id", r.ID.String(), "error", err)
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
