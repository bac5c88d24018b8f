package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A crates.io-compatible registry on 127.0.0.1 with a search API.
func searchServer(t *testing.T, withAPI bool) string {
	t.Helper()
	var base string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/config.json":
			if withAPI {
				fmt.Fprintf(w, `{"dl":"%s/dl","api":"%s"}`, base, base)
			} else {
				fmt.Fprintf(w, `{"dl":"%s/dl"}`, base)
			}
		case "/api/v1/crates":
			var hits []map[string]string
			for _, c := range []map[string]string{
				{"name": "yolop-extension-lsp", "max_version": "0.3.1", "description": "Semantic code intelligence."},
				{"name": "lsp-server", "max_version": "0.7.0", "description": "not an extension"},
			} {
				if strings.Contains(c["name"], strings.Fields(r.URL.Query().Get("q"))[len(strings.Fields(r.URL.Query().Get("q")))-1]) {
					hits = append(hits, c)
				}
			}
			json.NewEncoder(w).Encode(map[string]any{"crates": hits})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	base = srv.URL
	return "sparse+" + srv.URL + "/"
}

func TestExtSearch(t *testing.T) {
	isolate(t)
	reg := searchServer(t, true)
	out, errOut, code := cli(t, "", "ext", "search", "lsp", "--registry", reg)
	if code != 0 {
		t.Fatalf("search: %d %s", code, errOut)
	}
	mustContain(t, "search", out, "EXTENSION", "lsp", "0.3.1", "Semantic code intelligence.", "yolop ext install <extension> --registry "+reg)
	if strings.Contains(out, "lsp-server") {
		t.Errorf("a crate that is not an extension was listed:\n%s", out)
	}
	out, _, _ = cli(t, "", "ext", "search", "lsp", "--registry", reg, "--json")
	var res []struct{ Name, Extension, Version string }
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res) != 1 || res[0].Extension != "lsp" {
		t.Fatalf("--json = %s (%v)", out, err)
	}
	_, errOut, code = cli(t, "", "ext", "search", "lsp", "--registry", searchServer(t, false))
	if code == 0 || !strings.Contains(errOut, "no search API") {
		t.Fatalf("a registry without an API: %d %s", code, errOut)
	}
}
