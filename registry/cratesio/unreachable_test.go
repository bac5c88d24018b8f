package cratesio

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// TestUnreachableRegistry: a registry whose port refuses connections, or
// whose name does not resolve, is reported as "cannot reach <host>:
// <cause>", never as an invalid config.json, and the DNS answer is not
// retried.
func TestUnreachableRegistry(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		host := ln.Addr().String()
		ln.Close() // nothing listens there now
		opts := fastOptions("sparse+http://" + host + "/")
		opts.Retries = 1
		_, err = NewClient(opts).Config(context.Background())
		checkUnreachable(t, err, "cannot reach "+host+": ", "connection refused", "2 attempts")
	})
	t.Run("dns", func(t *testing.T) {
		ns := nxdomainServer(t)
		var queries atomic.Int64
		opts := fastOptions("sparse+http://registry.example.invalid/")
		opts.Retries = 2
		dialer := &net.Dialer{Resolver: &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			queries.Add(1)
			var d net.Dialer
			return d.DialContext(ctx, "udp", ns)
		}}}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.DialContext = dialer.DialContext
		opts.HTTPClient = &http.Client{Transport: tr}
		_, err := NewClient(opts).Config(context.Background())
		checkUnreachable(t, err, "cannot reach registry.example.invalid: ", "no such host")
		if strings.Contains(err.Error(), "attempts") {
			t.Errorf("a name that does not resolve was retried: %v", err)
		}
		if queries.Load() == 0 {
			t.Error("the test's name server was never asked")
		}
	})
}

func checkUnreachable(t *testing.T, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("Config succeeded against an unreachable registry")
	}
	if !errors.Is(err, ErrUnreachable) || !errors.Is(err, ErrHTTP) {
		t.Errorf("err = %v, want ErrUnreachable and ErrHTTP", err)
	}
	if errors.Is(err, ErrConfig) || strings.Contains(err.Error(), "config.json:") || strings.Contains(err.Error(), "invalid registry") {
		t.Errorf("an unreachable registry reads as a bad config: %v", err)
	}
	if !strings.HasPrefix(err.Error(), wants[0]) {
		t.Errorf("err = %q, want it to start %q", err, wants[0])
	}
	for _, w := range append(wants[1:], "check your network") {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("err = %q, want %q in it", err, w)
		}
	}
}

// nxdomainServer is a name server on loopback UDP that answers every
// query "no such name" (RCODE 3), as a resolver does for a name that does
// not exist. It returns its address.
func nxdomainServer(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { pc.Close(); <-done })
	go func() {
		defer close(done)
		buf := make([]byte, 512)
		for {
			n, addr, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if n < 12 {
				continue
			}
			resp := append([]byte(nil), buf[:n]...)
			resp[2] = 0x80 | (buf[2] & 0x79) // QR, the query's opcode and RD
			resp[3] = 0x80 | 3               // RA, NXDOMAIN
			// One question, no answers, authority or additional records.
			resp[6], resp[7], resp[8], resp[9], resp[10], resp[11] = 0, 0, 0, 0, 0, 0
			pc.WriteTo(resp, addr)
		}
	}()
	return pc.LocalAddr().String()
}
