package cratesio

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/hashicorp/go-hclog"
	"yolop.dev/internal/atomicfile"
)

// Options configures a [Client]. Every zero value means the documented
// default.
type Options struct {
	// Registry is the sparse registry URL ("sparse+https://host/path/").
	// Empty means crates.io ([CratesIO]).
	Registry string
	// CacheDir holds cached index files (one sub-directory per registry).
	// Empty disables the cache: every resolution downloads the index file.
	CacheDir string
	// Logger receives warnings (skipped index lines, retries). Nil discards.
	Logger hclog.Logger
	// HTTPClient is used for every request; its CheckRedirect is replaced by
	// the package's redirect policy. Nil means a client with
	// http.DefaultTransport.
	HTTPClient *http.Client
	// Token is sent as Authorization when the registry asks for it: on a
	// retry of a 401 config.json, and on every request when config.json
	// says auth-required. It never appears in errors or logs. Empty means
	// anonymous.
	Token string
	// UserAgent is sent on every request. Empty means Go's default.
	UserAgent string
	// Retries is how many times a retryable failure (5xx, 429, connection
	// error, truncated body, stall) is retried. Zero means 3; negative means
	// no retry.
	Retries int
	// RetryBaseDelay is the first retry delay, doubled on each retry. Zero
	// means 500ms.
	RetryBaseDelay time.Duration
	// RetryJitter is the upper bound of the random delay added to each
	// retry. Zero means 1s; negative means none.
	RetryJitter time.Duration
	// MaxRetryDelay caps every retry delay, including a server's
	// Retry-After. Zero means 10s.
	MaxRetryDelay time.Duration
	// RequestTimeout is how long a request may go without progress
	// (response headers or body bytes) before it is abandoned as stalled.
	// Zero means 30s.
	RequestTimeout time.Duration
	// LowSpeedLimit and LowSpeedTime abort a transfer whose body arrives
	// slower than LowSpeedLimit bytes per second over LowSpeedTime, like
	// cargo's http.low-speed-limit (curl's CURLOPT_LOW_SPEED_LIMIT/TIME):
	// from the response headers on, every LowSpeedTime window must bring at
	// least LowSpeedLimit × LowSpeedTime bytes. The abort is a retryable
	// failure wrapping [ErrTooSlow]. Zero means cargo's defaults, 10
	// bytes/s over 30s; a negative value of either turns the check off.
	LowSpeedLimit int64
	LowSpeedTime  time.Duration
	// DownloadTimeout bounds one request (an index file, config.json, a
	// .crate or an artifact) from its first attempt to its last, retry
	// delays included; past it the request fails wrapping [ErrTimeout].
	// Zero means 10 minutes; negative means no bound.
	DownloadTimeout time.Duration
	// LimitNames says how errors name the three limits above, so the user
	// is told what to change. Empty fields name the Options fields.
	LimitNames LimitNames
	// MaxIndexBytes caps an index file or config.json body. Zero means 10 MiB.
	MaxIndexBytes int64
	// MaxDownloadBytes caps a .crate or artifact download. Zero means 1 GiB.
	MaxDownloadBytes int64
	// Unpack caps what an unpacked archive may hold; its Prefix is ignored
	// (Fetch sets it to "<name>-<version>/").
	Unpack UnpackOptions
}

// LimitNames names the settings behind [Options.LowSpeedLimit],
// [Options.LowSpeedTime] and [Options.DownloadTimeout] in errors, e.g.
// "[registry] low_speed_limit", with Where the file that holds them.
type LimitNames struct {
	LowSpeedLimit   string
	LowSpeedTime    string
	DownloadTimeout string
	// Where, if set, is appended to the advice: " in <Where>".
	Where string
	// Off says which value turns a limit off, e.g. "0"; empty means "a
	// negative value", as in Options.
	Off string
}

func (n LimitNames) orDefaults() LimitNames {
	if n.LowSpeedLimit == "" {
		n.LowSpeedLimit = "Options.LowSpeedLimit"
	}
	if n.LowSpeedTime == "" {
		n.LowSpeedTime = "Options.LowSpeedTime"
	}
	if n.DownloadTimeout == "" {
		n.DownloadTimeout = "Options.DownloadTimeout"
	}
	if n.Where != "" {
		n.Where = " in " + n.Where
	}
	if n.Off == "" {
		n.Off = "a negative value"
	}
	return n
}

