// Package marketplace adds Claude Code plugin marketplaces to yolop: a
// catalog (.claude-plugin/marketplace.json) in a git repository or a
// directory, whose plugins install as <plugin>@<marketplace>.
//
// [Marketplaces.Add] reads a catalog — from a directory, or from a git
// repository fetched with go-git at a pinned commit (registry/git: no
// hooks, no submodules, no work tree) — and records it in settings.toml
// ([[marketplaces]]: name, source, ref, commit); a git catalog is also
// cached under <config>/cache/marketplaces/ so listing and searching need
// no network. [Fetcher] is the install fetcher of
// [packaging.SourceMarketplace] sources: it stages the entry's plugin
// (a directory of the marketplace at the recorded commit, or the entry's
// own git repository at its sha or ref) and reports the commit it came
// from, which the lock pins. Nothing read here is ever executed.
package marketplace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"yolop.dev/harness/settings"
	"yolop.dev/internal/atomicfile"
	"yolop.dev/registry/git"
)

// Marketplaces are the marketplaces recorded in one config directory.
type Marketplaces struct {
	// ConfigDir holds settings.toml and the catalog cache.
	ConfigDir string
	// Settings is settings.toml in ConfigDir.
	Settings *settings.File
	// Git is the policy for every git fetch (the zero value is the
	// production one: https and ssh only).
	Git git.Options
}

// A Location is where a marketplace is: a directory or a git repository.
type Location struct {
	// Dir is the absolute directory of a local marketplace.
	Dir string
	// URL and Ref are a git marketplace's repository and branch or tag
	// (empty: the remote's HEAD).
	URL, Ref string
}

// String is the location as recorded and shown: the directory, or the
// URL with @ref.
func (l Location) String() string {
	if l.Dir != "" {
		return l.Dir
	}
	if l.Ref != "" {
		return l.URL + "@" + l.Ref
	}
	return l.URL
}

var scpRE = regexp.MustCompile(`^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^/\\]`)

// ParseLocation reads what `yolop ext marketplace add` takes: a directory
// (".", "/…", "~/…" or one that exists), a git URL (https://, ssh://,
// git@host:path; others only as git.Options allow) with an optional
// @ref, or github:owner/repo[@ref].
func (ms *Marketplaces) ParseLocation(s string) (Location, error) {
	bad := func(format string, args ...any) (Location, error) {
		return Location{}, fmt.Errorf("marketplace source %q: "+format, append([]any{s}, args...)...)
	}
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return bad("empty; give a directory, a git URL or github:owner/repo")
	case strings.HasPrefix(s, "-"):
		return bad("starts with '-'")
	}
	if rest, ok := strings.CutPrefix(s, "github:"); ok {
		repo, ref, _ := strings.Cut(rest, "@")
		if !repoRE.MatchString(repo) || strings.Contains(repo, "..") {
			return bad("github:%s is not github:owner/repo", repo)
		}
		s = "https://github.com/" + repo
		if ref != "" {
			s += "@" + ref
		}
	}
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "/") || s == "~" || strings.HasPrefix(s, "~/") || (!strings.Contains(s, "://") && !scpRE.MatchString(s) && isDir(s)) {
		if s == "~" || strings.HasPrefix(s, "~/") {
			home, err := os.UserHomeDir()
			if err != nil {
				return bad("cannot expand ~: %v", err)
			}
			s = filepath.Join(home, strings.TrimPrefix(s, "~"))
		}
		abs, err := filepath.Abs(s)
		if err != nil {
			return bad("%v", err)
		}
		return Location{Dir: abs}, nil
	}
	pathStart := strings.Index(s, ":") + 1
	if i := strings.Index(s, "://"); i > 0 {
		pathStart = len(s)
		if j := strings.Index(s[i+3:], "/"); j >= 0 {
			pathStart = i + 3 + j
		}
	} else if !scpRE.MatchString(s) {
		return bad("not a directory, a git URL (https://, ssh://, git@host:path) or github:owner/repo")
	}
	u, ref := s, ""
	if k := strings.LastIndex(s, "@"); k > pathStart {
		u, ref = s[:k], s[k+1:]
		if !refRE.MatchString(ref) || strings.HasPrefix(ref, "-") || strings.Contains(ref, "..") {
			return bad("%q is not a branch, tag or commit", ref)
		}
	}
	if _, err := git.ValidateURL(u, ms.Git); err != nil {
		return bad("%v", err)
	}
	return Location{URL: u, Ref: ref}, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// A Marketplace is a recorded marketplace with its catalog.
