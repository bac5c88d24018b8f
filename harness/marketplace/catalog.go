package marketplace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
)

// CatalogPath is where a marketplace keeps its catalog, relative to its root.
const CatalogPath = ".claude-plugin/marketplace.json"

// MaxCatalogBytes caps the catalog file.
const MaxCatalogBytes = 4 << 20

// Errors, matched with errors.Is.
var (
	// ErrMalformedCatalog reports a marketplace.json that is not a catalog.
	ErrMalformedCatalog = errors.New("malformed marketplace catalog")
	// ErrUnsupportedSource reports an entry whose source yolop cannot
	// install: an unknown kind (npm, pip, …), or a path that leaves the
	// marketplace.
	ErrUnsupportedSource = errors.New("unsupported plugin source")
	// ErrNoPlugin reports a plugin the catalog does not list.
	ErrNoPlugin = errors.New("no such plugin in the marketplace")
	// ErrNoMarketplace reports a marketplace name that was never added.
	ErrNoMarketplace = errors.New("no such marketplace")
)

// A Catalog is a parsed .claude-plugin/marketplace.json.
type Catalog struct {
	// Name names the marketplace: <plugin>@<Name> installs from it.
	Name        string  `json:"name"`
	Owner       string  `json:"owner"`
	Description string  `json:"description,omitempty"`
	Plugins     []Entry `json:"plugins"`
}

// An Entry is one plugin the catalog lists.
type Entry struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Version     string `json:"version,omitempty"`
	Category    string `json:"category,omitempty"`
	Source      Source `json:"source"`
	// Err says why the entry cannot be installed (an unknown source kind,
	// a path leaving the marketplace); nil when it can.
	Err error `json:"-"`
}

// Source kinds of an [Entry].
const (
	KindPath      = "path"       // a directory inside the marketplace
	KindGitHub    = "github"     // {"source": "github", "repo": "owner/repo"}
	KindURL       = "url"        // {"source": "url", "url": "https://…/repo.git"}
	KindGitSubdir = "git-subdir" // {"source": "git-subdir", "url": …, "path": "plugins/x"}
)

// A Source is where an entry's plugin comes from.
type Source struct {
	// Kind is one of the Kind constants, or the unsupported kind as the
	// catalog names it.
	Kind string `json:"kind"`
	// Path is a slash path inside the marketplace (KindPath) or inside
	// the repository (KindGitSubdir), cleaned, never leaving it.
	Path string `json:"path,omitempty"`
	// Repo is the GitHub owner/repo of KindGitHub.
	Repo string `json:"repo,omitempty"`
	// URL is the git URL of KindURL and KindGitSubdir.
	URL string `json:"url,omitempty"`
	// Ref is a branch or tag, SHA a full commit that pins it.
	Ref string `json:"ref,omitempty"`
	SHA string `json:"sha,omitempty"`
}

// GitURL is the repository a git-kind source fetches.
func (s Source) GitURL() string {
	if s.Kind == KindGitHub {
		return "https://github.com/" + s.Repo
	}
	return s.URL
}

// Rev is the revision a git-kind source fetches: the pinned SHA, else the
// ref, else "" (the remote's HEAD).
func (s Source) Rev() string {
	if s.SHA != "" {
		return s.SHA
	}
	return s.Ref
}

// String is the source as a person reads it.
func (s Source) String() string {
	switch s.Kind {
	case KindPath:
		return "./" + s.Path
	case KindGitHub, KindURL, KindGitSubdir:
		out := s.GitURL()
		if s.Kind == KindGitSubdir {
			out += " (" + s.Path + ")"
		}
		if r := s.Rev(); r != "" {
			out += "@" + r
		}
		return out
	}
	return s.Kind
}

var (
	// nameRE is an extension name (packaging's rule): a marketplace entry
	// installs as the extension it names.
	nameRE   = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	repoRE   = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)
	shaRE    = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)
	refRE    = regexp.MustCompile(`^[A-Za-z0-9._/+-]{1,255}$`)
	schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)
)

