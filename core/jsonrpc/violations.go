package jsonrpc

import (
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/internal/ratelimit"
)

// Defaults for the protocol-violation limit and the warning rate limit.
const (
	DefaultMaxViolations   = 100
	DefaultViolationWindow = 10 * time.Second
	DefaultWarnBurst       = 10
	DefaultWarnInterval    = time.Second
)

// ErrProtocolViolations is matched, with errors.Is, by the *[ProtocolError]
// a connection ends with when its peer broke the protocol too often.
var ErrProtocolViolations = errors.New("too many protocol violations")

// A ProtocolError is why a connection ended when its peer sent
// [Options.MaxViolations] protocol violations within
// [Options.ViolationWindow]: lines that are not JSON, invalid or oversized
// messages, or messages a handler refused with [Conn.ReportViolation]. [Conn.Err] returns it, and pending calls fail with a
// *[ClosedError] whose Cause it is.
type ProtocolError struct {
	// Violations is the limit that was reached, and Window the time it was
	// reached within.
	Violations int
	Window     time.Duration
	// Last describes the last violation, e.g.
	// `a line that is not JSON: "starting server..."`.
	Last string
	// NotJSON reports whether the last violation was a line that is not
	// JSON: something other than the protocol wrote to the stream.
	NotJSON bool
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("stopped after %d protocol violations within %s; last: %s", e.Violations, e.Window, e.Last)
}

// Unwrap returns [ErrProtocolViolations].
func (e *ProtocolError) Unwrap() error { return ErrProtocolViolations }

// violationLog rate-limits protocol warnings and counts violations within
// a sliding window. Conn.vmu guards it: the goroutine holding the reading
// role uses it, and so may a handler reporting a violation of its own.
type violationLog struct {
	max    int
	window time.Duration
	times  []time.Time // ring of the last max violation times
	next   int         // oldest entry once the ring is full

	warn ratelimit.Bucket
}

func newViolationLog(o *Options) violationLog {
	return violationLog{max: o.MaxViolations, window: o.ViolationWindow, warn: ratelimit.New(o.WarnBurst, o.WarnInterval)}
}

// count records a violation at now and reports whether it reaches the
// limit: max violations within the window.
func (v *violationLog) count(now time.Time) bool {
	if v.max <= 0 {
		return false
	}
	if len(v.times) < v.max {
		v.times = append(v.times, now)
		return len(v.times) == v.max && now.Sub(v.times[0]) <= v.window
	}
	v.times[v.next] = now
	v.next = (v.next + 1) % v.max
	return now.Sub(v.times[v.next]) <= v.window
}

// ReportViolation records a protocol violation a handler found in a
// message the connection itself accepted, such as a notification for an
// opt-in the peer was not granted. Like a line that is not JSON, it is
// logged as a warning under the rate limit, passed to
// [Options.OnViolation] and counted toward [Options.MaxViolations]. desc
// says what was wrong and what to do, e.g. `dropped status/changed: the
// extension did not declare status`. It is safe for concurrent use.
func (c *Conn) ReportViolation(desc string) {
	c.violation(false, desc, hclog.Warn, desc)
}

// violation logs one protocol violation under the rate limit and counts
// it; at the limit it ends the connection with a *ProtocolError. desc
// describes the violation for ProtocolError.Last; level, msg and kv are the
// log line.
func (c *Conn) violation(notJSON bool, desc string, level hclog.Level, msg string, kv ...any) {
	if c.opts.OnViolation != nil {
		c.opts.OnViolation()
	}
	c.vmu.Lock()
	defer c.vmu.Unlock()
	v := &c.violations
	now := time.Now()
	if v.warn.Allow(now) {
		c.logSuppressed()
		c.log.Log(level, msg, kv...)
	}
	if !v.count(now) {
		return
	}
	perr := &ProtocolError{Violations: v.max, Window: v.window, Last: desc, NotJSON: notJSON}
	c.logSuppressed()
	c.log.Error("ending the connection: the peer keeps breaking the protocol", "violations", v.max, "window", v.window, "last", desc)
	c.shutdown(perr)
	if c.opts.Closer != nil {
		_ = c.opts.Closer.Close()
	}
}

// flushSuppressed logs how many warnings the rate limit held back since
// the last one logged.
func (c *Conn) flushSuppressed() {
	c.vmu.Lock()
	defer c.vmu.Unlock()
	c.logSuppressed()
}

// logSuppressed is flushSuppressed with c.vmu held.
func (c *Conn) logSuppressed() {
	if n := c.violations.warn.TakeSuppressed(); n > 0 {
		c.log.Warn(fmt.Sprintf("suppressed %d protocol warnings (rate limit)", n), "suppressed", n)
	}
}
