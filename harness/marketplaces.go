package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"yolop.dev/harness/fetch"
	"yolop.dev/harness/marketplace"
	"yolop.dev/packaging"
	"yolop.dev/registry/cratesio"
	"yolop.dev/registry/git"
)

// Marketplaces are the Claude Code plugin marketplaces added to the config
// directory (settings.toml [[marketplaces]]): `yolop ext marketplace`,
// and the <plugin>@<marketplace> sources `ext install` takes.
func (h *Harness) Marketplaces() *marketplace.Marketplaces {
	return &marketplace.Marketplaces{ConfigDir: h.dir, Settings: h.settings, Git: git.Options{AllowFile: h.o.AllowFileGit}}
}

// marketplaceFetcher stages <plugin>@<marketplace> sources for the manager.
func (h *Harness) marketplaceFetcher() marketplace.Fetcher {
	return marketplace.Fetcher{Marketplaces: h.Marketplaces()}
}

// SearchMarketplaces lists the plugins of the added marketplaces (only
// the one named marketplace, when set) whose name or description holds
// term, as search results whose Extension is <plugin>@<marketplace>, the
// source `ext install` takes. An entry yolop cannot install says why in
// its description.
func (h *Harness) SearchMarketplaces(ctx context.Context, name, term string) (*SearchResults, error) {
	found, notes, err := h.Marketplaces().Search(ctx, name, term)
	if err != nil {
		return nil, err
	}
	where := "the added marketplaces"
	if name != "" {
		where = "marketplace " + name
	}
	r := &SearchResults{Registry: where, Term: term, Notes: notes}
	r.addPlugins(found)
	return r, nil
}

func (r *SearchResults) addPlugins(found []marketplace.Match) {
	for _, x := range found {
		desc := x.Description
		if x.Unsupported != "" {
			desc = fmt.Sprintf("%s [cannot install: %s]", desc, x.Unsupported)
		}
		r.Results = append(r.Results, cratesio.SearchResult{Name: x.Plugin, Extension: x.Ref, Version: x.Version, Description: desc})
	}
}

// infoOfMarketplaceEntry stages a marketplace entry in a temporary
// directory and reads its manifest, as an install would before asking;
// nothing is installed and nothing runs.
func (h *Harness) infoOfMarketplaceEntry(ctx context.Context, src packaging.Source) (*Info, error) {
	tmp, err := os.MkdirTemp("", "yolop-info-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	fetchFn, _, err := h.marketplaceFetcher().Open(src, fetch.Request{})
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(tmp, "pkg")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	if _, err := fetchFn(ctx, dir); err != nil {
		return nil, fmt.Errorf("info %s: %w", src, err)
	}
	m, err := packaging.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("info %s: %w", src, err)
	}
	return notInstalled(m, src.String(), src.Kind), nil
}
