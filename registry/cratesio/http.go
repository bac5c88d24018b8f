package cratesio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// An unreachableError is a request that reached no HTTP server: the name
// did not resolve, or the connection was refused, reset or timed out.
type unreachableError struct {
	host  string
	cause error
}

func (e *unreachableError) Error() string { return fmt.Sprintf("cannot reach %s: %v", e.host, e.cause) }
func (e *unreachableError) Unwrap() error { return e.cause }
func (e *unreachableError) Is(target error) bool {
	return target == ErrUnreachable || target == ErrHTTP
}

// unreachable returns err as an *unreachableError when it is a failure
// to resolve or connect to host, and nil otherwise.
func unreachable(host string, err error) error {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return &unreachableError{host: host, cause: dns}
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return &unreachableError{host: host, cause: op.Err}
	}
	return nil
}

// errRedirectDowngrade is returned when a redirect goes from https to http.
var errRedirectDowngrade = errors.New("refusing a redirect from https to plain http")

// checkRedirect follows at most 10 redirects, refuses https→http and never
// forwards Authorization to a host (host:port) other than the original one.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return fmt.Errorf("stopped after 10 redirects")
	}
	prev := via[len(via)-1]
	if prev.URL.Scheme == "https" && req.URL.Scheme != "https" {
		return errRedirectDowngrade
	}
	if req.URL.Host != via[0].URL.Host {
		req.Header.Del("Authorization")
	}
	return nil
}

// retryable marks an error worth another attempt; after is a server-given
// delay (Retry-After), zero when none.
type retryable struct {
	err   error
	after time.Duration
}

func (r *retryable) Error() string { return r.err.Error() }
func (r *retryable) Unwrap() error { return r.err }

// watchdog cancels a request when no progress (headers or body bytes) has
// been seen for d: the guard against a stalled or slow-loris server. With
// a low-speed check armed it also cancels a body that keeps arriving, but
// too slowly.
type watchdog struct {
	d      time.Duration
	timer  *time.Timer
	mu     sync.Mutex
	fired  bool
	cancel context.CancelFunc

	speed      *speedWindow // nil until armed (or with the check off)
	speedTimer *time.Timer
	slow       *slowReading // set when the low-speed check aborted
}

// slowReading is what the low-speed check saw in the window that failed.
type slowReading struct {
	bytes   int64
	elapsed time.Duration
}

func newWatchdog(parent context.Context, d time.Duration) (context.Context, *watchdog) {
	ctx, cancel := context.WithCancel(parent)
	w := &watchdog{d: d, cancel: cancel}
	w.timer = time.AfterFunc(d, func() {
		w.mu.Lock()
		w.fired = true
		w.mu.Unlock()
		cancel()
	})
	return ctx, w
}

func (w *watchdog) kick() { w.timer.Reset(w.d) }

// armLowSpeed starts the low-speed check: from now on every window must
// bring limit×window bytes.
func (w *watchdog) armLowSpeed(limit int64, window time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.speed = &speedWindow{limit: limit, window: window, start: time.Now()}
	w.speedTimer = time.AfterFunc(window, w.checkSpeed)
}

// checkSpeed runs when a window should be complete.
func (w *watchdog) checkSpeed() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.speed == nil || w.slow != nil {
		return
	}
	now := time.Now()
	bytes, elapsed, slow := w.speed.tick(now)
	if slow {
		w.slow = &slowReading{bytes: bytes, elapsed: elapsed}
		w.cancel()
		return
	}
	w.speedTimer.Reset(w.speed.untilEnd(now))
}

// progress records n body bytes.
func (w *watchdog) progress(n int) {
	w.kick()
	w.mu.Lock()
	if w.speed != nil {
		w.speed.add(n)
	}
	w.mu.Unlock()
}

func (w *watchdog) stop() {
	w.timer.Stop()
	w.mu.Lock()
	if w.speedTimer != nil {
		w.speedTimer.Stop()
	}
	w.speed = nil
	w.mu.Unlock()
	w.cancel()
}

func (w *watchdog) timedOut() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fired
}

func (w *watchdog) tooSlow() *slowReading {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.slow
}

// speedWindow is the low-speed rule, kept free of timers and clocks so it
// can be tested with made-up times: the transfer must bring at least
// limit bytes per second, averaged over consecutive windows of length
// window, the first starting at start.
type speedWindow struct {
	limit  int64 // bytes per second
	window time.Duration
	start  time.Time // of the current window
	bytes  int64     // received in the current window
}

func (s *speedWindow) add(n int) { s.bytes += int64(n) }