// Defaults of the transfer limits (cargo's for the low-speed check).
const (
	DefaultLowSpeedLimit   = 10               // bytes per second
	DefaultLowSpeedTime    = 30 * time.Second // the averaging window
	DefaultDownloadTimeout = 10 * time.Minute // one request, all attempts
)

// A Client reads one sparse registry. It is safe for concurrent use.
type Client struct {
	opts   Options
	base   *url.URL
	regErr error
	hc     *http.Client
	log    hclog.Logger

	mu  sync.Mutex
	cfg *Config
}

// NewClient returns a client for opts.Registry. An invalid registry URL is
// reported by every method (use [ParseRegistry] to check one up front).
func NewClient(opts Options) *Client {
	c := &Client{opts: opts, log: opts.Logger}
	if c.log == nil {
		c.log = hclog.NewNullLogger()
	}
	c.base, c.regErr = ParseRegistry(opts.Registry)
	hc := http.Client{}
	if opts.HTTPClient != nil {
		hc = *opts.HTTPClient
	}
	hc.CheckRedirect = checkRedirect
	c.hc = &hc
	return c
}

// Registry returns the registry URL in canonical sparse+ form.
func (c *Client) Registry() string {
	if c.base == nil {
		return c.opts.Registry
	}
	return "sparse+" + c.base.String()
}

func (c *Client) retries() int {
	switch {
	case c.opts.Retries < 0:
		return 0
	case c.opts.Retries == 0:
		return 3
	}
	return c.opts.Retries
}

func (c *Client) requestTimeout() time.Duration {
	if c.opts.RequestTimeout > 0 {
		return c.opts.RequestTimeout
	}
	return 30 * time.Second
}

// lowSpeed returns the low-speed limit and window; ok is false when the
// check is off.
func (c *Client) lowSpeed() (limit int64, window time.Duration, ok bool) {
	limit, window = c.opts.LowSpeedLimit, c.opts.LowSpeedTime
	if limit < 0 || window < 0 {
		return 0, 0, false
	}
	if limit == 0 {
		limit = DefaultLowSpeedLimit
	}
	if window == 0 {
		window = DefaultLowSpeedTime
	}
	return limit, window, true
}

func (c *Client) downloadTimeout() time.Duration {
	switch {
	case c.opts.DownloadTimeout < 0:
		return 0
	case c.opts.DownloadTimeout == 0:
		return DefaultDownloadTimeout
	}
	return c.opts.DownloadTimeout
}

func (c *Client) maxIndex() int64 {
	if c.opts.MaxIndexBytes > 0 {
		return c.opts.MaxIndexBytes
	}
	return 10 << 20
}

func (c *Client) maxDownload() int64 {
	if c.opts.MaxDownloadBytes > 0 {
		return c.opts.MaxDownloadBytes
	}
	return 1 << 30
}

// A Config is a registry's config.json.
type Config struct {
	// DL is the download URL template, made absolute: a relative dl (our
	// static-index extension, see README) is resolved against the index URL.
	DL string
	// API is the web API base, empty when the registry has none.
	API string
	// AuthRequired says every request must carry the token.
	AuthRequired bool
}

// ParseConfig parses a config.json body for the registry at base. dl is
// required and must be a string; api a string; auth-required a bool;
// unknown keys are ignored. A dl with a scheme other than http or https
// (such as file:) is refused.
func ParseConfig(base *url.URL, body []byte) (Config, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return Config{}, fmt.Errorf("not a JSON object: %v", err)
	}
	var cfg Config
	dl, ok := raw["dl"]
	if !ok {
		return Config{}, fmt.Errorf(`the required key "dl" is missing`)
	}
	if err := json.Unmarshal(dl, &cfg.DL); err != nil || cfg.DL == "" {
		return Config{}, fmt.Errorf(`"dl" must be a non-empty string, got %s`, truncate(string(dl), 60))
	}
	if api, ok := raw["api"]; ok && string(api) != "null" {
		if err := json.Unmarshal(api, &cfg.API); err != nil {
			return Config{}, fmt.Errorf(`"api" must be a string, got %s`, truncate(string(api), 60))
		}
	}
	if ar, ok := raw["auth-required"]; ok {
		if err := json.Unmarshal(ar, &cfg.AuthRequired); err != nil {
			return Config{}, fmt.Errorf(`"auth-required" must be true or false, got %s`, truncate(string(ar), 60))
		}
	}
	abs, err := resolveDL(base, cfg.DL)
	if err != nil {
		return Config{}, err
	}
	cfg.DL = abs
	return cfg, nil
}

