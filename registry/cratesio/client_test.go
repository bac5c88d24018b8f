package cratesio

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
)

// localRegistry publishes echo 0.1.0, 0.1.1 and 0.2.0-rc.1 into a fresh
// index dir and serves it on 127.0.0.1.
func localRegistry(t *testing.T) (indexDir, registry string) {
	t.Helper()
	indexDir = t.TempDir()
	for _, v := range []string{"0.1.0", "0.1.1", "0.2.0-rc.1"} {
		publishCrate(t, indexDir, "yolop-extension-echo", v, echoFiles(v))
	}
	registry, _ = serve(t, ServeIndex(indexDir))
	return indexDir, registry
}

func TestResolveFetchEndToEnd(t *testing.T) {
	_, reg := localRegistry(t)
	opts := fastOptions(reg)
	opts.CacheDir = t.TempDir()
	c := NewClient(opts)
	ctx := context.Background()
	rel, err := c.Resolve(ctx, "yolop-extension-echo", "^0.1", "")
	if err != nil {
		t.Fatal(err)
	}
	if rel.Version != "0.1.1" || !isLowerHex64(rel.Checksum) || !strings.HasSuffix(rel.DownloadURL, "/crates/yolop-extension-echo/0.1.1/download") {
		t.Fatalf("Resolve = %+v", rel)
	}
	dest := filepath.Join(t.TempDir(), "pkg")
	var last, total int64
	err = c.Fetch(ctx, rel, dest, func(done, tot int64) { last, total = done, tot })
	if err != nil {
		t.Fatal(err)
	}
	if last == 0 || last != total {
		t.Errorf("progress ended at %d/%d", last, total)
	}
	b, err := os.ReadFile(filepath.Join(dest, "plugin.json"))
	if err != nil || !strings.Contains(string(b), `"version":"0.1.1"`) {
		t.Errorf("plugin.json = %q, %v", b, err)
	}
	// Pre-releases only when asked for.
	rel, err = c.Resolve(ctx, "yolop-extension-echo", "^0.2.0-rc.1", "")
	if err != nil || rel.Version != "0.2.0-rc.1" {
		t.Errorf("Resolve(^0.2.0-rc.1) = %v, %v", rel.Version, err)
	}
	rel, err = c.Resolve(ctx, "yolop-extension-echo", "", "")
	if err != nil || rel.Version != "0.1.1" {
		t.Errorf("Resolve(\"\") = %v, %v; want 0.1.1 (no pre-release)", rel.Version, err)
	}
}

// countingHandler counts requests and 200 responses per path.
type countingHandler struct {
	h        http.Handler
	requests atomic.Int64
	bodies   atomic.Int64
}

