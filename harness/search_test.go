package harness_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"yolop.dev/harness"
)

// Search asks a registry's search API on 127.0.0.1 and keeps only the
// extensions; Text lays them out as a table, or says nothing matched.
func TestSearch(t *testing.T) {
	var base string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/config.json":
			fmt.Fprintf(w, `{"dl":"%s/dl","api":"%s"}`, base, base)
		case "/api/v1/crates":
			var hits []map[string]string
			if strings.Contains(r.URL.Query().Get("q"), "lsp") {
				hits = []map[string]string{
					{"name": "yolop-extension-lsp", "max_version": "0.3.1", "description": "Semantic code intelligence."},
					{"name": "lsp-server", "max_version": "0.7.0", "description": "not an extension"},
				}
			}
			json.NewEncoder(w).Encode(map[string]any{"crates": hits})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	base = srv.URL
	reg := "sparse+" + srv.URL + "/"

	ctx := context.Background()
	h, err := harness.Open(ctx, harness.Options{ConfigDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	r, err := h.Search(ctx, reg, "lsp", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 1 || r.Results[0].Extension != "lsp" || r.Term != "lsp" {
		t.Fatalf("results = %+v", r)
	}
	want := "EXTENSION  VERSION  DESCRIPTION\nlsp        0.3.1    Semantic code intelligence.\n"
	if got := r.Text(); got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}

	r, err = h.Search(ctx, reg, "nothing", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Text(); !strings.HasPrefix(got, `no extensions match "nothing" in `) || !strings.Contains(got, srv.URL) {
		t.Errorf("Text() of no results = %q", got)
	}
}
