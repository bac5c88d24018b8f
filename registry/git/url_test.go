package git

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// urlCases is the URL policy table (reference item 28); it also seeds
// FuzzValidateURL.
var urlCases = []struct {
	raw  string
	opts Options
	ok   bool
}{
	// accepted
	{"https://github.com/owner/repo.git", Options{}, true},
	{"https://github.com:443/owner/repo", Options{}, true},
	{"HTTPS://example.com/r", Options{}, true},
	{"https://git@example.com/r", Options{}, true},
	{"https://[::1]:8443/r", Options{}, true},
	{"ssh://git@github.com/owner/repo.git", Options{}, true},
	{"ssh://git@github.com:2222/owner/repo.git", Options{}, true},
	{"git@github.com:owner/repo.git", Options{}, true},
	{"example.com:repo", Options{}, true},
	{"http://127.0.0.1:8080/repo", Options{AllowInsecureHTTP: true}, true},
	{"file:///tmp/repo", Options{AllowFile: true}, true},
	// refused
	{"", Options{}, false},
	{"-oProxyCommand=touch /tmp/pwned", Options{}, false},
	{"-oProxyCommand=x:repo", Options{}, false},
	{"--upload-pack=touch /tmp/pwned", Options{}, false},
	{"ext::sh -c touch% /tmp/pwned", Options{}, false},
	{"ext::sh", Options{AllowFile: true, AllowInsecureHTTP: true}, false},
	{"fd::17", Options{}, false},
	{"transport::https://example.com/r", Options{}, false},
	{"file:///tmp/repo", Options{}, false},
	{"file://host/tmp/repo", Options{AllowFile: true}, false},
	{"file://../repo", Options{AllowFile: true}, false},
	{"file:///tmp/../etc", Options{AllowFile: true}, false},
	{"http://example.com/repo", Options{}, false},
	{"git://example.com/repo", Options{AllowInsecureHTTP: true, AllowFile: true}, false},
	{"ftp://example.com/repo", Options{}, false},
	{"ssh://-oProxyCommand=x/repo", Options{}, false},
	{"ssh://-oProxyCommand=x@host/repo", Options{}, false},
	{"git@-oProxyCommand=x:repo", Options{}, false},
	{"-git@host:repo", Options{}, false},
	{"git@host:-repo", Options{}, false},
	{"git@host:", Options{}, false},
	{"host:--upload-pack=evil", Options{}, false},
	{"https://user:hunter2@example.com/r", Options{}, false},
	{"https://example.com/r?x=1", Options{}, false},
	{"https://example.com/r#frag", Options{}, false},
	{"https://example.com", Options{}, false},
	{"https://example.com/", Options{}, false},
	{"https://exa mple.com/r", Options{}, false},
	{"https://example.com/r\n", Options{}, false},
	{"https://example.com/-r", Options{}, false},
	{"https://ex_ample!.com/r", Options{}, false},
	{"https://example.com:port/r", Options{}, false},
	{`https://example.com\r`, Options{}, false},
	{"/local/path", Options{AllowFile: true}, false},
	{"./relative", Options{AllowFile: true}, false},
	{"relative/path:x", Options{}, false},
	{"C:\\repo", Options{}, false},
	{"\xff\xfe", Options{}, false},
}

func TestValidateURL(t *testing.T) {
	for _, tc := range urlCases {
		got, err := ValidateURL(tc.raw, tc.opts)
		if tc.ok {
			if err != nil {
				t.Errorf("ValidateURL(%q) = %v, want accepted", tc.raw, err)
			} else if got == "" {
				t.Errorf("ValidateURL(%q) returned an empty URL", tc.raw)
			}
			continue
		}
		if !errors.Is(err, ErrURLRejected) {
			t.Errorf("ValidateURL(%q) = %q, %v; want ErrURLRejected", tc.raw, got, err)
		}
	}
}