type Marketplace struct {
	settings.Marketplace
	// Catalog is the catalog as read at Commit (git) or now (a
	// directory); nil when it cannot be read, and then Err says why.
	Catalog *Catalog `json:"-"`
	Err     error    `json:"-"`
}

// Add reads the catalog at src (see [Marketplaces.ParseLocation]) and
// records the marketplace under the catalog's name. Adding a marketplace
// again from the same source re-reads it (a git one at the ref's current
// commit): that is how a marketplace is updated. A name already recorded
// from another source is refused. A catalog that cannot be read or parsed
// changes nothing.
func (ms *Marketplaces) Add(ctx context.Context, src string) (*Marketplace, error) {
	loc, err := ms.ParseLocation(src)
	if err != nil {
		return nil, err
	}
	var (
		data   []byte
		commit string
	)
	if loc.Dir != "" {
		data, err = readCatalogFile(loc.Dir)
	} else {
		data, commit, err = ms.fetchCatalog(ctx, loc.URL, loc.Ref)
	}
	if err != nil {
		return nil, fmt.Errorf("adding marketplace %s: %w", loc, err)
	}
	cat, err := ParseCatalog(data)
	if err != nil {
		return nil, fmt.Errorf("adding marketplace %s: %s: %w", loc, CatalogPath, err)
	}
	rec := settings.Marketplace{Name: cat.Name, Source: loc.Dir, Commit: commit}
	if loc.Dir == "" {
		rec.Source, rec.Ref = loc.URL, loc.Ref
	}
	list, err := ms.Settings.Marketplaces(ctx)
	if err != nil {
		return nil, err
	}
	for _, o := range list {
		if o.Name == cat.Name && o.Source != rec.Source {
			return nil, fmt.Errorf("adding marketplace %s: a marketplace named %s is already added from %s; run `yolop ext marketplace remove %s` first", loc, cat.Name, o.Source, cat.Name)
		}
	}
	if loc.Dir == "" {
		if err := ms.writeCache(cat.Name, data); err != nil {
			return nil, err
		}
	}
	if err := ms.Settings.PutMarketplace(ctx, rec); err != nil {
		return nil, err
	}
	return &Marketplace{Marketplace: rec, Catalog: cat}, nil
}

// Update reads the catalog of the marketplace named name again, from its
// recorded source and ref (a git one at the ref's current commit), as
// adding it again does.
func (ms *Marketplaces) Update(ctx context.Context, name string) (*Marketplace, error) {
	m, err := ms.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	loc := Location{Dir: m.Source}
	if m.Commit != "" || !filepath.IsAbs(m.Source) {
		loc = Location{URL: m.Source, Ref: m.Ref}
	}
	return ms.Add(ctx, loc.String())
}

// List returns the recorded marketplaces with their catalogs; a catalog
// that cannot be read is reported in the marketplace's Err.
func (ms *Marketplaces) List(ctx context.Context) ([]Marketplace, error) {
	recs, err := ms.Settings.Marketplaces(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Marketplace, 0, len(recs))
	for _, r := range recs {
		m := Marketplace{Marketplace: r}
		m.Catalog, m.Err = ms.catalog(r)
		out = append(out, m)
	}
	return out, nil
}

// Get returns the recorded marketplace named name, or an error wrapping
// ErrNoMarketplace.
func (ms *Marketplaces) Get(ctx context.Context, name string) (*Marketplace, error) {
	list, err := ms.List(ctx)
	if err != nil {
		return nil, err
	}
	var names []string
	for i := range list {
		if list[i].Name == name {
			return &list[i], nil
		}
		names = append(names, list[i].Name)
	}
	have := "none is added"
	if len(names) > 0 {
		have = "added: " + strings.Join(names, ", ")
	}
	return nil, fmt.Errorf("%w %q (%s); add it with `yolop ext marketplace add <git-url|path>`", ErrNoMarketplace, name, have)
}

// Remove forgets the marketplace named name and its cached catalog.
// Plugins installed from it stay installed (they are pinned), but cannot
// be updated until it is added again.
func (ms *Marketplaces) Remove(ctx context.Context, name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%w %q: not a marketplace name", ErrNoMarketplace, name)
	}
	removed, err := ms.Settings.RemoveMarketplace(ctx, name)
	if err != nil {
		return err
	}
	if !removed {
		_, err := ms.Get(ctx, name)
		return err
	}
	if err := os.Remove(ms.cachePath(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removed marketplace %s, but not its cached catalog: %w", name, err)
	}
	return nil
}

