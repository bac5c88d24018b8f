package packaging

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// A SourceKind says where a package comes from.
type SourceKind string

// Source kinds.
const (
	SourcePath  SourceKind = "path"  // a local directory, referenced in place
	SourceGit   SourceKind = "git"   // a git repository at a revision
	SourceCrate SourceKind = "crate" // a crate on crates.io (or a sparse registry)
	// SourceMarketplace is an entry of a Claude Code marketplace catalog
	// the user added, "<plugin>@<marketplace>" (harness/marketplace); the
	// source string is Raw, which ParseSource does not produce.
	SourceMarketplace SourceKind = "marketplace"
)

// CratePrefix is the crates.io naming convention: crate
// yolop-extension-<name> is extension <name>.
const CratePrefix = "yolop-extension-"

// A Source is a parsed install source.
type Source struct {
	Kind SourceKind
	// Raw is the string as given.
	Raw string
	// Path is the absolute directory of a SourcePath.
	Path string
	// URL is the repository URL of a SourceGit, without the @rev.
	URL string
	// Rev is the requested git revision or crate version; "" means the
	// default branch or the newest version.
	Rev string
	// Crate is the crate name of a SourceCrate.
	Crate string
	// Registry is the sparse registry of a SourceCrate in canonical
	// "sparse+URL/" form: named by the source itself
	// ("sparse+URL#crate"), or learnt when the crate was fetched. Empty
	// means not known yet (--registry, settings.toml or crates.io decide).
	Registry string
}

// CratesIORegistry is crates.io's sparse index, the registry a source
// labelled "crates.io:" comes from.
const CratesIORegistry = "sparse+https://index.crates.io/"

// String renders the source in the form ParseSource accepts, as recorded in
// extensions.lock.
func (s Source) String() string {
	switch s.Kind {
	case SourcePath:
		return s.Path
	case SourceGit:
		if s.Rev != "" {
			return s.URL + "@" + s.Rev
		}
		return s.URL
	case SourceCrate:
		spec := s.Crate
		if s.Rev != "" {
			spec += "@" + s.Rev
		}
		if reg := canonicalRegistry(s.Registry); reg != "" && reg != CratesIORegistry {
			return reg + "#" + spec
		}
		return "crates.io:" + spec
	}
	return s.Raw
}

// withRegistry returns s labelled with the registry a crate was fetched
// from; other sources, an empty reg and a source that names its registry
// are returned as they are.
func (s Source) withRegistry(reg string) Source {
	if s.Kind == SourceCrate && s.Registry == "" {
		s.Registry = canonicalRegistry(reg)
	}
	return s
}

// SameSource reports whether src is the source e was installed from. A
// crate entry written before sources named their registry (source
// "crates.io:<crate>" with the registry recorded beside it) matches the
// same crate and requirement from that registry.
func (e *LockEntry) SameSource(src Source) bool {
	if e.Source == src.String() {
		return true
	}
	if e.Kind != SourceCrate || src.Kind != SourceCrate || e.Registry == "" {
		return false
	}
	old, err := ParseSource(e.Source)
	if err != nil || old.Kind != SourceCrate || old.Registry != "" {
		return false
	}
	return old.Crate == src.Crate && old.Rev == src.Rev && canonicalRegistry(e.Registry) == canonicalRegistry(src.Registry)
}

// canonicalRegistry returns a sparse registry URL as "sparse+" plus the
// index URL with a trailing slash, or "" when reg is empty or not a
// sparse+http(s) URL with a host.
func canonicalRegistry(reg string) string {
	rest, ok := strings.CutPrefix(reg, "sparse+")
	if !ok {
		return ""
	}
	u, err := url.Parse(rest)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return ""
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	return "sparse+" + u.String()
}

// ExtensionName is the extension name the source implies when it can be
// known before fetching: the crate name without the yolop-extension- prefix,
// or "" for paths and git URLs (read it from the manifest).
func (s Source) ExtensionName() string {
	if s.Kind == SourceCrate {
		return strings.TrimPrefix(s.Crate, CratePrefix)
	}
	return ""
}

// SourceOptions tune [SourceOptions.Parse].
type SourceOptions struct {
	// AllowFileURL accepts file:// git URLs. Off by default (reference item
	// 28); tests serving local repositories turn it on.
	AllowFileURL bool
}

// ParseSource parses an install source:
//
//	<path>                  ".", "/...", "~/..." or an existing directory
//	<git-url>[@rev]         https://..., ssh://..., git@host:path
//	crates.io:<crate>[@ver]
//	sparse+<url>#<crate>[@ver]  a crate in another sparse registry
//	<name>                  shorthand for crates.io:yolop-extension-<name>
//
// URLs starting with '-', ext:: transports, plain http and (unless allowed)
// file:// are refused.
func ParseSource(s string) (Source, error) { return SourceOptions{}.Parse(s) }

var (
	crateRE   = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)
	versionRE = regexp.MustCompile(`^[0-9A-Za-z.+^~=<>*, -]{1,64}$`)
	revRE     = regexp.MustCompile(`^[A-Za-z0-9._/+-]{1,255}$`)
	scpRE     = regexp.MustCompile(`^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^/\\]`)
)

