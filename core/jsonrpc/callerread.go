package jsonrpc

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// The calling side's reading role.
//
// Without this, every response is read by the connection's reading
// goroutine and handed to the waiting caller: two goroutines, and often
// two threads, wake for each answer. When the stream can be interrupted
// (its reader has SetReadDeadline and the framer can resume a read cut
// short; stdio pipes and net.Conns with NDJSON can), a caller waiting for
// the only outstanding call reads its answer itself:
//
//   - The reading goroutine that reads the response to the only pending
//     call, within callerRoleGrace of the last such response (calls are
//     coming back to back), hands the reading role to that caller with
//     the response, and stops reading. After a quiet spell it hands over
//     the response only, as a reading goroutine always did.
//   - A caller whose answer is in keeps the role parked for
//     callerRoleGrace: no goroutine reads meanwhile. A call made in that
//     time takes the parked role, sends its request and reads its own
//     answer, so back-to-back calls wake nobody but the caller. Past the
//     grace, a timer passes the role to a reading goroutine, as before.
//   - A caller reading for its answer reads and dispatches everything
//     else that arrives too (other calls' responses, notifications,
//     requests, which it runs on a new goroutine). When its context ends
//     it interrupts its own read with a read deadline, passes the role
//     on, and returns at once, as a waiting caller does; Close interrupts
//     it the same way.
//
// So a message that arrives while the role is parked waits at most
// callerRoleGrace to be read.

// callerRoleGrace is how long a caller keeps the reading role parked after
// its answer, for the next call to take.
var callerRoleGrace = 500 * time.Microsecond

// A readDeadliner is a stream whose blocked Read a deadline interrupts.
type readDeadliner interface {
	SetReadDeadline(t time.Time) error
}

// resumableReader is a MessageReader that a failed underlying Read leaves
// able to continue (see lineReader.resume).
type resumableReader interface {
	resumable()
}

// callerRole is the connection's state for the calling side's reading.
type callerRole struct {
	dl readDeadliner // nil: callers never read

	mu     sync.Mutex
	parked bool        // no goroutine holds the reading role
	timer  *time.Timer // passes a parked role on

	dlMu        sync.Mutex
	interrupted bool // a deadline was set to interrupt a read

	reads atomic.Int64 // calls whose caller read its own answer

	// Used by the goroutine holding the reading role only.
	callerReading bool // it is a caller, reading for its own answer
	// giveTo, when set, is the caller the reading role goes to with
	// giveReply, sent once the reading goroutine has stopped reading.
	giveTo    chan reply
	giveReply reply
	lastSole  time.Time // when it last answered the only pending call
}

// interruptible returns r as a readDeadliner when the connection may
// interrupt its reads: the stream takes deadlines and the message reader
// resumes after one.
func interruptible(r io.Reader, mr MessageReader) readDeadliner {
	dl, ok := r.(readDeadliner)
	if _, resumable := mr.(resumableReader); !ok || !resumable {
		return nil
	}
	if dl.SetReadDeadline(time.Time{}) != nil {
		return nil // e.g. a file without a poller
	}
	return dl
}

// interrupt makes the read in progress (or the next one) return with the
// deadline's error.
func (c *Conn) interrupt() {
	c.cr.dlMu.Lock()
	c.cr.interrupted = true
	_ = c.cr.dl.SetReadDeadline(time.Now())
	c.cr.dlMu.Unlock()
}

// ownInterrupt reports whether err is a read cut short by interrupt, and
// clears the deadline if so. Any other deadline is the stream owner's, and
// its error is final as any read error is.
func (c *Conn) ownInterrupt(err error) bool {
	if c.cr.dl == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
		return false
	}
	c.cr.dlMu.Lock()
	defer c.cr.dlMu.Unlock()
	if !c.cr.interrupted {
		return false
	}
	c.cr.interrupted = false
	_ = c.cr.dl.SetReadDeadline(time.Time{})
	return true
}