func TestURLErrorsRedactCredentials(t *testing.T) {
	for _, raw := range []string{
		"https://user:hunter2@example.com/r",
		"https://user:hunter2@exa mple.com/r",
		"https://user:hunter2@example.com/%zz",
		"http://user:hunter2@example.com/r",
		"user:hunter2@host:path",
	} {
		_, err := ValidateURL(raw, Options{})
		if err == nil {
			t.Errorf("ValidateURL(%q) accepted", raw)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error for %q leaks the password: %v", raw, err)
		}
		if r := RedactURL(raw); strings.Contains(r, "hunter2") {
			t.Errorf("RedactURL(%q) = %q leaks the password", raw, r)
		}
	}
	// Fetch-level errors (here: the scheme is refused) are redacted too.
	dest := filepath.Join(t.TempDir(), "ext")
	_, err := Fetch(context.Background(), "http://u:hunter2@127.0.0.1:1/r", "", dest, Options{})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Fetch error = %v, want a redacted refusal", err)
	}
	if _, err := os.Stat(dest); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dest created for a refused URL: %v", err)
	}
}

func TestRevValidation(t *testing.T) {
	for _, rev := range []string{"-x", "--upload-pack=evil", "a..b", "a b", "a~1", "HEAD^", "x@{1}", "a\\b", "a:b", "refs/heads/../../config", "v1.lock", "/main", strings.Repeat("b", 300)} {
		if err := checkRev("https://example.com/r", rev); !errors.Is(err, ErrInvalidRev) {
			t.Errorf("checkRev(%q) = %v, want ErrInvalidRev", rev, err)
		}
	}
	for _, rev := range []string{"", "main", "v1.2.0", "feature/x", "refs/tags/v1", "deadbeef", strings.Repeat("a", 40)} {
		if err := checkRev("https://example.com/r", rev); err != nil {
			t.Errorf("checkRev(%q) = %v, want nil", rev, err)
		}
	}
}

func FuzzValidateURL(f *testing.F) {
	for _, tc := range urlCases {
		f.Add(tc.raw, tc.opts.AllowInsecureHTTP, tc.opts.AllowFile)
	}
	f.Fuzz(func(t *testing.T, raw string, allowHTTP, allowFile bool) {
		got, err := ValidateURL(raw, Options{AllowInsecureHTTP: allowHTTP, AllowFile: allowFile})
		if err != nil {
			if !errors.Is(err, ErrURLRejected) {
				t.Fatalf("ValidateURL(%q) error %v does not wrap ErrURLRejected", raw, err)
			}
			if u, perr := url.Parse(raw); perr == nil && u.User != nil {
				if pw, ok := u.User.Password(); ok && len(pw) >= 4 && !strings.Contains(strings.Replace(raw, pw, "", 1), pw) &&
					strings.Contains(err.Error(), pw) {
					t.Fatalf("error for %q leaks the password: %v", raw, err)
				}
			}
			return
		}
		if strings.HasPrefix(got, "-") || strings.HasPrefix(raw, "-") || helperPrefix.MatchString(got) {
			t.Fatalf("ValidateURL(%q) accepted %q", raw, got)
		}
		for _, r := range got {
			if r <= ' ' || r == 0x7f || r == '\\' {
				t.Fatalf("ValidateURL(%q) accepted %q with a control, space or backslash", raw, got)
			}
		}
		if i := strings.Index(got, "://"); i >= 0 {
			switch scheme := got[:i]; scheme {
			case "https", "ssh":
			case "http":
				if !allowHTTP {
					t.Fatalf("http accepted without AllowInsecureHTTP: %q", raw)
				}
			case "file":
				if !allowFile {
					t.Fatalf("file accepted without AllowFile: %q", raw)
				}
			default:
				t.Fatalf("ValidateURL(%q) accepted scheme %q", raw, scheme)
			}
			u, err := url.Parse(got)
			if err != nil {
				t.Fatalf("accepted URL %q does not parse: %v", got, err)
			}
			if _, has := u.User.Password(); has {
				t.Fatalf("accepted URL %q carries a password", got)
			}
			if u.Scheme != "file" && strings.HasPrefix(u.Hostname(), "-") {
				t.Fatalf("accepted URL %q has a host starting with '-'", got)
			}
		}
	})
}
