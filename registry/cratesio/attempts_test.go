package cratesio

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestOneAttemptIsSingular: with retries off, a failed request reports
// "1 attempt", for a server error and for a registry that refuses
// connections.
func TestOneAttemptIsSingular(t *testing.T) {
	t.Run("HTTP 500", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}))
		defer srv.Close()
		opts := fastOptions("sparse+" + srv.URL + "/")
		opts.Retries = -1
		_, err := NewClient(opts).Config(context.Background())
		if err == nil || !strings.Contains(err.Error(), "failed after 1 attempt: HTTP 500") {
			t.Errorf("err = %v; want \"failed after 1 attempt: HTTP 500\"", err)
		}
	})
	t.Run("refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		host := ln.Addr().String()
		ln.Close() // nothing listens there now
		opts := fastOptions("sparse+http://" + host + "/")
		opts.Retries = -1
		_, err = NewClient(opts).Config(context.Background())
		if err == nil || !strings.Contains(err.Error(), ", 1 attempt)") {
			t.Errorf("err = %v; want \", 1 attempt)\"", err)
		}
	})
}