// A Match is one plugin a search found.
type Match struct {
	// Ref is <plugin>@<marketplace>, what `yolop ext install` takes.
	Ref         string `json:"ref"`
	Plugin      string `json:"plugin"`
	Marketplace string `json:"marketplace"`
	Version     string `json:"version,omitempty"`
	Description string `json:"description,omitempty"`
	Source      string `json:"source"`
	// Unsupported says why the entry cannot be installed, when it cannot.
	Unsupported string `json:"unsupported,omitempty"`
}

// Search lists the plugins of the recorded marketplaces (only the one
// named marketplace, when set) whose name or description contains term,
// case-insensitively; an empty term matches every plugin. A marketplace
// whose catalog cannot be read is an error only when it was named.
func (ms *Marketplaces) Search(ctx context.Context, marketplace, term string) ([]Match, []string, error) {
	var list []Marketplace
	if marketplace != "" {
		m, err := ms.Get(ctx, marketplace)
		if err != nil {
			return nil, nil, err
		}
		if m.Err != nil {
			return nil, nil, m.Err
		}
		list = []Marketplace{*m}
	} else {
		var err error
		if list, err = ms.List(ctx); err != nil {
			return nil, nil, err
		}
	}
	term = strings.ToLower(term)
	out := []Match{}
	var notes []string
	for _, m := range list {
		if m.Err != nil {
			notes = append(notes, fmt.Sprintf("marketplace %s: %v", m.Name, m.Err))
			continue
		}
		for _, e := range m.Catalog.Plugins {
			if term != "" && !strings.Contains(strings.ToLower(e.Name), term) && !strings.Contains(strings.ToLower(e.Description), term) {
				continue
			}
			x := Match{Ref: e.Name + "@" + m.Name, Plugin: e.Name, Marketplace: m.Name, Version: e.Version, Description: e.Description, Source: e.Source.String()}
			if e.Err != nil {
				x.Unsupported = e.Err.Error()
			}
			out = append(out, x)
		}
	}
	return out, notes, nil
}

// catalog reads a recorded marketplace's catalog: the live file of a
// directory, the cached copy of a git marketplace.
func (ms *Marketplaces) catalog(r settings.Marketplace) (*Catalog, error) {
	if !nameRE.MatchString(r.Name) {
		return nil, fmt.Errorf("%w: settings.toml names a marketplace %q, which is not a marketplace name; remove the entry by hand", ErrMalformedCatalog, r.Name)
	}
	var data []byte
	var err error
	if r.Commit == "" && filepath.IsAbs(r.Source) {
		data, err = readCatalogFile(r.Source)
	} else {
		data, err = os.ReadFile(ms.cachePath(r.Name))
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("its catalog is not cached; run `yolop ext marketplace add %s` to read it again", r.Source)
		}
	}
	if err != nil {
		return nil, err
	}
	cat, err := ParseCatalog(data)
	if err != nil {
		return nil, err
	}
	if cat.Name != r.Name {
		return nil, fmt.Errorf("%w: its catalog now names itself %q, not %q; remove it and add it again", ErrMalformedCatalog, cat.Name, r.Name)
	}
	return cat, nil
}

// fetchCatalog fetches url at ref into a temporary directory and returns
// the catalog and the commit it was read at.
func (ms *Marketplaces) fetchCatalog(ctx context.Context, url, ref string) ([]byte, string, error) {
	tmp, err := os.MkdirTemp("", "yolop-marketplace-")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(tmp)
	tree := filepath.Join(tmp, "tree")
	res, err := git.Fetch(ctx, url, ref, tree, ms.Git)
	if err != nil {
		return nil, "", err
	}
	data, err := readCatalogFile(tree)
	return data, res.Commit, err
}

func (ms *Marketplaces) cachePath(name string) string {
	return filepath.Join(ms.ConfigDir, "cache", "marketplaces", name+".json")
}

func (ms *Marketplaces) writeCache(name string, data []byte) error {
	p := ms.cachePath(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("caching the catalog of %s: %w", name, err)
	}
	if err := atomicfile.Write(p, data, 0o644); err != nil {
		return fmt.Errorf("caching the catalog of %s: %w", name, err)
	}
	return nil
}

// readCatalogFile reads root's catalog, refusing a catalog that is not a
// regular file inside root (a symbolic link is not followed).
func readCatalogFile(root string) ([]byte, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	fi, err := r.Lstat(filepath.FromSlash(CatalogPath))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s has no %s", ErrMalformedCatalog, root, CatalogPath)
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrMalformedCatalog, CatalogPath)
	}
	f, err := r.Open(filepath.FromSlash(CatalogPath))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxCatalogBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxCatalogBytes {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrMalformedCatalog, CatalogPath, MaxCatalogBytes)
	}
	return data, nil
}
