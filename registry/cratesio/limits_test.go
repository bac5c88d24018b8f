package cratesio

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// trickle answers .crate downloads with the real bytes, one per pause,
// until the client goes away; everything else comes from static.
func trickle(static http.Handler, crate []byte, pause time.Duration, hits *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/download") {
			static.ServeHTTP(w, r)
			return
		}
		hits.Add(1)
		w.Header().Set("Content-Length", strconv.Itoa(len(crate)))
		w.WriteHeader(http.StatusOK)
		for _, b := range crate {
			if _, err := w.Write([]byte{b}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(pause):
			}
		}
	})
}

// TestLowSpeedLimitOnLoopback: a real loopback server trickling the
// .crate below the limit fails every attempt with an error naming the
// URL, the observed rate and the setting, and leaves nothing behind.
func TestLowSpeedLimitOnLoopback(t *testing.T) {
	indexDir := t.TempDir()
	crate := publishCrate(t, indexDir, "yolop-extension-echo", "0.1.0", echoFiles("0.1.0"))
	var hits atomic.Int64
	reg, _ := serve(t, trickle(ServeIndex(indexDir), crate, 10*time.Millisecond, &hits))
	opts := fastOptions(reg)
	opts.Retries = 1
	opts.LimitNames = LimitNames{LowSpeedLimit: "[registry] low_speed_limit", LowSpeedTime: "[registry] low_speed_time", Where: "/cfg/settings.toml"}
	c := NewClient(opts)
	ctx := context.Background()
	rel, err := c.Resolve(ctx, "yolop-extension-echo", "", "")
	if err != nil {
		t.Fatal(err)
	}
	// Tight limits for the download only: a loaded machine must not make
	// the (fast) index reads look slow.
	c.opts.LowSpeedLimit = 1 << 20 // 1 MiB/s: a byte every 10ms is far below
	c.opts.LowSpeedTime = 200 * time.Millisecond
	work := t.TempDir()
	before := snapshot(t, work)
	err = c.Fetch(ctx, rel, filepath.Join(work, "pkg"), nil)
	if !errors.Is(err, ErrTooSlow) || !errors.Is(err, ErrHTTP) {
		t.Fatalf("Fetch = %v, want ErrTooSlow and ErrHTTP", err)
	}
	t.Log(err)
	for _, w := range []string{
		"failed after 2 attempts: download of " + rel.DownloadURL + " averaged ",
		" B/s over ", "below [registry] low_speed_limit = 1048576 B/s",
		"raise [registry] low_speed_time (now 200ms) in /cfg/settings.toml",
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
	if strings.Contains(err.Error(), "check the registry URL") {
		t.Errorf("the generic retry advice repeats the low-speed advice:\n%v", err)
	}
	if hits.Load() != 2 {
		t.Errorf("download attempted %d times, want 2", hits.Load())
	}
	assertUnchanged(t, work, before)
}

// TestDownloadTimeoutOnLoopback: with the low-speed check off, a trickle
// is bounded by DownloadTimeout across all attempts.
func TestDownloadTimeoutOnLoopback(t *testing.T) {
	indexDir := t.TempDir()
	crate := publishCrate(t, indexDir, "yolop-extension-echo", "0.1.0", echoFiles("0.1.0"))
	var hits atomic.Int64
	reg, _ := serve(t, trickle(ServeIndex(indexDir), crate, 10*time.Millisecond, &hits))
	opts := fastOptions(reg)
	opts.LowSpeedLimit = -1
	c := NewClient(opts)
	ctx := context.Background()
	rel, err := c.Resolve(ctx, "yolop-extension-echo", "", "")
	if err != nil {
		t.Fatal(err)
	}
	c.opts.DownloadTimeout = 300 * time.Millisecond // only the download is bounded this tightly
	work := t.TempDir()
	before := snapshot(t, work)
	err = c.Fetch(ctx, rel, filepath.Join(work, "pkg"), nil)
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, ErrHTTP) {
		t.Fatalf("Fetch = %v, want ErrTimeout and ErrHTTP", err)
	}
	t.Log(err)
	want := "download of " + rel.DownloadURL + " did not finish within Options.DownloadTimeout = 300ms (1 attempt); raise it or check the network"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error lacks %q:\n%v", want, err)
	}
	assertUnchanged(t, work, before)
}

