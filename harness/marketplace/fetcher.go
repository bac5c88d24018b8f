package marketplace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"yolop.dev/harness/fetch"
	"yolop.dev/packaging"
	"yolop.dev/registry/git"
)

// SplitRef splits "<plugin>@<marketplace>". ok is false when s is not of
// that form (both names valid, nothing else); whether the marketplace
// was added is for the caller to check.
func SplitRef(s string) (plugin, marketplace string, ok bool) {
	plugin, marketplace, ok = strings.Cut(s, "@")
	if !ok || !nameRE.MatchString(plugin) || !nameRE.MatchString(marketplace) {
		return "", "", false
	}
	return plugin, marketplace, true
}

// Source returns the install source of s when it is <plugin>@<marketplace>
// and that marketplace was added; ok is false otherwise (s is then some
// other kind of source, e.g. a crate's <name>@<version>).
func (ms *Marketplaces) Source(ctx context.Context, s string) (src packaging.Source, ok bool) {
	plugin, name, ok := SplitRef(strings.TrimSpace(s))
	if !ok {
		return packaging.Source{}, false
	}
	recs, err := ms.Settings.Marketplaces(ctx)
	if err != nil {
		return packaging.Source{}, false
	}
	for _, r := range recs {
		if r.Name == name {
			return packaging.Source{Kind: packaging.SourceMarketplace, Raw: plugin + "@" + name}, true
		}
	}
	return packaging.Source{}, false
}

// A Fetcher stages marketplace entries (sources of kind
// packaging.SourceMarketplace) for the install store.
type Fetcher struct {
	Marketplaces *Marketplaces
}

// Open implements [fetch.Fetcher].
func (f Fetcher) Open(src packaging.Source, _ fetch.Request) (fetch.FetchFunc, fetch.ProvisionFunc, error) {
	plugin, name, ok := SplitRef(src.Raw)
	if src.Kind != packaging.SourceMarketplace || !ok {
		return nil, nil, fmt.Errorf("installing %s: not a <plugin>@<marketplace> source", src)
	}
	return func(ctx context.Context, dir string) (packaging.FetchResult, error) {
		return f.Marketplaces.stage(ctx, plugin, name, dir)
	}, nil, nil
}

// stage fills dir (an empty staging directory) with plugin from the
// marketplace name and returns the commit it came from.
func (ms *Marketplaces) stage(ctx context.Context, plugin, name, dir string) (packaging.FetchResult, error) {
	m, err := ms.Get(ctx, name)
	if err != nil {
		return packaging.FetchResult{}, err
	}
	if m.Commit == "" && filepath.IsAbs(m.Source) {
		if m.Err != nil {
			return packaging.FetchResult{}, fmt.Errorf("marketplace %s: %w", name, m.Err)
		}
		e, err := usable(m.Catalog, plugin)
		if err != nil {
			return packaging.FetchResult{}, err
		}
		if e.Source.Kind != KindPath {
			return ms.stageGit(ctx, e.Source, dir)
		}
		return packaging.FetchResult{}, copyInside(m.Source, e.Source.Path, dir)
	}
	// A git marketplace: its plugins come from the commit the catalog was
	// read at, and the catalog is read again from that same tree.
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".tmp-marketplace-")
	if err != nil {
		return packaging.FetchResult{}, err
	}
	defer os.RemoveAll(tmp)
	tree := filepath.Join(tmp, "tree")
	res, err := git.Fetch(ctx, m.Source, m.Commit, tree, ms.Git)
	if err != nil {
		return packaging.FetchResult{}, fmt.Errorf("marketplace %s: %w", name, err)
	}
	data, err := readCatalogFile(tree)
	if err != nil {
		return packaging.FetchResult{}, fmt.Errorf("marketplace %s at %s: %w", name, res.Commit, err)
	}
	cat, err := ParseCatalog(data)
	if err != nil {
		return packaging.FetchResult{}, fmt.Errorf("marketplace %s at %s: %w", name, res.Commit, err)
	}
	e, err := usable(cat, plugin)
	if err != nil {
		return packaging.FetchResult{}, err
	}
	if e.Source.Kind != KindPath {
		return ms.stageGit(ctx, e.Source, dir)
	}
	if err := moveInside(tree, e.Source.Path, dir); err != nil {
		return packaging.FetchResult{}, fmt.Errorf("plugin %s of marketplace %s at %s: %w", plugin, name, res.Commit, err)
	}
	return packaging.FetchResult{Commit: res.Commit}, nil
}

func usable(cat *Catalog, plugin string) (*Entry, error) {
	e, err := cat.Entry(plugin)
	if err != nil {
		return nil, err
	}
	if e.Err != nil {
		return nil, fmt.Errorf("marketplace %s: %w", cat.Name, e.Err)
	}
	return e, nil
}

// stageGit fetches a github, url or git-subdir entry into dir at its sha
// (else its ref, else HEAD).
func (ms *Marketplaces) stageGit(ctx context.Context, s Source, dir string) (packaging.FetchResult, error) {
	if s.Kind != KindGitSubdir {
		res, err := git.Fetch(ctx, s.GitURL(), s.Rev(), dir, ms.Git)
		if err != nil {
			return packaging.FetchResult{}, err
		}
		return packaging.FetchResult{Commit: res.Commit}, nil
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".tmp-marketplace-")
	if err != nil {
		return packaging.FetchResult{}, err
	}
	defer os.RemoveAll(tmp)
	tree := filepath.Join(tmp, "tree")
	res, err := git.Fetch(ctx, s.GitURL(), s.Rev(), tree, ms.Git)
	if err != nil {
		return packaging.FetchResult{}, err
	}
	if err := moveInside(tree, s.Path, dir); err != nil {
		return packaging.FetchResult{}, fmt.Errorf("%s at %s: %w", s, res.Commit, err)
	}
	return packaging.FetchResult{Commit: res.Commit}, nil
}

// moveInside moves the directory rel of an exported git tree (which holds
// no symbolic links) onto the empty directory dir.
func moveInside(tree, rel, dir string) error {
	sub := filepath.Join(tree, filepath.FromSlash(rel))
	fi, err := os.Lstat(sub)
	if err != nil || !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory of the marketplace", ErrUnsupportedSource, rel)
	}
	if err := os.Remove(dir); err != nil {
		return err
	}
	return os.Rename(sub, dir)
}

// copyInside copies the directory rel of the local marketplace root into
// dir, refusing one that resolves (through symbolic links) outside root.
func copyInside(root, rel, dir string) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(filepath.Join(realRoot, filepath.FromSlash(rel)))
	if err != nil {
		return fmt.Errorf("%w: %s is not a directory of the marketplace: %v", ErrUnsupportedSource, rel, err)
	}
	if r, err := filepath.Rel(realRoot, real); err != nil || !filepath.IsLocal(r) && r != "." {
		return fmt.Errorf("%w: %s resolves to %s, outside the marketplace %s", ErrUnsupportedSource, rel, real, root)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory of the marketplace", ErrUnsupportedSource, rel)
	}
	return packaging.CopyTree(real, dir)
}
