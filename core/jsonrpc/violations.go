package jsonrpc

import (
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
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
// [Options.ViolationWindow]: lines that are not JSON, invalid messages or
// oversized messages. [Conn.Err] returns it, and pending calls fail with a
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
// a sliding window. It is used only by the goroutine holding the reading
// role, so it needs no lock.
type violationLog struct {
	max    int
	window time.Duration
	times  []time.Time // ring of the last max violation times
	next   int         // oldest entry once the ring is full

	burst      int
	every      time.Duration
	tokens     int
	refilled   time.Time
	suppressed int
}

func newViolationLog(o *Options) violationLog {
	return violationLog{max: o.MaxViolations, window: o.ViolationWindow, burst: o.WarnBurst, every: o.WarnInterval, tokens: o.WarnBurst}
}

// allow reports whether one more warning may be logged now (a token
// bucket: burst at once, then one per interval).
func (v *violationLog) allow(now time.Time) bool {
	if v.refilled.IsZero() {
		v.refilled = now
	}
	if n := int(now.Sub(v.refilled) / v.every); n > 0 {
		v.tokens = min(v.burst, v.tokens+n)
		v.refilled = v.refilled.Add(time.Duration(n) * v.every)
	}
	if v.tokens > 0 {
		v.tokens--
		return true
	}
	v.suppressed++
	return false
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

// violation logs one protocol violation under the rate limit and counts
// it; at the limit it ends the connection with a *ProtocolError. desc
// describes the violation for ProtocolError.Last; level, msg and kv are the
// log line.
func (c *Conn) violation(notJSON bool, desc string, level hclog.Level, msg string, kv ...any) {
	v := &c.violations
	now := time.Now()
	if v.allow(now) {
		c.flushSuppressed()
		c.log.Log(level, msg, kv...)
	}
	if !v.count(now) {
		return
	}
	perr := &ProtocolError{Violations: v.max, Window: v.window, Last: desc, NotJSON: notJSON}
	c.flushSuppressed()
	c.log.Error("ending the connection: the peer keeps breaking the protocol", "violations", v.max, "window", v.window, "last", desc)
	c.shutdown(perr)
	if c.opts.Closer != nil {
		_ = c.opts.Closer.Close()
	}
}

// flushSuppressed logs how many warnings the rate limit held back since
// the last one logged.
func (c *Conn) flushSuppressed() {
	if n := c.violations.suppressed; n > 0 {
		c.violations.suppressed = 0
		c.log.Warn(fmt.Sprintf("suppressed %d protocol warnings (rate limit)", n), "suppressed", n)
	}
}