func (c *countingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.requests.Add(1)
	rec := &statusRecorder{ResponseWriter: w}
	c.h.ServeHTTP(rec, r)
	if rec.status == http.StatusOK {
		c.bodies.Add(1)
	}
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func TestIndexCache304(t *testing.T) {
	indexDir := t.TempDir()
	publishCrate(t, indexDir, "yolop-extension-echo", "0.1.0", echoFiles("0.1.0"))
	ch := &countingHandler{h: ServeIndex(indexDir)}
	reg, _ := serve(t, ch)
	cache := t.TempDir()
	ctx := context.Background()
	resolve := func() string {
		opts := fastOptions(reg)
		opts.CacheDir = cache
		rel, err := NewClient(opts).Resolve(ctx, "yolop-extension-echo", "", "")
		if err != nil {
			t.Fatal(err)
		}
		return rel.Version
	}
	if v := resolve(); v != "0.1.0" {
		t.Fatalf("cold resolve = %s", v)
	}
	if ch.bodies.Load() != 2 { // config.json + index file
		t.Fatalf("cold resolve downloaded %d bodies, want 2", ch.bodies.Load())
	}
	ch.bodies.Store(0)
	ch.requests.Store(0)
	if v := resolve(); v != "0.1.0" {
		t.Fatalf("warm resolve = %s", v)
	}
	if ch.bodies.Load() != 0 || ch.requests.Load() != 2 {
		t.Errorf("warm resolve: %d requests, %d bodies; want 2 requests answered 304", ch.requests.Load(), ch.bodies.Load())
	}
	// A new version changes the index file: the next resolve sees it.
	publishCrate(t, indexDir, "yolop-extension-echo", "0.1.5", echoFiles("0.1.5"))
	if v := resolve(); v != "0.1.5" {
		t.Errorf("after publish resolve = %s, want 0.1.5", v)
	}
}

// TestCacheValidators checks ETag wins over Last-Modified, is echoed
// verbatim (W/ and quotes), and a 304 without a cached copy refetches.
func TestCacheValidators(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	var mode atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+" inm="+r.Header.Get("If-None-Match")+" ims="+r.Header.Get("If-Modified-Since"))
		mu.Unlock()
		if mode.Load() == 1 && r.Header.Get("If-None-Match") == "" && r.URL.Path == "/config.json" {
			w.WriteHeader(http.StatusNotModified) // broken server: 304 to an unconditional request
			mode.Store(2)
			return
		}
		if r.Header.Get("If-None-Match") == `W/"abc"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `W/"abc"`)
		w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
		fmt.Fprint(w, `{"dl":"crates"}`)
	})
	reg, _ := serve(t, h)
	opts := fastOptions(reg)
	opts.CacheDir = t.TempDir()
	ctx := context.Background()
	for range 2 {
		if _, err := NewClient(opts).Config(ctx); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"/config.json inm= ims=", `/config.json inm=W/"abc" ims=`}
	mu.Lock()
	got := seen
	seen = nil
	mu.Unlock()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	// No cache + a server answering 304 → one refetch without validators.
	mode.Store(1)
	opts.CacheDir = t.TempDir()
	cfg, err := NewClient(opts).Config(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.HasSuffix(cfg.DL, "/crates") || len(seen) != 2 {
		t.Errorf("cfg %+v after %q", cfg, seen)
	}
}

func TestHostileRegistry(t *testing.T) {
	ctx := context.Background()
	goodIndex := t.TempDir()
	crate := publishCrate(t, goodIndex, "yolop-extension-echo", "0.1.0", echoFiles("0.1.0"))
	echoPath := "/" + IndexPath("yolop-extension-echo")
	goodLine, err := os.ReadFile(filepath.Join(goodIndex, filepath.FromSlash(IndexPath("yolop-extension-echo"))))
	if err != nil {
		t.Fatal(err)
	}
	static := ServeIndex(goodIndex)

	cases := []struct {
		name    string
		handler func(hits *atomic.Int64) http.Handler
		req     string
		opts    func(*Options)
		want    error  // from Resolve, or from Fetch when Resolve succeeds
		wantMsg string // substring of the error
		hits    int64  // expected requests to the faulty path, 0 = unchecked
	}{
		{
			name: "checksum mismatch",
			handler: func(*atomic.Int64) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if strings.HasSuffix(r.URL.Path, "/download") {
						b := append([]byte(nil), crate...)
						b[len(b)/2] ^= 1
						w.Write(b)
						return
					}
					static.ServeHTTP(w, r)
				})
			},
			want: ErrChecksum, wantMsg: "failed to verify the checksum of crate yolop-extension-echo 0.1.0",
		},
		{
			name: "truncated download",
			handler: func(hits *atomic.Int64) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if strings.HasSuffix(r.URL.Path, "/download") {
						hits.Add(1)
						w.Header().Set("Content-Length", fmt.Sprint(len(crate)))
						w.Write(crate[:len(crate)/2])
						return // the server closes: body shorter than Content-Length
					}
					static.ServeHTTP(w, r)
				})
			},
			want: ErrHTTP, wantMsg: "unexpected EOF", hits: 4,
		},
		{
			name: "crate 404",
			handler: func(hits *atomic.Int64) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == echoPath {
						hits.Add(1)
					}
					static.ServeHTTP(w, r)
				})
			},
			req:  "nope",
			want: ErrNotFound, wantMsg: "crate yolop-extension-echo-nope",
		},
		{
			name: "index 500 retried",
			handler: func(hits *atomic.Int64) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == echoPath {
						hits.Add(1)
						http.Error(w, "boom", http.StatusInternalServerError)
						return
					}
					static.ServeHTTP(w, r)
				})
			},
			want: ErrHTTP, wantMsg: "failed after 4 attempts: HTTP 500", hits: 4,
		},
		{
			name: "download 410 not retried",
			handler: func(hits *atomic.Int64) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if strings.HasSuffix(r.URL.Path, "/download") {
						hits.Add(1)
						http.Error(w, "gone", http.StatusGone)
						return
					}
					static.ServeHTTP(w, r)
				})
			},
			want: ErrNotFound, wantMsg: "410", hits: 1,
		},
		{
			name: "403 not retried",
			handler: func(hits *atomic.Int64) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == echoPath {
						hits.Add(1)
						http.Error(w, "no", http.StatusForbidden)
						return
					}
					static.ServeHTTP(w, r)
				})
			},
			want: ErrAuth, hits: 1,
		},
		{
			name: "429 with Retry-After then success",
			handler: func(hits *atomic.Int64) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == echoPath && hits.Add(1) == 1 {
						w.Header().Set("Retry-After", "120") // capped by MaxRetryDelay
						http.Error(w, "slow down", http.StatusTooManyRequests)
						return
					}
					static.ServeHTTP(w, r)
				})
			},
			hits: 2,
		},
		{
			name: "malformed config.json",
			handler: func(*atomic.Int64) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/config.json" {
						fmt.Fprint(w, `{"dl": 42}`)
						return
					}
					static.ServeHTTP(w, r)
				})
			},
			want: ErrConfig, wantMsg: `"dl" must be a non-empty string`,
		},
		{
			name: "config.json not JSON",
			handler: func(*atomic.Int64) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/config.json" {
						fmt.Fprint(w, `<html>`)
						return
					}
					static.ServeHTTP(w, r)
				})
			},
			want: ErrConfig, wantMsg: "registry sparse+http://127.0.0.1",
		},
		{
			name: "config.json missing",
			handler: func(*atomic.Int64) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/config.json" {
						http.NotFound(w, r)
						return
					}
					static.ServeHTTP(w, r)
				})
			},
			want: ErrConfig, wantMsg: "no config.json",
		},
		{
			name: "config.json auth-required not bool",
			handler: func(*atomic.Int64) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/config.json" {
						fmt.Fprint(w, `{"dl":"crates","auth-required":"yes"}`)
						return
					}
					static.ServeHTTP(w, r)
				})
			},
			want: ErrConfig, wantMsg: "auth-required",
		},
		{
			name: "file dl refused",
			handler: func(*atomic.Int64) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/config.json" {
						fmt.Fprint(w, `{"dl":"file:///etc/{crate}"}`)
						return
					}
					static.ServeHTTP(w, r)
				})
			},
			want: ErrConfig, wantMsg: "only http and https",
		},
		{
			name: "malformed line among good ones",
			handler: func(*atomic.Int64) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == echoPath {
						fmt.Fprintf(w, "{broken\n%s{\"name\":\"yolop-extension-echo\",\"vers\":\"0.1.9\"}\n", goodLine)
						return
					}
					static.ServeHTTP(w, r)
				})
			},
			// success: 0.1.0 is still installable
		},
		{
			name: "yanked only",
			handler: func(*atomic.Int64) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == echoPath {
						w.Write([]byte(strings.Replace(string(goodLine), `"yanked":false`, `"yanked":true`, 1)))
						return
					}
					static.ServeHTTP(w, r)
				})
			},
			want: ErrNoMatch, wantMsg: "yanked",
		},
		{
			name:    "requirement nothing matches",
			handler: func(*atomic.Int64) http.Handler { return static },
			req:     "^9",
			want:    ErrNoMatch, wantMsg: `requirement "^9"; available: 0.1.0`,
		},
		{
			name: "index over the size cap",
			handler: func(*atomic.Int64) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == echoPath {
						w.Write([]byte(strings.Repeat(string(goodLine), 100)))
						return
					}
					static.ServeHTTP(w, r)
				})
			},
			opts: func(o *Options) { o.MaxIndexBytes = 1024 },
			want: ErrTooLarge,
		},
		{
			name: "stalled server",
			handler: func(hits *atomic.Int64) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if strings.HasSuffix(r.URL.Path, "/download") {
						hits.Add(1)
						w.Header().Set("Content-Length", fmt.Sprint(len(crate)))
						w.Write(crate[:10])
						w.(http.Flusher).Flush()
						<-r.Context().Done() // never send the rest
						return
					}
					static.ServeHTTP(w, r)
				})
			},
			opts: func(o *Options) { o.RequestTimeout = 50 * time.Millisecond; o.Retries = -1 },
			want: ErrHTTP, wantMsg: "stalled", hits: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var hits atomic.Int64
			reg, _ := serve(t, tc.handler(&hits))
			opts := fastOptions(reg)
			opts.CacheDir = t.TempDir()
			if tc.opts != nil {
				tc.opts(&opts)
			}
			c := NewClient(opts)
			name := "yolop-extension-echo"
			if tc.req == "nope" {
				name += "-nope"
				tc.req = ""
			}
			work := t.TempDir()
			before := snapshot(t, work)
			cacheBefore := snapshot(t, opts.CacheDir)
			rel, err := c.Resolve(ctx, name, tc.req, "")
			if err == nil {
				err = c.Fetch(ctx, rel, filepath.Join(work, "pkg"), nil)
			}
			if tc.want == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if _, err := os.Stat(filepath.Join(work, "pkg", "plugin.json")); err != nil {
					t.Errorf("fetched package lacks plugin.json: %v", err)
				}
			} else {
				if !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
				t.Log(err)
				if !strings.Contains(err.Error(), tc.wantMsg) {
					t.Errorf("err = %q, want it to mention %q", err, tc.wantMsg)
				}
				assertUnchanged(t, work, before)
				if errors.Is(err, ErrConfig) {
					assertUnchanged(t, opts.CacheDir, cacheBefore)
				}
			}
			if tc.hits != 0 && hits.Load() != tc.hits {
				t.Errorf("faulty path was hit %d times, want %d", hits.Load(), tc.hits)
			}
		})
	}
}

func TestSuggestions(t *testing.T) {
	indexDir := t.TempDir()
	publishCrate(t, indexDir, "MyCrate", "1.0.0", map[string]string{"a": "1"})
	publishCrate(t, indexDir, "foo_bar", "1.0.0", map[string]string{"a": "1"})
	reg, _ := serve(t, ServeIndex(indexDir))
	c := NewClient(fastOptions(reg))
	ctx := context.Background()
	for name, want := range map[string]string{"mycrate": `did you mean "MyCrate"?`, "foo-bar": `did you mean "foo_bar"?`} {
		_, err := c.Resolve(ctx, name, "", "")
		if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), want) {
			t.Errorf("Resolve(%q) = %v, want not found with %s", name, err, want)
		}
	}
	if _, err := c.Resolve(ctx, "../etc", "", ""); !errors.Is(err, ErrInvalidName) {
		t.Errorf("Resolve(../etc) = %v, want ErrInvalidName", err)
	}
}

func TestLockedYankedVersion(t *testing.T) {
	indexDir := t.TempDir()
	publishCrate(t, indexDir, "foo", "1.0.0", map[string]string{"a": "1"})
	p := filepath.Join(indexDir, filepath.FromSlash(IndexPath("foo")))
	b, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(b), `"yanked":false`, `"yanked":true`, 1)), 0o644)
	reg, _ := serve(t, ServeIndex(indexDir))
	c := NewClient(fastOptions(reg))
	if _, err := c.Resolve(context.Background(), "foo", "1", ""); !errors.Is(err, ErrNoMatch) {
		t.Errorf("unlocked resolve of a yanked version = %v, want ErrNoMatch", err)
	}
	rel, err := c.Resolve(context.Background(), "foo", "1", "1.0.0")
	if err != nil || !rel.Yanked {
		t.Errorf("locked resolve = %+v, %v; want the yanked 1.0.0", rel, err)
	}
}

// TestRedirectAuth: a download redirected to another host must not carry
// Authorization; the same host keeps it; https→http is refused.
func TestRedirectAuth(t *testing.T) {
	const token = "canary-secret-token-7f3a"
	indexDir := t.TempDir()
	crate := publishCrate(t, indexDir, "foo", "1.0.0", map[string]string{"a": "1"})
	var otherAuth atomic.Value
	otherAuth.Store("unset")
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherAuth.Store(r.Header.Get("Authorization"))
		w.Write(crate)
	}))
	defer other.Close()
	var indexAuth atomic.Int64
	static := ServeIndex(indexDir)
	reg, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == token {
			indexAuth.Add(1)
		}
		switch {
		case r.URL.Path == "/config.json":
			fmt.Fprint(w, `{"dl":"crates","auth-required":true}`)
		case strings.HasSuffix(r.URL.Path, "/download"):
			http.Redirect(w, r, other.URL+"/blob", http.StatusFound)
		default:
			static.ServeHTTP(w, r)
		}
	}))
	var logs strings.Builder
	opts := fastOptions(reg)
	opts.Token = token
	opts.Logger = hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Trace})
	c := NewClient(opts)
	rel, err := c.Resolve(context.Background(), "foo", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Fetch(context.Background(), rel, filepath.Join(t.TempDir(), "pkg"), nil); err != nil {
		t.Fatal(err)
	}
	if got := otherAuth.Load().(string); got != "" {
		t.Errorf("redirect target got Authorization %q, want none", got)
	}
	if indexAuth.Load() < 2 {
		t.Errorf("auth-required registry got the token on %d requests, want index and download", indexAuth.Load())
	}
	if strings.Contains(logs.String(), token) {
		t.Errorf("token leaked into logs")
	}

	// https → http downgrade.
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(crate) }))
	defer plain.Close()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/config.json":
			fmt.Fprint(w, `{"dl":"crates"}`)
		case strings.HasSuffix(r.URL.Path, "/download"):
			http.Redirect(w, r, plain.URL+"/blob", http.StatusFound)
		default:
			static.ServeHTTP(w, r)
		}
	}))
	defer tlsSrv.Close()
	opts = fastOptions("sparse+" + tlsSrv.URL + "/")
	opts.HTTPClient = tlsSrv.Client()
	c = NewClient(opts)
	rel, err = c.Resolve(context.Background(), "foo", "", "")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	err = c.Fetch(context.Background(), rel, filepath.Join(work, "pkg"), nil)
	if !errors.Is(err, ErrHTTP) || !strings.Contains(err.Error(), "https to plain http") {
		t.Errorf("downgrade redirect: err = %v", err)
	}
	if entries, _ := os.ReadDir(work); len(entries) != 0 {
		t.Errorf("downgrade left %d entries", len(entries))
	}
}

func TestConfig401RetriesWithToken(t *testing.T) {
	const token = "canary-401-token"
	var calls atomic.Int64
	reg, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("Authorization") != token {
			w.Header().Set("WWW-Authenticate", `Cargo login_url="https://example.invalid/me"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, `{"dl":"crates","auth-required":true}`)
	}))
	opts := fastOptions(reg)
	opts.Token = token
	if _, err := NewClient(opts).Config(context.Background()); err != nil || calls.Load() != 2 {
		t.Fatalf("Config = %v after %d calls; want success on the token retry", err, calls.Load())
	}
	opts.Token = "wrong-" + token
	_, err := NewClient(opts).Config(context.Background())
	if !errors.Is(err, ErrAuth) || strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "example.invalid/me") {
		t.Errorf("wrong token: err = %v; want ErrAuth naming the login URL and never the token", err)
	}
}

// TestTruncatedBodyRecovers: a truncated response is retried and a good
// one then succeeds.
func TestTruncatedBodyRecovers(t *testing.T) {
	indexDir := t.TempDir()
	crate := publishCrate(t, indexDir, "foo", "1.0.0", map[string]string{"a": "1"})
	static := ServeIndex(indexDir)
	var n atomic.Int64
	reg, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/download") && n.Add(1) == 1 {
			hj := w.(http.Hijacker)
			conn, buf, _ := hj.Hijack()
			defer conn.Close()
			fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", len(crate))
			buf.Write(crate[:5])
			buf.Flush()
			return
		}
		static.ServeHTTP(w, r)
	}))
	c := NewClient(fastOptions(reg))
	rel, err := c.Resolve(context.Background(), "foo", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Fetch(context.Background(), rel, filepath.Join(t.TempDir(), "pkg"), nil); err != nil {
		t.Fatalf("Fetch after a truncated first response: %v", err)
	}
	if n.Load() != 2 {
		t.Errorf("download requested %d times, want 2", n.Load())
	}
}