// TestSpeedWindow drives the rate-window rule with made-up times.
func TestSpeedWindow(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	w := &speedWindow{limit: 10, window: 30 * time.Second, start: t0}

	// Before the window is complete nothing is decided, however slow.
	if _, _, slow := w.tick(at(29 * time.Second)); slow {
		t.Fatal("decided before the window ended")
	}
	if got := w.untilEnd(at(29 * time.Second)); got != time.Second {
		t.Errorf("untilEnd = %s, want 1s", got)
	}
	// Exactly the limit (300 bytes in 30s) passes and opens a new window.
	w.add(299)
	w.add(1)
	if _, _, slow := w.tick(at(30 * time.Second)); slow {
		t.Fatal("300 bytes in 30s at a 10 B/s limit was refused")
	}
	if w.bytes != 0 || !w.start.Equal(at(30*time.Second)) {
		t.Fatalf("the next window did not start: %+v", w)
	}
	// A burst in one window does not carry over: the next must pass on its own.
	w.add(299)
	bytes, elapsed, slow := w.tick(at(60 * time.Second))
	if !slow || bytes != 299 || elapsed != 30*time.Second {
		t.Fatalf("299 bytes in 30s = %d, %s, %v; want refused", bytes, elapsed, slow)
	}
	// A late check averages over the real elapsed time.
	w = &speedWindow{limit: 10, window: 30 * time.Second, start: t0}
	w.add(400)
	if _, _, slow := w.tick(at(45 * time.Second)); !slow {
		t.Error("400 bytes in 45s (8.9 B/s) passed a 10 B/s limit")
	}
	if got := formatRate(15, 30*time.Second); got != "0.5 B/s" {
		t.Errorf("formatRate = %s", got)
	}
	for d, want := range map[time.Duration]string{30 * time.Second: "30s", 5 * time.Minute: "5m", 300 * time.Millisecond: "300ms", 90 * time.Minute: "1h30m", time.Hour: "1h", 30*time.Second + 4*time.Millisecond: "30s"} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%s) = %s, want %s", d, got, want)
		}
	}
}

// pipeListener is an in-memory net.Listener, so an HTTP server and client
// can run inside a synctest bubble on fake time.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	srv, cli := net.Pipe()
	select {
	case l.conns <- srv:
		return cli, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "registry.test:80" }

// TestTrickleWithCargoDefaultsOnFakeTime replays the black-box report —
// a server sending one byte every 2s — with the real defaults (10 B/s
// over 30s, 4 attempts) on synctest's fake clock: each attempt ends after
// one 30s window at 0.5 B/s, and the whole download is bounded. A second
// server just above the limit runs into the download timeout instead.
func TestTrickleWithCargoDefaultsOnFakeTime(t *testing.T) {
	indexDir := t.TempDir()
	files := echoFiles("0.1.0")
	noise := make([]byte, 2048) // incompressible, so the crate takes minutes at 11 B/s
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range noise {
		noise[i] = byte(rnd.Uint32())
	}
	files["noise.bin"] = string(noise)
	crate := publishCrate(t, indexDir, "yolop-extension-echo", "0.1.0", files)
	if full := time.Duration(len(crate)) * 90 * time.Millisecond; full < time.Minute {
		t.Fatalf("the crate is %d bytes: at 11 B/s it would arrive in %s, before the timeout", len(crate), full)
	}
	static := ServeIndex(indexDir)
	for _, tc := range []struct {
		name        string
		pause       time.Duration
		timeout     time.Duration
		want        error
		wants       []string
		maxAttempts int64
	}{
		{name: "one byte every 2s", pause: 2 * time.Second, want: ErrTooSlow, maxAttempts: 4,
			wants: []string{"failed after 4 attempts", "averaged 0.5 B/s over 30s, below Options.LowSpeedLimit = 10 B/s"}},
		{name: "just above the limit", pause: 90 * time.Millisecond, timeout: 45 * time.Second, want: ErrTimeout, maxAttempts: 1,
			wants: []string{"did not finish within Options.DownloadTimeout = 45s (1 attempt)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var hits atomic.Int64
				ln := newPipeListener()
				srv := &http.Server{Handler: trickle(static, crate, tc.pause, &hits)}
				go srv.Serve(ln)
				tr := &http.Transport{DialContext: ln.dial}
				defer func() {
					tr.CloseIdleConnections()
					srv.Close()
				}()
				opts := Options{Registry: "sparse+http://registry.test/", HTTPClient: &http.Client{Transport: tr}, DownloadTimeout: tc.timeout}
				c := NewClient(opts)
				ctx := context.Background()
				rel, err := c.Resolve(ctx, "yolop-extension-echo", "", "")
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				err = c.Fetch(ctx, rel, filepath.Join(t.TempDir(), "pkg"), nil)
				if !errors.Is(err, tc.want) {
					t.Fatalf("Fetch = %v, want %v", err, tc.want)
				}
				t.Log(err)
				for _, w := range tc.wants {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error lacks %q:\n%v", w, err)
					}
				}
				if hits.Load() != tc.maxAttempts {
					t.Errorf("%d attempts, want %d", hits.Load(), tc.maxAttempts)
				}
				// Fake time: exact, not wall-clock. Four 30s windows plus at
				// most 3 backoffs of ≤10s each, and never past the timeout.
				if took := time.Since(start); took > DefaultDownloadTimeout || (tc.want == ErrTooSlow && took > 4*30*time.Second+30*time.Second) {
					t.Errorf("the download took %s of fake time", took)
				}
			})
		})
	}
}
