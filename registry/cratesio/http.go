package cratesio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"
)

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
// been seen for d: the guard against a stalled or slow-loris server.
type watchdog struct {
	d      time.Duration
	timer  *time.Timer
	mu     sync.Mutex
	fired  bool
	cancel context.CancelFunc
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

func (w *watchdog) stop() {
	w.timer.Stop()
	w.cancel()
}

func (w *watchdog) timedOut() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fired
}

// watchedBody resets the watchdog on every read that makes progress.
type watchedBody struct {
	r io.ReadCloser
	w *watchdog
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.w.kick()
	}
	return n, err
}

func (b *watchedBody) Close() error { return b.r.Close() }

// request runs one GET with the client's retry policy. handle is called with
// every response whose status is not retryable (5xx and 429 are); it may
// return a *retryable error (for example a truncated body) to ask for
// another attempt. what names the request in errors.
func (c *Client) request(ctx context.Context, what, url string, header http.Header, handle func(*http.Response) error) error {
	var last error
	for attempt := 0; ; attempt++ {
		err := c.attempt(ctx, url, header, handle)
		if err == nil {
			return nil
		}
		var r *retryable
		if !errors.As(err, &r) {
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
			return fmt.Errorf("%w: %s: %w", ErrHTTP, what, ctx.Err())
		case <-t.C:
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %s: %w", ErrHTTP, what, ctx.Err())
	}
	return fmt.Errorf("%w: %s from %s failed after %d attempts: %w; check the registry URL and your network, then retry", ErrHTTP, what, url, c.retries()+1, last)
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
		return &retryable{err: err}
	}
	defer resp.Body.Close()
	wd.kick()
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
	if err != nil && wd.timedOut() {
		return &retryable{err: fmt.Errorf("the server stalled for %s while sending the body", c.requestTimeout())}
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