// resolveDL makes dl absolute against the index base and checks its scheme.
func resolveDL(base *url.URL, dl string) (string, error) {
	head, _, _ := strings.Cut(dl, "{")
	if i := strings.Index(head, ":"); i > 0 && !strings.ContainsAny(head[:i], "/?#") {
		u, err := url.Parse(head)
		if err != nil {
			return "", fmt.Errorf(`"dl" %q is not a URL: %v`, dl, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return "", fmt.Errorf(`"dl" %q uses scheme %q; only http and https are allowed`, dl, u.Scheme)
		}
		if u.Host == "" {
			return "", fmt.Errorf(`"dl" %q has no host`, dl)
		}
		return dl, nil
	}
	switch {
	case strings.HasPrefix(dl, "//"):
		return "", fmt.Errorf(`"dl" %q: scheme-relative URLs are not supported`, dl)
	case strings.HasPrefix(dl, "/"):
		return base.Scheme + "://" + base.Host + dl, nil
	default:
		return base.String() + strings.TrimPrefix(dl, "./"), nil
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func (c *Client) authHeader(withToken bool) http.Header {
	h := http.Header{}
	if withToken && c.opts.Token != "" {
		h.Set("Authorization", c.opts.Token)
	}
	return h
}

// Config fetches (or revalidates) and parses the registry's config.json.
// A config that fails to parse is never cached.
func (c *Client) Config(ctx context.Context) (Config, error) {
	if c.regErr != nil {
		return Config{}, c.regErr
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cfg != nil {
		return *c.cfg, nil
	}
	var cfg Config
	validate := func(body []byte) error {
		var err error
		cfg, err = ParseConfig(c.base, body)
		return err
	}
	_, err := c.fetchIndexFile(ctx, "config.json", false, validate)
	if errors.Is(err, ErrAuth) && c.opts.Token != "" {
		_, err = c.fetchIndexFile(ctx, "config.json", true, validate)
	}
	if err != nil {
		if errors.Is(err, ErrUnreachable) {
			return Config{}, err // not the config's fault: say what the network said

		}
		if errors.Is(err, ErrNotFound) {
			err = fmt.Errorf("the registry has no config.json (404)")
		}
		return Config{}, fmt.Errorf("%w: registry %s: %w; is this a sparse registry URL?", ErrConfig, c.Registry(), err)
	}
	c.cfg = &cfg
	return cfg, nil
}

// Index fetches (or revalidates) and parses the index file of crate name.
// It returns an error wrapping [ErrNotFound] when the registry does not
// have the crate.
func (c *Client) Index(ctx context.Context, name string) (*IndexFile, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	cfg, err := c.Config(ctx)
	if err != nil {
		return nil, err
	}
	var f *IndexFile
	_, err = c.fetchIndexFile(ctx, IndexPath(name), cfg.AuthRequired, func(body []byte) error {
		var perr error
		f, perr = ParseIndexFile(name, body)
		return perr
	})
	if err != nil {
		return nil, fmt.Errorf("crate %s in registry %s: %w", name, c.Registry(), err)
	}
	for _, s := range f.Skipped {
		c.log.Warn("skipping index line", "crate", name, "registry", c.Registry(), "reason", s)
	}
	return f, nil
}

// A Release is a resolved crate version, ready for [Client.Fetch].
type Release struct {
	Name     string
	Version  string
	Checksum string // lowercase hex SHA-256 of the .crate
	Yanked   bool
	// DownloadURL is the .crate URL expanded from config.json's dl.
	DownloadURL string
	// Registry is the registry URL in sparse+ form.
	Registry string
	Entry    IndexEntry
}

// Resolve picks the version of crate name to install. req is a cargo
// version requirement (a bare version is a caret requirement; "" or "*"
// means any release). The highest matching version wins; yanked versions
// and pre-releases the requirement does not name are skipped. When locked
// is not empty (the version a lockfile pins) exactly that version is
// returned, even if yanked, provided it still satisfies req.
func (c *Client) Resolve(ctx context.Context, name, req, locked string) (Release, error) {
	if err := ValidateName(name); err != nil {
		return Release{}, err
	}
	r, err := ParseRequirement(req)
	if err != nil {
		return Release{}, fmt.Errorf("crate %s: %w", name, err)
	}
	cfg, err := c.Config(ctx)
	if err != nil {
		return Release{}, err
	}
	f, err := c.Index(ctx, name)
	if errors.Is(err, ErrNotFound) {
		return Release{}, fmt.Errorf("%w%s", err, c.suggest(ctx, name, nil))
	}
	if err != nil {
		return Release{}, err
	}
	indexURL := c.base.String() + IndexPath(name)
	if len(f.Entries) == 0 {
		summary := describeRefusals(f.Lines, f.Refused)
		if !slices.ContainsFunc(f.Refused, func(r RefusedLine) bool { return r.Reason != RefusedName }) {
			// Nothing at all, or other spellings only: not found, with a
			// suggestion.
			if summary != "" {
				summary = "; " + summary
			}
			return Release{}, fmt.Errorf("%w: no crate named %q in registry %s%s%s", ErrNotFound, name, c.Registry(), summary, c.suggest(ctx, name, f.CaseVariants))
		}
		msg := fmt.Sprintf("%s; %s", summary, refusalHint(f.Refused, indexURL))
		return Release{}, fmt.Errorf("%w: crate %s in registry %s has no usable version: %s%s", ErrNoMatch, name, c.Registry(), msg, c.suggest(ctx, name, f.CaseVariants))
	}
	e, err := f.Select(r, locked)
	if err != nil {
		return Release{}, fmt.Errorf("crate %s in registry %s: %w%s", name, c.Registry(), err, noMatchDetail(f, r, locked, indexURL))
	}
	return Release{
		Name:        e.Name,
		Version:     e.Vers,
		Checksum:    e.Cksum,
		Yanked:      e.Yanked,
		DownloadURL: ExpandDL(cfg.DL, e.Name, e.Vers, e.Cksum),
		Registry:    c.Registry(),
		Entry:       *e,
	}, nil
}

func noMatchDetail(f *IndexFile, r Requirement, locked, indexURL string) string {
	refused := f.Refusals(r)
	var b strings.Builder
	if locked == "" {
		fmt.Fprintf(&b, " for requirement %q", r.String())
	}
	if len(refused) > 0 {
		b.WriteString("; " + describeRefusals(f.Lines, refused))
	}
	if locked != "" {
		if h := refusalHint(refused, indexURL); h != "" {
			b.WriteString("; " + h)
		}
		return b.String()
	}
	var avail []string
	for _, e := range f.Entries {
		if !e.Yanked {
			avail = append(avail, e.Vers)
		}
	}
	if len(avail) > 0 {
		slices.SortFunc(avail, func(a, b string) int {
			return semver.MustParse(a).Compare(semver.MustParse(b))
		})
		if len(avail) > 8 {
			avail = avail[len(avail)-8:]
		}
		fmt.Fprintf(&b, "; available: %s", strings.Join(avail, ", "))
	} else if len(refused) == 0 {
		b.WriteString("; every published version is yanked")
	}
	if h := refusalHint(refused, indexURL); h != "" {
		b.WriteString("; " + h)
	}
	return b.String()
}

// suggest builds a "did you mean" suffix from case variants found in the
// index file and from the -/_ swapped spellings, which live in other index
// files. It never substitutes a name silently.
func (c *Client) suggest(ctx context.Context, name string, variants []string) string {
	cands := slices.Clone(variants)
	for _, alt := range []string{strings.ReplaceAll(name, "-", "_"), strings.ReplaceAll(name, "_", "-")} {
		if alt == name || IndexPath(alt) == IndexPath(name) {
			continue
		}
		f, err := c.Index(ctx, alt)
		if err != nil || f == nil {
			continue
		}
		if len(f.Entries) > 0 {
			cands = append(cands, alt)
		}
		cands = append(cands, f.CaseVariants...)
	}
	if len(cands) == 0 {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", cands[0])
}

// cacheHeader is the first line of a cached index file.
type cacheHeader struct {
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last-modified,omitempty"`
}

func (c *Client) cachePath(rel string) string {
	if c.opts.CacheDir == "" || c.base == nil {
		return ""
	}
	key := c.base.Host + c.base.Path
	key = strings.NewReplacer("/", "_", ":", "_", "\\", "_").Replace(strings.TrimSuffix(key, "/"))
	sum := sha256.Sum256([]byte(c.base.String()))
	return filepath.Join(c.opts.CacheDir, "index", key+"-"+hex.EncodeToString(sum[:4]), filepath.FromSlash(rel))
}

func readCache(path string) (cacheHeader, []byte, bool) {
	if path == "" {
		return cacheHeader{}, nil, false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return cacheHeader{}, nil, false
	}
	line, body, ok := bytes.Cut(data, []byte("\n"))
	var h cacheHeader
	if !ok || json.Unmarshal(line, &h) != nil {
		return cacheHeader{}, nil, false
	}
	return h, body, true
}

// fetchIndexFile GETs rel under the index base, revalidating a cached copy
// with If-None-Match (preferred) or If-Modified-Since. validate parses the
// body; only a body that validates is cached. It reports whether a body
// was downloaded.
func (c *Client) fetchIndexFile(ctx context.Context, rel string, withToken bool, validate func([]byte) error) (bool, error) {
	cpath := c.cachePath(rel)
	hdr, cached, haveCache := readCache(cpath)
	u := c.base.String() + rel
	for round := 0; round < 2; round++ {
		h := c.authHeader(withToken)
		if haveCache {
			if hdr.ETag != "" {
				h.Set("If-None-Match", hdr.ETag)
			} else if hdr.LastModified != "" {
				h.Set("If-Modified-Since", hdr.LastModified)
			}
		}
		var body []byte
		var newHdr cacheHeader
		status := 0
		err := c.request(ctx, rel, u, h, func(resp *http.Response) error {
			status = resp.StatusCode
			switch resp.StatusCode {
			case http.StatusOK:
				b, err := readCapped(resp.Body, c.maxIndex(), rel)
				if err != nil {
					return bodyReadError(err)
				}
				body = b
				if et := resp.Header.Get("ETag"); et != "" {
					newHdr.ETag = et
				} else {
					newHdr.LastModified = resp.Header.Get("Last-Modified")
				}
				return nil
			case http.StatusNotModified:
				return nil
			case http.StatusNotFound, http.StatusGone, http.StatusUnavailableForLegalReasons:
				return fmt.Errorf("%w: %s returned HTTP %s", ErrNotFound, u, resp.Status)
			case http.StatusUnauthorized:
				msg := fmt.Sprintf("%s returned HTTP 401", u)
				if withToken {
					msg += " even with the configured token"
				} else {
					msg += "; configure a token for this registry"
				}
				if lu := loginURL(resp.Header.Get("WWW-Authenticate")); lu != "" {
					msg += " (log in at " + lu + ")"
				}
				return fmt.Errorf("%w: %s", ErrAuth, msg)
			case http.StatusForbidden:
				return fmt.Errorf("%w: %s returned HTTP 403", ErrAuth, u)
			default:
				return fmt.Errorf("%w: %s returned HTTP %s", ErrHTTP, u, resp.Status)
			}
		})
		if err != nil {
			return false, err
		}
		if status == http.StatusNotModified {
			if !haveCache {
				// 304 without a cached copy: ask again without validators.
				continue
			}
			return false, validate(cached)
		}
		if err := validate(body); err != nil {
			return true, err
		}
		if cpath != "" && (newHdr.ETag != "" || newHdr.LastModified != "") {
			line, _ := json.Marshal(newHdr)
			if err := writeFile(cpath, append(append(line, '\n'), body...)); err != nil {
				c.log.Warn("could not cache index file", "path", cpath, "error", err)
			}
		}
		return true, nil
	}
	return false, fmt.Errorf("%w: %s answered 304 Not Modified to a request without validators", ErrHTTP, u)
}

func loginURL(h string) string {
	_, rest, ok := strings.Cut(h, `login_url="`)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	return v
}

// readCapped reads r fully, failing with ErrTooLarge past limit bytes.
func readCapped(r io.Reader, limit int64, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrTooLarge, what, limit)
	}
	return b, nil
}

// ProgressFunc is called as a download makes progress with the bytes
// received so far and the expected total (-1 when unknown). It runs on the
// downloading goroutine and should return quickly.
type ProgressFunc func(done, total int64)

// download GETs u into a new temp file in dir, hashing as it streams, and
// returns the file (positioned at 0), its size and its SHA-256. On error no
// file is left behind.
func (c *Client) download(ctx context.Context, what, u string, withToken bool, dir string, progress ProgressFunc) (*os.File, int64, string, error) {
	f, err := os.CreateTemp(dir, ".tmp-*.download")
	if err != nil {
		return nil, 0, "", fmt.Errorf("%s: creating a temp file in %s: %w", what, dir, err)
	}
	fail := func(err error) (*os.File, int64, string, error) {
		f.Close()
		os.Remove(f.Name())
		return nil, 0, "", err
	}
	var size int64
	var sum []byte
	err = c.request(ctx, what, u, c.authHeader(withToken), func(resp *http.Response) error {
		switch resp.StatusCode {
		case http.StatusOK:
		case http.StatusNotFound, http.StatusGone, http.StatusUnavailableForLegalReasons:
			return fmt.Errorf("%w: %s: %s returned HTTP %s", ErrNotFound, what, u, resp.Status)
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("%w: %s: %s returned HTTP %s", ErrAuth, what, u, resp.Status)
		default:
			return fmt.Errorf("%w: %s: %s returned HTTP %s", ErrHTTP, what, u, resp.Status)
		}
		if resp.ContentLength > c.maxDownload() {
			return fmt.Errorf("%w: %s is %d bytes, over the %d-byte download limit", ErrTooLarge, what, resp.ContentLength, c.maxDownload())
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if err := f.Truncate(0); err != nil {
			return err
		}
		h := sha256.New()
		var src io.Reader = io.LimitReader(resp.Body, c.maxDownload()+1)
		if progress != nil {
			src = &progressReader{r: src, total: resp.ContentLength, fn: progress}
		}
		n, err := io.Copy(io.MultiWriter(f, h), src)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				return fmt.Errorf("%s: writing %s: %w", what, f.Name(), err)
			}
			return bodyReadError(err)
		}
		if n > c.maxDownload() {
			return fmt.Errorf("%w: %s is over the %d-byte download limit", ErrTooLarge, what, c.maxDownload())
		}
		size, sum = n, h.Sum(nil)
		return nil
	})
	if err != nil {
		return fail(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fail(err)
	}
	return f, size, hex.EncodeToString(sum), nil
}

type progressReader struct {
	r     io.Reader
	done  int64
	total int64
	fn    ProgressFunc
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.done += int64(n)
		p.fn(p.done, p.total)
	}
	return n, err
}

// checksumEqual compares two hex digests in constant time, case-insensitively
// on the expected side.
func checksumEqual(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(strings.ToLower(want))) == 1
}

// Fetch downloads rel's .crate, verifies its SHA-256 against rel.Checksum
// before decompressing anything, and unpacks it into destDir, which must
// not exist yet. The crate's "<name>-<version>/" prefix is stripped, so
// destDir holds the crate root (Cargo.toml, plugin.json, …). The download
// is staged in destDir's parent directory; on any error nothing is left
// there.
func (c *Client) Fetch(ctx context.Context, rel Release, destDir string, progress ProgressFunc) error {
	if err := ValidateName(rel.Name); err != nil {
		return err
	}
	what := fmt.Sprintf("crate %s %s", rel.Name, rel.Version)
	if !isLowerHex64(rel.Checksum) {
		return fmt.Errorf("%s: the expected checksum %q is not 64 lowercase hex digits", what, rel.Checksum)
	}
	if _, err := os.Lstat(destDir); err == nil {
		return fmt.Errorf("%s: destination %s already exists; fetch into a fresh directory", what, destDir)
	}
	parent := filepath.Dir(destDir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	cfg, err := c.Config(ctx)
	if err != nil {
		return err
	}
	f, size, sum, err := c.download(ctx, what, rel.DownloadURL, cfg.AuthRequired, parent, progress)
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if !checksumEqual(sum, rel.Checksum) {
		return fmt.Errorf("%w: failed to verify the checksum of %s from %s: the registry says %s, the download is %s; nothing was unpacked", ErrChecksum, what, rel.DownloadURL, rel.Checksum, sum)
	}
	lim := c.opts.Unpack
	lim.Prefix = rel.Name + "-" + rel.Version + "/"
	if err := Unpack(f, size, destDir, lim); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// writeFile replaces path with data (mode 0644), creating its directory.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, data, 0o644)
}