// tick closes the current window if it is complete at now. When the
// window averaged less than the limit it reports its bytes and length and
// slow; otherwise a new window starts at now.
func (s *speedWindow) tick(now time.Time) (bytes int64, elapsed time.Duration, slow bool) {
	elapsed = now.Sub(s.start)
	if elapsed < s.window {
		return 0, 0, false
	}
	if float64(s.bytes) < float64(s.limit)*elapsed.Seconds() {
		return s.bytes, elapsed, true
	}
	s.start, s.bytes = now, 0
	return 0, 0, false
}

// untilEnd is the time from now to the end of the current window.
func (s *speedWindow) untilEnd(now time.Time) time.Duration {
	return max(s.window-now.Sub(s.start), 0)
}

// watchedBody reports every read that makes progress to the watchdog.
type watchedBody struct {
	r io.ReadCloser
	w *watchdog
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.w.progress(n)
	}
	return n, err
}

func (b *watchedBody) Close() error { return b.r.Close() }

// limitError is a transfer limit's failure: it reads as its message and
// matches its sentinel (ErrTooSlow, ErrTimeout) with errors.Is.
type limitError struct {
	sentinel error
	msg      string
}

func (e *limitError) Error() string { return e.msg }
func (e *limitError) Unwrap() error { return e.sentinel }

func (c *Client) slowError(url string, r *slowReading) error {
	limit, window, _ := c.lowSpeed()
	n := c.opts.LimitNames.orDefaults()
	return &limitError{sentinel: ErrTooSlow, msg: fmt.Sprintf(
		"download of %s averaged %s over %s, below %s = %d B/s; lower it (%s turns the check off) or raise %s (now %s)%s, or check the network",
		url, formatRate(r.bytes, r.elapsed), formatDuration(r.elapsed), n.LowSpeedLimit, limit, n.Off, n.LowSpeedTime, formatDuration(window), n.Where)}
}

// errDeadline is the cancel cause of a request that ran past the
// download timeout.
var errDeadline = errors.New("download timeout")