// Parse is [ParseSource] with options.
func (o SourceOptions) Parse(s string) (Source, error) {
	bad := func(format string, args ...any) (Source, error) {
		return Source{}, fmt.Errorf("%w %q: "+format, append([]any{ErrInvalidSource, s}, args...)...)
	}
	raw := s
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return bad("empty; give a path, a git URL, crates.io:<crate> or an extension name")
	case strings.ContainsAny(s, "\x00\n\r"):
		return bad("contains control characters")
	case strings.HasPrefix(s, "-"):
		return bad("starts with '-' (refused: it could be read as an option)")
	case !strings.HasPrefix(s, "sparse+") && (strings.HasPrefix(strings.ToLower(s), "ext::") || strings.Contains(s, "::")):
		return bad("git transport helpers (ext::, fd::, ...) are refused")
	}
	if strings.HasPrefix(s, "sparse+") {
		reg, spec, ok := strings.Cut(s, "#")
		if !ok || strings.Contains(spec, "#") {
			return bad("give a crate in a sparse registry as sparse+https://host/path/#<crate>[@version]")
		}
		creg := canonicalRegistry(reg)
		if creg == "" {
			return bad("%q is not a sparse registry URL (sparse+https://host/path/, or sparse+http:// for a local one)", reg)
		}
		name, ver, _ := strings.Cut(spec, "@")
		if !crateRE.MatchString(name) {
			return bad("%q is not a crate name", name)
		}
		if ver != "" && !versionRE.MatchString(ver) {
			return bad("%q is not a version requirement", ver)
		}
		return Source{Kind: SourceCrate, Raw: raw, Crate: name, Rev: ver, Registry: creg}, nil
	}
	if rest, ok := strings.CutPrefix(s, "crates.io:"); ok {
		name, ver, _ := strings.Cut(rest, "@")
		if !crateRE.MatchString(name) {
			return bad("%q is not a crate name", name)
		}
		if ver != "" && !versionRE.MatchString(ver) {
			return bad("%q is not a version requirement", ver)
		}
		return Source{Kind: SourceCrate, Raw: raw, Crate: name, Rev: ver}, nil
	}
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "/") || s == "~" || strings.HasPrefix(s, "~/") {
		return pathSource(raw, s)
	}
	if i := strings.Index(s, "://"); i > 0 {
		scheme := strings.ToLower(s[:i])
		switch scheme {
		case "https", "ssh":
		case "file":
			if !o.AllowFileURL {
				return bad("file:// URLs are refused; give the directory path instead to install it in place")
			}
		case "http":
			return bad("plain http is refused; use https")
		default:
			return bad("scheme %q is refused; use https:// or ssh://", scheme)
		}
		pathStart := len(s)
		if j := strings.Index(s[i+3:], "/"); j >= 0 {
			pathStart = i + 3 + j
		}
		return gitSource(raw, s, pathStart, bad)
	}
	if scpRE.MatchString(s) {
		return gitSource(raw, s, strings.Index(s, ":")+1, bad)
	}
	if fi, err := os.Stat(s); err == nil && fi.IsDir() {
		return pathSource(raw, s)
	}
	name, ver, _ := strings.Cut(s, "@")
	if slugRE.MatchString(name) {
		if !crateRE.MatchString(CratePrefix + name) {
			return bad("extension name %q is too long for a crate name", name)
		}
		if ver != "" && !versionRE.MatchString(ver) {
			return bad("%q is not a version requirement", ver)
		}
		crate := name
		if !strings.HasPrefix(crate, CratePrefix) {
			crate = CratePrefix + name // the shorthand "echo" names yolop-extension-echo
		}
		return Source{Kind: SourceCrate, Raw: raw, Crate: crate, Rev: ver}, nil
	}
	return bad("not a directory, git URL (https://, ssh://, git@host:path), crates.io:<crate> or extension name")
}

func pathSource(raw, s string) (Source, error) {
	if s == "~" || strings.HasPrefix(s, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return Source{}, fmt.Errorf("%w %q: cannot expand ~: %w", ErrInvalidSource, raw, err)
		}
		s = filepath.Join(home, strings.TrimPrefix(s, "~"))
	}
	abs, err := filepath.Abs(s)
	if err != nil {
		return Source{}, fmt.Errorf("%w %q: %w", ErrInvalidSource, raw, err)
	}
	return Source{Kind: SourcePath, Raw: raw, Path: abs}, nil
}

// gitSource splits url@rev. The authority may hold user@, so only an '@'
// after pathStart (the first '/' after the host, or the scp ':') starts a rev.
func gitSource(raw, s string, pathStart int, bad func(string, ...any) (Source, error)) (Source, error) {
	u, rev := s, ""
	if k := strings.LastIndex(s, "@"); k > pathStart {
		u, rev = s[:k], s[k+1:]
		if !revRE.MatchString(rev) || strings.HasPrefix(rev, "-") || strings.Contains(rev, "..") {
			return bad("%q is not a valid revision", rev)
		}
	}
	if strings.Contains(u, "://") {
		pu, err := url.Parse(u)
		if err != nil {
			return bad("%v", err)
		}
		if pu.Scheme != "file" && (pu.Host == "" || strings.HasPrefix(pu.Host, "-")) {
			return bad("missing or invalid host")
		}
		if pu.Path == "" || pu.Path == "/" {
			return bad("missing repository path")
		}
	}
	return Source{Kind: SourceGit, Raw: raw, URL: u, Rev: rev}, nil
}
