package jsonrpc

import (
	"errors"
	"time"
)

// The connection's state and who reads.
//
// Everything the connection's goroutines share — pending calls, incoming
// requests, the close cause, and the reading role's bookkeeping — lives in
// the Conn fields guarded by c.mu, and every change to them is made by
// update, under that one lock. Reads may take the lock directly.
//
// Exactly one goroutine holds the reading role at a time: it reads a
// message, then dispatches it. Responses, notifications, cancels and
// rejected lines are handled inline by the reader. A request to run makes
// the reader a leader/follower worker:
//
//	reading  --request, more input buffered-->  passes the role on, runs it
//	reading  --request, nothing buffered----->  holding
//	holding  --request done------------------>  reading (the same goroutine)
//	holding  --roleHandoffDelay elapsed------>  the timer passes the role on;
//	                                            the holder, done, is a worker
//	worker   --job done----------------------->  waiting (c.idle+1), or gone
//	                                            when MaxConcurrentHandlers wait
//	waiting  --passRole---------------------->  reading
//
// Passing the role on wakes a waiting worker, or starts a goroutine when
// none waits. So a short request on an idle connection is run by the
// goroutine that read it, waking no other goroutine, while a long one
// delays reading (and with it a cancel for it) by at most
// roleHandoffDelay. Reading ends, on whichever goroutine holds the role,
// when the stream ends or, after Close, at the next message.

// roleHandoffDelay is how long the reading goroutine runs a request while
// still holding the reading role before the role passes to another
// goroutine.
const roleHandoffDelay = 500 * time.Microsecond

// update applies f to the connection's state under c.mu. It is the only
// way that state changes.
func (c *Conn) update(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f()
}

// shutdown marks the connection done with cause and fails pending calls.
func (c *Conn) shutdown(cause error) {
	var pend map[int64]*pending
	c.update(func() {
		if c.closeErr != nil {
			return
		}
		// Handlers' contexts end before the connection reads as closed,
		// so a handler whose write fails because of the close also finds
		// its context done, and answers cancelled rather than failed.
		c.stop()
		c.closeErr = cause
		pend = c.pending
		c.pending = map[int64]*pending{}
		c.notifyN = 0
	})
	if pend == nil {
		return
	}
	close(c.done)
	for _, p := range pend {
		p.ch <- reply{err: &ClosedError{Cause: cause}}
	}
}

// serve is the body of every connection goroutine: the reader while it
// holds the reading role (reading is true), then a worker that runs j, if
// any, and waits for the role again.
func (c *Conn) serve(reading bool, j *job) {
	defer c.wg.Done()
	for {
		if reading {
			next, ok := c.readUntilJob()
			if !ok {
				return
			}
			if c.moreBuffered() {
				// Another message is already here: let another goroutine
				// read it while this one runs the request.
				c.passRole()
				reading, j = false, &next
			} else {
				h := c.holdRole()
				c.run(next)
				if c.endHold(h) {
					continue // still the reader
				}
				reading = false
			}
		}
		if j != nil {
			c.run(*j)
			j = nil
		}
		if !c.waitForRole() {
			return
		}
		reading = true
	}
}

// waitForRole waits, as an idle worker, until it is given the reading
// role, and reports whether it was. It returns false at once when
// MaxConcurrentHandlers workers already wait, and when the connection
// ends.
func (c *Conn) waitForRole() bool {
	wait := false
	c.update(func() {
		if wait = c.idle < c.opts.MaxConcurrentHandlers; wait {
			c.idle++
		}
	})
	if !wait {
		return false
	}
	defer c.update(func() { c.idle-- })
	select {
	case <-c.role:
		return true
	case <-c.baseCtx.Done():
		return false
	}
}

// passRole hands the reading role to a waiting worker, or a new goroutine.
func (c *Conn) passRole() {
	select {
	case c.role <- struct{}{}: // a waiting worker takes over reading
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

// A roleHold is the reader running a request while it keeps the reading
// role; c.hold points to it until the request ends or the timer passes
// the role on, whichever comes first.
type roleHold struct{ timer *time.Timer }

// holdRole starts a hold, whose timer passes the role on after
// roleHandoffDelay.
func (c *Conn) holdRole() *roleHold {
	h := &roleHold{}
	c.update(func() { c.hold = h })
	h.timer = time.AfterFunc(roleHandoffDelay, func() {
		if c.clearHold(h) {
			c.passRole()
		}
	})
	return h
}

// endHold ends the hold h when its request is done and reports whether
// the caller still holds the reading role.
func (c *Conn) endHold(h *roleHold) bool {
	h.timer.Stop()
	return c.clearHold(h)
}

// clearHold ends the hold h, reporting whether it was still current: the
// one of the request's end and the timer that calls it first decides.
func (c *Conn) clearHold(h *roleHold) bool {
	current := false
	c.update(func() {
		if current = c.hold == h; current {
			c.hold = nil
		}
	})
	return current
}

// readUntilJob reads and dispatches messages until one is a request to
// run, which it returns, or until reading ends (false).
func (c *Conn) readUntilJob() (job, bool) {
	for {
		msg, ok := c.readMessage()
		if !ok {
			return job{}, false
		}
		if msg == nil {
			continue
		}
		if j, run := c.dispatch(msg); run {
			return j, true
		}
		if c.Err() != nil {
			c.flushSuppressed()
			return job{}, false
		}
	}
}

// readMessage reads the next message. It returns nil (and true) for a
// message it skipped (an oversized one, which it answers or fails), and
// false once reading has ended.
func (c *Conn) readMessage() ([]byte, bool) {
	msg, err := c.reader.Read()
	if err == nil {
		return msg, true
	}
	var tl *TooLargeError
	if errors.As(err, &tl) {
		c.handleTooLarge(tl)
		if c.Err() != nil {
			c.flushSuppressed()
			return nil, false
		}
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