// deadlineError reports a request stopped by its download timeout, or nil
// when ctx ended for another reason (or not at all). last is the failure
// of the previous attempt, if any.
func (c *Client) deadlineError(ctx context.Context, what, url string, attempts int, last error) error {
	if !errors.Is(context.Cause(ctx), errDeadline) {
		return nil
	}
	n := c.opts.LimitNames.orDefaults()
	msg := fmt.Sprintf("download of %s did not finish within %s = %s (%d attempt%s",
		url, n.DownloadTimeout, formatDuration(c.downloadTimeout()), attempts, plural(attempts))
	if last != nil {
		msg += fmt.Sprintf("; the one before the timeout failed: %v", last)
	}
	msg += fmt.Sprintf("); raise it%s or check the network", n.Where)
	return fmt.Errorf("%w: %s: %w", ErrHTTP, what, &limitError{sentinel: ErrTimeout, msg: msg})
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// formatRate prints bytes over d as a rate: "0.5 B/s", "42 B/s", "3.1 KiB/s".
func formatRate(bytes int64, d time.Duration) string {
	if d <= 0 {
		return "? B/s"
	}
	r := float64(bytes) / d.Seconds()
	switch {
	case r < 10:
		return fmt.Sprintf("%.1f B/s", r)
	case r < 10<<10:
		return fmt.Sprintf("%.0f B/s", r)
	case r < 10<<20:
		return fmt.Sprintf("%.1f KiB/s", r/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB/s", r/(1<<20))
}

// formatDuration prints d the way settings spell it: "30s", "5m",
// "1h30m", "300ms", rounded to what a person reads.
func formatDuration(d time.Duration) string {
	switch {
	case d >= time.Minute:
		d = d.Round(time.Second)
	case d >= 10*time.Second:
		d = d.Round(100 * time.Millisecond)
	case d >= time.Second:
		d = d.Round(10 * time.Millisecond)
	default:
		d = d.Round(time.Millisecond)
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// request runs one GET with the client's retry policy. handle is called with
// every response whose status is not retryable (5xx and 429 are); it may
// return a *retryable error (for example a truncated body) to ask for
// another attempt. what names the request in errors.
func (c *Client) request(ctx context.Context, what, url string, header http.Header, handle func(*http.Response) error) error {
	if d := c.downloadTimeout(); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, d, errDeadline)
		defer cancel()
	}
	var last error
	attempts := 0
	for attempt := 0; ; attempt++ {
		attempts++
		err := c.attempt(ctx, url, header, handle)
		if err == nil {
			return nil
		}
		if derr := c.deadlineError(ctx, what, url, attempts, last); derr != nil {
			return derr
		}
		var r *retryable
		if !errors.As(err, &r) {
			if errors.Is(err, ErrUnreachable) {
				return fmt.Errorf("%w (fetching %s from %s); check your network and the registry URL, then retry", err, what, url)
			}
			return err
		}
		last = r.err
		if attempt >= c.retries() || ctx.Err() != nil {
			break
		}
		d := c.backoff(attempt, r.after)
		c.log.Warn("registry request failed, retrying", "what", what, "url", url, "error", r.err, "attempt", attempt+1, "delay", d)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			if derr := c.deadlineError(ctx, what, url, attempts, last); derr != nil {
				return derr
			}
			return fmt.Errorf("%w: %s: %w", ErrHTTP, what, ctx.Err())
		case <-t.C:
		}
	}
	if derr := c.deadlineError(ctx, what, url, attempts, last); derr != nil {
		return derr
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %s: %w", ErrHTTP, what, ctx.Err())
	}
	if errors.Is(last, ErrUnreachable) {
		return fmt.Errorf("%w (fetching %s from %s, %d attempt%s); check your network and the registry URL, then retry", last, what, url, attempts, plural(attempts))
	}
	advice := "; check the registry URL and your network, then retry"
	if errors.Is(last, ErrTooSlow) {
		advice = "" // the low-speed error says what to change
	}
	return fmt.Errorf("%w: %s from %s failed after %d attempt%s: %w%s", ErrHTTP, what, url, attempts, plural(attempts), last, advice)
}

func (c *Client) attempt(ctx context.Context, url string, header http.Header, handle func(*http.Response) error) error {
	ctx, wd := newWatchdog(ctx, c.requestTimeout())
	defer wd.stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("%w: bad URL %q: %v", ErrHTTP, url, err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if c.opts.UserAgent != "" {
		req.Header.Set("User-Agent", c.opts.UserAgent)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if errors.Is(err, errRedirectDowngrade) {
			return fmt.Errorf("%w: %s: %w", ErrHTTP, url, errRedirectDowngrade)
		}
		if wd.timedOut() {
			return &retryable{err: fmt.Errorf("no response within %s", c.requestTimeout())}
		}
		if ctx.Err() != nil {
			return err
		}
		if ue := unreachable(req.URL.Host, err); ue != nil {
			var dns *net.DNSError
			if errors.As(err, &dns) && dns.IsNotFound {
				return ue // the name server's answer is final
			}
			return &retryable{err: ue}
		}
		return &retryable{err: err}
	}
	defer resp.Body.Close()
	wd.kick()
	if limit, window, ok := c.lowSpeed(); ok {
		wd.armLowSpeed(limit, window)
	}
	resp.Body = &watchedBody{r: resp.Body, w: wd}
	if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
		var after time.Duration
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
			after = parseRetryAfter(resp.Header.Get("Retry-After"))
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return &retryable{err: fmt.Errorf("HTTP %s", resp.Status), after: after}
	}
	err = handle(resp)
	if err != nil {
		if r := wd.tooSlow(); r != nil {
			return &retryable{err: c.slowError(url, r)}
		}
		if wd.timedOut() {
			return &retryable{err: fmt.Errorf("the server stalled for %s while sending the body", c.requestTimeout())}
		}
	}
	return err
}

// bodyReadError makes a failed body read retryable: a truncated body
// (Content-Length mismatch), a reset connection or a stall.
func bodyReadError(err error) error {
	if errors.Is(err, ErrTooLarge) {
		return err
	}
	return &retryable{err: fmt.Errorf("reading the response body: %w", err)}
}

func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return time.Until(t)
	}
	return 0
}

// backoff is the delay before retry number attempt+1: exponential from the
// base delay plus random jitter, or the server's Retry-After, never more
// than the maximum delay.
func (c *Client) backoff(attempt int, after time.Duration) time.Duration {
	base, jitter, maxd := c.opts.RetryBaseDelay, c.opts.RetryJitter, c.opts.MaxRetryDelay
	if base == 0 {
		base = 500 * time.Millisecond
	}
	if jitter == 0 {
		jitter = time.Second
	}
	if maxd == 0 {
		maxd = 10 * time.Second
	}
	d := base << min(attempt, 20)
	if jitter > 0 {
		d += rand.N(jitter)
	}
	if after > d {
		d = after
	}
	return min(max(d, 0), maxd)
}
