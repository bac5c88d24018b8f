package harness

import (
	"context"
	"fmt"

	"yolop.dev/harness/marketplace"
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
