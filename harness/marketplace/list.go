package marketplace

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// A Row is one recorded marketplace as a front-end lists it (`yolop ext
// marketplace list`, its --json).
type Row struct {
	Name    string   `json:"name"`
	Source  string   `json:"source"`
	Ref     string   `json:"ref,omitempty"`
	Commit  string   `json:"commit,omitempty"`
	Plugins []string `json:"plugins"`
	// Error says why the catalog cannot be read; Plugins is then empty.
	Error string `json:"error,omitempty"`
}

// Rows lists ms as rows, in order; never nil.
func Rows(ms []Marketplace) []Row {
	rows := []Row{}
	for _, m := range ms {
		r := Row{Name: m.Name, Source: m.Source, Ref: m.Ref, Commit: m.Commit, Plugins: []string{}}
		if m.Err != nil {
			r.Error = m.Err.Error()
		} else {
			for _, p := range m.Catalog.Plugins {
				r.Plugins = append(r.Plugins, p.Name)
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// WriteTable writes rows as a table: the name, the source with its ref and
// commit, and the plugins (or the error).
func WriteTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MARKETPLACE\tSOURCE\tPLUGINS")
	for _, r := range rows {
		src := r.Source
		if r.Ref != "" {
			src += "@" + r.Ref
		}
		if r.Commit != "" {
			src += " (commit " + r.Commit[:min(12, len(r.Commit))] + ")"
		}
		plugins := strings.Join(r.Plugins, ", ")
		if r.Error != "" {
			plugins = "error: " + r.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, src, plugins)
	}
	return tw.Flush()
}
