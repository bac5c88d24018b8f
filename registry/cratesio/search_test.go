package cratesio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// searchRegistry serves a crates.io-compatible registry on 127.0.0.1: a
// config.json naming its API, and /api/v1/crates?q= matching crate names
// the way crates.io does (every word of q in the name).
func searchRegistry(t *testing.T, withAPI bool) (reg string, queries *[]string) {
	t.Helper()
	crates := []map[string]any{
		{"name": "yolop-extension-lsp", "max_version": "0.3.1", "description": " Semantic code intelligence. "},
		{"name": "yolop-extension-logfire", "max_version": "0.1.0", "description": "Traces to Logfire."},
		{"name": "yolop-extension-lsp-extra", "max_version": "1.0.0"},
		{"name": "lsp-types", "max_version": "0.97.0", "description": "not an extension"},
	}
	queries = new([]string)
	var base string
	reg, srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/config.json":
			if withAPI {
				fmt.Fprintf(w, `{"dl":"%s/dl","api":"%s"}`, base, base)
			} else {
				fmt.Fprintf(w, `{"dl":"%s/dl"}`, base)
			}
		case "/api/v1/crates":
			q := r.URL.Query().Get("q")
			*queries = append(*queries, q)
			var hits []map[string]any
			for _, c := range crates {
				all := true
				for _, word := range strings.Fields(q) {
					all = all && strings.Contains(c["name"].(string), word)
				}
				if all {
					hits = append(hits, c)
				}
			}
			json.NewEncoder(w).Encode(map[string]any{"crates": hits, "meta": map[string]any{"total": len(hits)}})
		default:
			http.NotFound(w, r)
		}
	}))
	base = srv.URL
	return reg, queries
}

func TestSearch(t *testing.T) {
	reg, queries := searchRegistry(t, true)
	c := NewClient(fastOptions(reg))
	got, err := c.Search(context.Background(), "lsp", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []SearchResult{
		{Name: "yolop-extension-lsp", Extension: "lsp", Version: "0.3.1", Description: "Semantic code intelligence."},
		{Name: "yolop-extension-lsp-extra", Extension: "lsp-extra", Version: "1.0.0"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("search lsp = %+v, want %+v", got, want)
	}
	if len(*queries) != 1 || (*queries)[0] != "yolop-extension- lsp" {
		t.Fatalf("queries = %q", *queries)
	}
	if got, _ := c.Search(context.Background(), "", 1); len(got) != 1 {
		t.Fatalf("limit 1 = %+v", got)
	}
	if got, err := c.Search(context.Background(), "nothing-like-it", 0); err != nil || len(got) != 0 {
		t.Fatalf("no match = %+v, %v", got, err)
	}
}

func TestSearchWithoutAnAPI(t *testing.T) {
	reg, _ := searchRegistry(t, false)
	_, err := NewClient(fastOptions(reg)).Search(context.Background(), "lsp", 0)
	if !errors.Is(err, ErrNoAPI) || !strings.Contains(err.Error(), `names no "api"`) {
		t.Fatalf("search of a static index = %v", err)
	}
}