// giveRoleWith reports whether the reading goroutine, delivering r to the
// last pending call, hands that caller the reading role with it; if so it
// keeps r to send when it stops reading (see handOver). c.mu is held.
func (c *Conn) giveRoleWith(ch chan reply, r reply) bool {
	if c.cr.dl == nil || c.cr.callerReading || len(c.pending) > 0 || c.moreBuffered() || c.closeErr != nil {
		return false
	}
	// Only calls that come back to back gain from reading their own
	// answers; after a quiet spell the hand-off is as cheap, and parking
	// the role would only add its timer's wake-up.
	now := time.Now()
	hot := now.Sub(c.cr.lastSole) < callerRoleGrace
	c.cr.lastSole = now
	if !hot {
		return false
	}
	r.role = true
	c.cr.giveTo, c.cr.giveReply = ch, r
	return true
}

// handOver sends the reply that carries the reading role, if the last
// message read gave it away, and reports whether it did. The reading
// goroutine must not touch the reading state after it returns true.
func (c *Conn) handOver() bool {
	ch, r := c.cr.giveTo, c.cr.giveReply
	if ch == nil {
		return false
	}
	c.cr.giveTo, c.cr.giveReply = nil, reply{}
	ch <- r
	return true
}

// parkRole parks the reading role a caller holds, for the next call to
// take within callerRoleGrace.
func (c *Conn) parkRole() {
	c.cr.mu.Lock()
	c.cr.parked = true
	if c.cr.timer == nil {
		c.cr.timer = time.AfterFunc(callerRoleGrace, c.unpark)
	} else {
		c.cr.timer.Reset(callerRoleGrace)
	}
	c.cr.mu.Unlock()
	// A call registered before the role was parked may have missed it,
	// and the connection may have ended: either needs a reader now.
	c.mu.Lock()
	now := len(c.pending) > 0 || c.closeErr != nil
	c.mu.Unlock()
	if now && c.takeParked() {
		c.passRole()
	}
}

// takeParked takes the parked reading role, reporting whether there was
// one.
func (c *Conn) takeParked() bool {
	if c.cr.dl == nil {
		return false
	}
	c.cr.mu.Lock()
	defer c.cr.mu.Unlock()
	if !c.cr.parked {
		return false
	}
	c.cr.parked = false
	c.cr.timer.Stop()
	return true
}

// unpark passes a role still parked at the end of the grace to a reading
// goroutine.
func (c *Conn) unpark() {
	if c.takeParked() {
		c.passRole()
	}
}

// releaseRole gives up the role a reading caller holds: parked when
// nothing else is outstanding, else passed to a reading goroutine at once.
func (c *Conn) releaseRole() {
	c.cr.callerReading = false
	if c.moreBuffered() {
		c.passRole()
		return
	}
	c.parkRole() // which passes the role on at once if a call is pending
}

// readForCall is the rest of a call whose caller took the parked reading
// role: it reads and dispatches messages until the call's answer is in.
func (c *Conn) readForCall(ctx context.Context, method string, id int64, p *pending, result any) error {
	c.cr.callerReading = true
	c.cr.reads.Add(1)
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, c.interrupt)
		defer stop()
	}
	for {
		select {
		case r := <-p.ch:
			c.releaseRole()
			return decodeReply(method, r, result)
		default:
		}
		if err := ctx.Err(); err != nil {
			c.cr.callerReading = false
			c.passRole() // a reader for the answer to the cancel, and the rest
			return c.cancelled(method, id, p, result, err)
		}
		msg, ok := c.readMessage()
		if !ok {
			c.cr.callerReading = false
			c.readWG.Done()
			return decodeReply(method, <-p.ch, result) // shutdown failed the call
		}
		if msg == nil {
			continue
		}
		if j, run := c.dispatch(msg); run {
			c.wg.Add(1)
			go c.serve(false, &j)
		} else if c.Err() != nil {
			c.flushSuppressed()
			c.cr.callerReading = false
			c.readWG.Done()
			return decodeReply(method, <-p.ch, result)
		}
	}
}