// ParseCatalog parses a marketplace.json. A catalog that is not JSON, has
// no name or owner, has no plugins array, or lists an entry without a
// valid name (or one name twice) is an error wrapping ErrMalformedCatalog.
// An entry whose source yolop cannot install is kept with its Err set, so
// the rest of the catalog stays usable and the entry is shown with why.
func ParseCatalog(data []byte) (*Catalog, error) {
	bad := func(format string, args ...any) (*Catalog, error) {
		return nil, fmt.Errorf("%w: "+format, append([]any{ErrMalformedCatalog}, args...)...)
	}
	if len(data) > MaxCatalogBytes {
		return bad("larger than %d bytes", MaxCatalogBytes)
	}
	var raw struct {
		Name        string          `json:"name"`
		Owner       json.RawMessage `json:"owner"`
		Description string          `json:"description"`
		Metadata    struct {
			Description string `json:"description"`
			PluginRoot  string `json:"pluginRoot"`
		} `json:"metadata"`
		Plugins json.RawMessage `json:"plugins"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return bad("%v", err)
	}
	if !nameRE.MatchString(raw.Name) {
		return bad("name %q is not a marketplace name (lower-case letters, digits, - and _, at most 64)", raw.Name)
	}
	var owner struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw.Owner, &owner); err != nil || owner.Name == "" {
		return bad("owner must be an object with a name")
	}
	var plugins []json.RawMessage
	if err := json.Unmarshal(raw.Plugins, &plugins); err != nil || bytes.Equal(bytes.TrimSpace(raw.Plugins), []byte("null")) || len(raw.Plugins) == 0 {
		return bad("plugins must be an array")
	}
	c := &Catalog{Name: raw.Name, Owner: owner.Name, Description: raw.Description}
	if c.Description == "" {
		c.Description = raw.Metadata.Description
	}
	root, err := cleanRel(raw.Metadata.PluginRoot)
	if raw.Metadata.PluginRoot == "" {
		root, err = "", nil
	}
	if err != nil {
		return bad("metadata.pluginRoot: %v", err)
	}
	seen := map[string]bool{}
	for i, p := range plugins {
		var e struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Version     string          `json:"version"`
			Category    string          `json:"category"`
			Source      json.RawMessage `json:"source"`
		}
		if err := json.Unmarshal(p, &e); err != nil {
			return bad("plugins[%d]: %v", i, err)
		}
		if !nameRE.MatchString(e.Name) {
			return bad("plugins[%d]: name %q is not a plugin name (lower-case letters, digits, - and _, at most 64)", i, e.Name)
		}
		if seen[e.Name] {
			return bad("plugins[%d]: %q is listed twice", i, e.Name)
		}
		seen[e.Name] = true
		ent := Entry{Name: e.Name, Description: e.Description, Version: e.Version, Category: e.Category}
		ent.Source, ent.Err = parseSource(e.Source, root)
		if ent.Err != nil {
			ent.Err = fmt.Errorf("plugin %s: %w", e.Name, ent.Err)
		}
		c.Plugins = append(c.Plugins, ent)
	}
	return c, nil
}

// Entry returns the entry named name, or an error wrapping ErrNoPlugin
// that lists what the catalog has.
func (c *Catalog) Entry(name string) (*Entry, error) {
	var names []string
	for i := range c.Plugins {
		if c.Plugins[i].Name == name {
			return &c.Plugins[i], nil
		}
		names = append(names, c.Plugins[i].Name)
	}
	return nil, fmt.Errorf("%w: %q is not listed by marketplace %s (it lists: %s)", ErrNoPlugin, name, c.Name, strings.Join(names, ", "))
}

// parseSource reads an entry's source: a string (a relative path; a bare
// name resolves under pluginRoot) or an object whose "source" names the
// kind.
func parseSource(raw json.RawMessage, pluginRoot string) (Source, error) {
	unsupported := func(format string, args ...any) (Source, error) {
		return Source{}, fmt.Errorf("%w: "+format, append([]any{ErrUnsupportedSource}, args...)...)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		switch {
		case schemeRE.MatchString(s) || strings.HasPrefix(s, "git@"):
			return unsupported("%q: a git URL is given as {\"source\": \"url\", \"url\": …}", s)
		case strings.HasPrefix(s, "./") || s == ".":
			p, err := cleanRel(s)
			if err != nil {
				return unsupported("%v", err)
			}
			return Source{Kind: KindPath, Path: p}, nil
		default:
			p, err := cleanRel(s)
			if err != nil {
				return unsupported("%v", err)
			}
			return Source{Kind: KindPath, Path: path.Join(pluginRoot, p)}, nil
		}
	}
	var o struct {
		Source string `json:"source"`
		Repo   string `json:"repo"`
		URL    string `json:"url"`
		Path   string `json:"path"`
		Ref    string `json:"ref"`
		SHA    string `json:"sha"`
	}
	if err := json.Unmarshal(raw, &o); err != nil || o.Source == "" {
		return unsupported("source must be a relative path or an object with a \"source\" kind")
	}
	src := Source{Kind: o.Source, Ref: o.Ref, SHA: o.SHA}
	switch o.Source {
	case KindGitHub:
		if !repoRE.MatchString(o.Repo) || strings.Contains(o.Repo, "..") {
			return unsupported("github repo %q is not owner/repo", o.Repo)
		}
		src.Repo = o.Repo
	case KindURL, KindGitSubdir:
		if o.URL == "" || strings.HasPrefix(o.URL, "-") {
			return unsupported("%s source without a git url", o.Source)
		}
		src.URL = o.URL
		if o.Source == KindGitSubdir {
			p, err := cleanRel(o.Path)
			if err != nil || p == "." {
				return unsupported("git-subdir path %q: must name a directory inside the repository", o.Path)
			}
			src.Path = p
		}
	default:
		return unsupported("source kind %q (yolop installs relative paths, github, url and git-subdir sources)", o.Source)
	}
	if o.SHA != "" && !shaRE.MatchString(o.SHA) {
		return unsupported("sha %q is not a full commit id", o.SHA)
	}
	if o.Ref != "" && (!refRE.MatchString(o.Ref) || strings.HasPrefix(o.Ref, "-") || strings.Contains(o.Ref, "..")) {
		return unsupported("ref %q is not a branch or tag name", o.Ref)
	}
	return src, nil
}

// cleanRel cleans a relative slash path and refuses one that is empty,
// absolute, holds a backslash or control byte, or leaves its root.
func cleanRel(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("empty path")
	}
	if strings.ContainsAny(p, "\\\x00") || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", fmt.Errorf("path %q holds a backslash or a control character", p)
	}
	if path.IsAbs(p) || (len(p) > 1 && p[1] == ':') {
		return "", fmt.Errorf("path %q is absolute; give it relative to the marketplace root", p)
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("path %q leaves the marketplace root", p)
	}
	for _, part := range strings.Split(c, "/") {
		if strings.EqualFold(part, ".git") {
			return "", fmt.Errorf("path %q goes through .git", p)
		}
	}
	return c, nil
}
