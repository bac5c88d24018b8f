package cratesio

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// ServeIndex returns an http.Handler serving a static index directory
// written by [Publish] (an [IndexServer] serves it on a port of its own,
// as `yolop registry serve` does). Files are served with
// http.ServeContent, so ETag/If-None-Match and Last-Modified/
// If-Modified-Since give 304s. A relative dl in config.json is rewritten
// to an absolute URL on the request's host, so cargo (which needs an
// absolute dl) can use the served index too. Paths are opened through an
// [os.Root]: nothing outside dir is reachable. Only GET and HEAD are
// allowed.
func ServeIndex(dir string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		rel := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		if rel == "" || !fs.ValidPath(rel) {
			http.NotFound(w, r)
			return
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			http.Error(w, "index directory unavailable", http.StatusInternalServerError)
			return
		}
		defer root.Close()
		f, err := root.Open(rel)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			http.NotFound(w, r)
			return
		}
		var content io.ReadSeeker = f
		etag := fmt.Sprintf(`"%x-%x"`, fi.Size(), fi.ModTime().UnixNano())
		if rel == "config.json" {
			b, err := readCapped(f, 1<<20, "config.json")
			if err != nil {
				http.Error(w, "config.json unreadable", http.StatusInternalServerError)
				return
			}
			b = rewriteDL(b, r)
			sum := sha256.Sum256(b)
			etag = `"` + hex.EncodeToString(sum[:8]) + `"`
			content = bytes.NewReader(b)
			w.Header().Set("Content-Type", "application/json")
		} else if path.Base(rel) == "download" {
			w.Header().Set("Content-Type", "application/gzip")
		}
		w.Header().Set("ETag", etag)
		http.ServeContent(w, r, path.Base(rel), fi.ModTime(), content)
	})
}

// rewriteDL makes a relative dl absolute for the host the request came to.
func rewriteDL(b []byte, r *http.Request) []byte {
	var raw map[string]any
	if json.Unmarshal(b, &raw) != nil {
		return b
	}
	dl, ok := raw["dl"].(string)
	if !ok || strings.Contains(dl, "://") {
		return b
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if strings.HasPrefix(dl, "/") {
		raw["dl"] = scheme + "://" + r.Host + dl
	} else {
		raw["dl"] = scheme + "://" + r.Host + "/" + strings.TrimPrefix(dl, "./")
	}
	out, err := json.MarshalIndent(raw, "", "  ")
	if err != nil {
		return b
	}
	return append(out, '\n')
}

// An IndexServer serves a static index directory over HTTP with
// [ServeIndex], as `yolop registry serve` does. Create one with
// [ListenIndex], then call [IndexServer.Serve] once.
type IndexServer struct {
	dir string
	ln  net.Listener
}

// ListenIndex checks that dir holds a static index (a config.json, as
// [Publish] writes) and listens on addr, a host:port; a port of 0 picks
// a free one, and an empty addr means "127.0.0.1:0". The index is not
// served until [IndexServer.Serve]; [IndexServer.Registry] already
// names it.
func ListenIndex(dir, addr string) (*IndexServer, error) {
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err != nil {
		return nil, fmt.Errorf("serve %s: not a sparse index (%w); create one with `yolop registry publish <file.crate> --index %s`", dir, err, dir)
	}
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve %s: %w; pick another --addr", dir, err)
	}
	return &IndexServer{dir: dir, ln: ln}, nil
}

// Registry returns the registry URL of the served index,
// "sparse+http://<host>:<port>/", for `yolop ext install --registry`.
func (s *IndexServer) Registry() string {
	return "sparse+http://" + s.ln.Addr().String() + "/"
}

// Serve serves the index until ctx is done, then shuts down, giving
// requests in flight up to 5 s to finish, and returns nil. It returns an
// error only when serving fails. The listener is closed when Serve
// returns.
func (s *IndexServer) Serve(ctx context.Context) error {
	srv := &http.Server{Handler: ServeIndex(s.dir), ReadHeaderTimeout: 10 * time.Second}
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		case <-stop:
		}
	}()
	defer func() { close(stop); <-stopped }()
	if err := srv.Serve(s.ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", s.dir, err)
	}
	return nil
}

// Close stops listening without serving, for an IndexServer whose Serve
// is never called.
func (s *IndexServer) Close() error { return s.ln.Close() }
