package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// ErrRemoteNotAllowed is wrapped by [CheckListenAddr]'s error for an
// address that is not loopback when remote clients were not allowed.
var ErrRemoteNotAllowed = errors.New("not a loopback address")

// CheckListenAddr applies the gateway's network policy to addr
// (HOST:PORT) before it is served over HTTP: a loopback address is served
// as asked; any other only with allowRemote, and then never without a
// bearer token — when token is empty one is generated and returned with
// generated set, for the caller to show the user.
func CheckListenAddr(addr string, allowRemote bool, token string) (tok string, generated bool, err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", false, fmt.Errorf("%q: want HOST:PORT: %w", addr, err)
	}
	ip := net.ParseIP(host)
	if host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return token, false, nil
	}
	if !allowRemote {
		return "", false, fmt.Errorf("%s is %w", addr, ErrRemoteNotAllowed)
	}
	if token != "" {
		return token, false, nil
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", false, fmt.Errorf("generating a bearer token: %w", err)
	}
	return hex.EncodeToString(b), true, nil
}

// ServeHTTPOn serves the gateway's streamable HTTP endpoint at /mcp on ln,
// behind token when it is not empty, until ctx ends; then it shuts the
// server down, giving open requests five seconds.
func (g *Gateway) ServeHTTPOn(ctx context.Context, ln net.Listener, token string) error {
	mux := http.NewServeMux()
	mux.Handle("/mcp", g.HTTPHandler(token))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-stopped
		return nil
	}
	return err
}
