// Package ratelimit holds the token bucket that keeps a peer's flood from
// flooding the log: a burst of lines at once, then one per interval, and
// the rest counted for a "suppressed N" summary. The connection's
// protocol warnings and the host's copy of a server's log messages both
// go through it.
package ratelimit

import "time"

// A Bucket lets a burst of lines through at once, then one more per
// interval, and counts the lines it holds back. The zero value lets
// nothing through; use [New]. A Bucket is not safe for concurrent use.
type Bucket struct {
	burst      int
	every      time.Duration
	tokens     int
	refilled   time.Time
	suppressed int
}

// New returns a full bucket of burst tokens that refills one token per
// every.
func New(burst int, every time.Duration) Bucket {
	return Bucket{burst: burst, every: every, tokens: burst}
}

// Allow reports whether one more line may be logged at now; if not, the
// line is counted as suppressed.
func (b *Bucket) Allow(now time.Time) bool {
	if b.refilled.IsZero() {
		b.refilled = now
	}
	if b.every > 0 {
		if n := int(now.Sub(b.refilled) / b.every); n > 0 {
			b.tokens = min(b.burst, b.tokens+n)
			b.refilled = b.refilled.Add(time.Duration(n) * b.every)
		}
	}
	if b.tokens > 0 {
		b.tokens--
		return true
	}
	b.suppressed++
	return false
}

// TakeSuppressed returns how many lines Allow held back since the last
// call, and resets the count, for the caller to log as one summary.
func (b *Bucket) TakeSuppressed() int {
	n := b.suppressed
	b.suppressed = 0
	return n
}
