package harness

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"yolop.dev/registry/cratesio"
)

// SearchResults is what [Harness.Search] found.
type SearchResults struct {
	// Registry is the registry searched, Term what was searched for.
	Registry, Term string
	Results        []cratesio.SearchResult
	// Notes are what could not be searched (a marketplace whose catalog
	// cannot be read, a registry that failed while marketplaces answered).
	Notes []string
}

// Search looks for extensions (crates named yolop-extension-*) matching
// term in registry's web API; an empty registry is the one in
// settings.toml, else crates.io. At most limit results are returned
// (zero: 20). The plugins of the added marketplaces that match follow
// (see [Harness.SearchMarketplaces]); when there are any, a registry that
// cannot be searched is a note instead of an error.
func (h *Harness) Search(ctx context.Context, registry, term string, limit int) (*SearchResults, error) {
	plugins, err := h.SearchMarketplaces(ctx, "", term)
	if err != nil {
		return nil, err
	}
	c, err := h.Registry(ctx, registry)
	var res []cratesio.SearchResult
	if err == nil {
		res, err = c.Search(ctx, term, limit)
	}
	if err != nil && len(plugins.Results) == 0 {
		return nil, err
	}
	out := &SearchResults{Term: term, Results: res, Notes: plugins.Notes}
	if c != nil {
		out.Registry = c.Registry()
	}
	if err != nil {
		out.Notes = append(out.Notes, fmt.Sprintf("the registry could not be searched: %v", err))
	}
	if len(plugins.Results) > 0 {
		out.Registry = strings.TrimPrefix(out.Registry+" and "+plugins.Registry, " and ")
		out.Results = append(out.Results, plugins.Results...)
	}
	return out, nil
}

// Text is the results as a table (extension, version, description) with
// a heading, or a line saying that nothing matched.
func (r *SearchResults) Text() string {
	var b strings.Builder
	if len(r.Results) == 0 {
		fmt.Fprintf(&b, "no extensions match %q in %s\n", r.Term, r.Registry)
	} else {
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "EXTENSION\tVERSION\tDESCRIPTION")
		for _, x := range r.Results {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", x.Extension, x.Version, x.Description)
		}
		tw.Flush() // a strings.Builder does not fail
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return b.String()
}
