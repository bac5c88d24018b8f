package cratesio

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestServeIndex(t *testing.T) {
	indexDir := t.TempDir()
	publishCrate(t, indexDir, "foo", "1.0.0", map[string]string{"a": "1"})
	os.WriteFile(filepath.Join(filepath.Dir(indexDir), "secret"), []byte("s"), 0o644)
	_, srv := serve(t, ServeIndex(indexDir))
	get := func(path string, hdr map[string]string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := get("/config.json", nil)
	if resp.StatusCode != 200 || !strings.Contains(body, `"dl": "`+srv.URL+`/crates/{crate}/{version}/download"`) {
		t.Errorf("config.json: %d %s", resp.StatusCode, body)
	}
	etag := resp.Header.Get("ETag")
	if resp, _ := get("/config.json", map[string]string{"If-None-Match": etag}); resp.StatusCode != http.StatusNotModified {
		t.Errorf("config.json revalidation: %d", resp.StatusCode)
	}
	resp, body = get("/3/f/foo", nil)
	if resp.StatusCode != 200 || !strings.Contains(body, `"vers":"1.0.0"`) || resp.Header.Get("ETag") == "" || resp.Header.Get("Last-Modified") == "" {
		t.Errorf("index file: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	if resp, _ := get("/3/f/foo", map[string]string{"If-None-Match": resp.Header.Get("ETag")}); resp.StatusCode != http.StatusNotModified {
		t.Errorf("index revalidation: %d", resp.StatusCode)
	}
	for _, p := range []string{"/../secret", "/%2e%2e/secret", "/crates", "/", "/nope"} {
		if resp, _ := get(p, nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", p, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/config.json", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST = %d", resp.StatusCode)
	}
}

// TestServeRefusesANonIndex: a directory without config.json is not
// served, and the error says how to make it an index.
func TestServeRefusesANonIndex(t *testing.T) {
	dir := t.TempDir()
	s, err := ListenIndex(dir, "")
	if err == nil {
		s.Close()
		t.Fatal("ListenIndex of an empty directory succeeded")
	}
	for _, want := range []string{"not a sparse index", "yolop registry publish", dir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// TestIndexServerServesUntilCancelled: ListenIndex names the registry
// before serving, Serve answers on it with the rewritten dl, and
// cancelling the context shuts it down cleanly (no error, no goroutine
// left: TestMain checks for leaks).
func TestIndexServerServesUntilCancelled(t *testing.T) {
	indexDir := t.TempDir()
	publishCrate(t, indexDir, "foo", "1.0.0", map[string]string{"a": "1"})
	s, err := ListenIndex(indexDir, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reg := s.Registry()
	if !strings.HasPrefix(reg, "sparse+http://127.0.0.1:") || !strings.HasSuffix(reg, "/") {
		t.Fatalf("Registry() = %q", reg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	base := strings.TrimPrefix(reg, "sparse+")
	resp, err := http.Get(base + "config.json")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"dl": "`+strings.TrimSuffix(base, "/")+`/crates/{crate}/{version}/download"`) {
		t.Errorf("config.json: %d %s", resp.StatusCode, body)
	}
	http.DefaultClient.CloseIdleConnections()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context was cancelled")
	}
	if _, err := http.Get(base + "config.json"); err == nil {
		t.Error("the index is still served after Serve returned")
	}
}
