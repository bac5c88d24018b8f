package git

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"
)

// maxURLLen bounds the length of a source URL.
const maxURLLen = 2048

// helperPrefix matches git's "<transport>::<address>" remote-helper syntax
// (ext::, fd::, ...), which can run arbitrary commands in the git CLI.
var helperPrefix = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*::`)

// hostPattern is the set of host names accepted in ssh, https and scp forms.
var hostPattern = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)

// ValidateURL checks a git source URL against this package's policy and
// returns the form to hand to the transport. Accepted forms:
//
//   - https://host[:port]/path (a user name is allowed, a password is not:
//     it would be written to extensions.lock; use [Options.Auth]);
//   - ssh://[user@]host[:port]/path and the scp form [user@]host:path, whose
//     host keys go-git checks against known_hosts;
//   - http:// only with [Options.AllowInsecureHTTP];
//   - file:///absolute/path only with [Options.AllowFile].
//
// Everything else is refused with an error wrapping [ErrURLRejected]: a
// leading "-", remote-helper forms such as ext::, git://, local paths,
// option-injection in scp user or host parts, control characters,
// queries and fragments. Errors show the URL with any password redacted.
func ValidateURL(raw string, opts Options) (string, error) {
	reject := func(why string) (string, error) {
		return "", fmt.Errorf("%w: %q: %s", ErrURLRejected, RedactURL(raw), why)
	}
	switch {
	case raw == "":
		return reject("the URL is empty; give an https:// or ssh:// URL")
	case len(raw) > maxURLLen:
		return reject(fmt.Sprintf("the URL is longer than %d bytes", maxURLLen))
	case !utf8.ValidString(raw):
		return reject("the URL is not valid UTF-8")
	case strings.HasPrefix(raw, "-"):
		return reject("a URL may not start with '-' (it would be read as a command-line option)")
	case helperPrefix.MatchString(raw):
		return reject("remote-helper URLs (ext::, fd::, ...) can run commands and are never accepted")
	}
	for _, r := range raw {
		if r <= ' ' || r == 0x7f || r == '\\' {
			return reject("the URL contains whitespace, a control character or a backslash")
		}
	}
	if i := strings.Index(raw, "://"); i >= 0 {
		return validateSchemeURL(raw, opts, reject)
	}
	return validateSCP(raw, reject)
}

func validateSchemeURL(raw string, opts Options, reject func(string) (string, error)) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return reject("the URL does not parse")
	}
	if u.Opaque != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#") {
		return reject("a git URL may not carry a query or a fragment")
	}
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "https", "ssh":
	case "http":
		if !opts.AllowInsecureHTTP {
			return reject("plain http is not allowed; use https://")
		}
	case "file":
		if !opts.AllowFile {
			return reject("file:// URLs are not allowed; install a local directory as a path source instead")
		}
		if u.User != nil || (u.Host != "" && u.Host != "localhost") {
			return reject("a file:// URL may not name a host or a user")
		}
		if !strings.HasPrefix(u.Path, "/") || hasDotDot(u.Path) {
			return reject("a file:// URL needs an absolute path without '..'")
		}
		u.Scheme = scheme
		return u.String(), nil
	case "git":
		return reject("git:// is unauthenticated and unencrypted; use https:// or ssh://")
	default:
		return reject(fmt.Sprintf("scheme %q is not allowed; use https:// or ssh://", u.Scheme))
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			return reject("credentials may not be embedded in the URL (they would be recorded in extensions.lock); configure authentication instead")
		}
		if name := u.User.Username(); name == "" || strings.HasPrefix(name, "-") {
			return reject("the user name is empty or starts with '-'")
		}
	}
	host := u.Hostname()
	if host == "" || strings.HasPrefix(host, "-") {
		return reject("the host is empty or starts with '-'")
	}
	if !hostPattern.MatchString(host) && !isIPv6Literal(u.Host) {
		return reject(fmt.Sprintf("host %q is not a valid host name", host))
	}
	if p := u.Port(); p != "" {
		for _, c := range p {
			if c < '0' || c > '9' {
				return reject("the port is not a number")
			}
		}
	}
	if u.Path == "" || u.Path == "/" {
		return reject("the URL names no repository path")
	}
	if strings.HasPrefix(strings.TrimPrefix(u.Path, "/"), "-") {
		return reject("the repository path may not start with '-'")
	}
	u.Scheme = scheme
	return u.String(), nil
}

// validateSCP accepts git's scp-like form [user@]host:path, in which a colon
// comes before any slash. Anything else without a scheme is a local path.
func validateSCP(raw string, reject func(string) (string, error)) (string, error) {
	colon := strings.Index(raw, ":")
	slash := strings.Index(raw, "/")
	if colon <= 0 || (slash >= 0 && slash < colon) {
		return reject("local paths are not git URLs; install a local directory as a path source, or give an https:// or ssh:// URL")
	}
	hostPart, path := raw[:colon], raw[colon+1:]
	user, host := "", hostPart
	if at := strings.LastIndex(hostPart, "@"); at >= 0 {
		user, host = hostPart[:at], hostPart[at+1:]
		if user == "" || strings.HasPrefix(user, "-") || strings.ContainsAny(user, "@:") {
			return reject("the user name in an scp-style URL is empty, starts with '-' or contains '@'")
		}
	}
	if strings.HasPrefix(host, "-") {
		return reject("the host in an scp-style URL may not start with '-' (option injection)")
	}
	if !hostPattern.MatchString(host) {
		return reject(fmt.Sprintf("host %q in an scp-style URL is not a valid host name", host))
	}
	if path == "" || strings.HasPrefix(path, "-") {
		return reject("the repository path in an scp-style URL is empty or starts with '-'")
	}
	if strings.Contains(path, "@") {
		return reject("an scp-style URL may not contain '@' after the host (credentials may not be embedded in the URL)")
	}
	if strings.ContainsAny(path, "?#") {
		return reject("a git URL may not carry a query or a fragment")
	}
	return raw, nil
}

func isIPv6Literal(host string) bool {
	h := host
	if i := strings.LastIndex(h, "]"); i >= 0 {
		h = h[:i+1]
	}
	if !strings.HasPrefix(h, "[") || !strings.HasSuffix(h, "]") {
		return false
	}
	for _, c := range h[1 : len(h)-1] {
		if !(c == ':' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')) {
			return false
		}
	}
	return len(h) > 2
}

func hasDotDot(p string) bool {
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return true
		}
	}
	return false
}

// userinfoPattern finds "//user:password@" in a URL that net/url cannot
// parse, so that even a malformed URL never prints its password.
var userinfoPattern = regexp.MustCompile(`//([^/@:]*):[^/]*@`)

// RedactURL returns raw with any password replaced by "xxxxx", for error
// messages and logs. It handles URLs that do not parse, and the scp form.
func RedactURL(raw string) string {
	if strings.Contains(raw, "://") {
		if u, err := url.Parse(raw); err == nil {
			return u.Redacted()
		}
		return userinfoPattern.ReplaceAllString(raw, "//$1:xxxxx@")
	}
	// scp-like or unknown: "user:secret@host:path".
	if at := strings.LastIndex(raw, "@"); at >= 0 {
		if c := strings.Index(raw[:at], ":"); c >= 0 {
			return raw[:c] + ":xxxxx" + raw[at:]
		}
	}
	return raw
}
