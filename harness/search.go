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
}

// Search looks for extensions (crates named yolop-extension-*) matching
// term in registry's web API; an empty registry is the one in
// settings.toml, else crates.io. At most limit results are returned
// (zero: 20).
func (h *Harness) Search(ctx context.Context, registry, term string, limit int) (*SearchResults, error) {
	c, err := h.Registry(ctx, registry)
	if err != nil {
		return nil, err
	}
	res, err := c.Search(ctx, term, limit)
	if err != nil {
		return nil, err
	}
	return &SearchResults{Registry: c.Registry(), Term: term, Results: res}, nil
}

// Text is the results as a table (extension, version, description) with
// a heading, or a line saying that nothing matched.
func (r *SearchResults) Text() string {
	var b strings.Builder
	if len(r.Results) == 0 {
		fmt.Fprintf(&b, "no extensions match %q in %s\n", r.Term, r.Registry)
		return b.String()
	}
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EXTENSION\tVERSION\tDESCRIPTION")
	for _, x := range r.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", x.Extension, x.Version, x.Description)
	}
	tw.Flush() // a strings.Builder does not fail
	return b.String()
}
