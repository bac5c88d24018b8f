package logfire

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/yep"
	"yolop.dev/extensions/logfire/otlptest"
)

// serveInMemory runs a Server over pipes and returns the host's side of
// the connection, and a function that ends the session (exit) and waits
// for ServeConn, flush included.
func serveInMemory(t *testing.T, s *Server) (*jsonrpc.Conn, func()) {
	t.Helper()
	serverIn, hostOut := io.Pipe()
	hostIn, serverOut := io.Pipe()
	conn := jsonrpc.NewConn(hostIn, hostOut, jsonrpc.Options{})
	done := make(chan error, 1)
	go func() {
		done <- s.ServeConn(context.Background(), serverIn, serverOut)
		serverOut.Close()
	}()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		conn.Notify(context.Background(), yep.MethodExit, yep.ExitParams{})
		hostOut.Close()
		if err := <-done; err != nil {
			t.Errorf("ServeConn: %v", err)
		}
		conn.Close()
		conn.Wait()
	}
	t.Cleanup(stop)
	return conn, stop
}

// TestServerInitialize: a bad endpoint fails initialize with a message
// that names the fix and never the token; a good one folds the events it
// is sent and flushes them when the host says exit.
func TestServerInitialize(t *testing.T) {
	const token = "tok-never-shown-91"
	env := func(k string) string {
		if k == TokenEnv {
			return token
		}
		return ""
	}
	var logs bytes.Buffer
	s := New(Options{Getenv: env, Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Trace})})
	conn, _ := serveInMemory(t, s)
	err := conn.Call(context.Background(), yep.MethodInitialize, yep.InitializeParams{
		ProtocolVersion: "1.0", Capabilities: []string{yep.CapTrace, yep.CapStatus}, Config: json.RawMessage(`{"endpoint":"ftp://example.com"}`),
	}, nil)
	if err == nil || !strings.Contains(err.Error(), "is not an http(s) URL") || !strings.Contains(err.Error(), EndpointEnv) {
		t.Errorf("initialize with a bad endpoint: %v", err)
	} else if strings.Contains(err.Error(), token) {
		t.Errorf("the error names the token: %v", err)
	}

	r := otlptest.New()
	defer r.Close()
	s = New(Options{Getenv: env, Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Trace})})
	conn, stop := serveInMemory(t, s)
	if err := conn.Call(context.Background(), yep.MethodInitialize, yep.InitializeParams{
		ProtocolVersion: "1.0", Capabilities: []string{yep.CapTrace, yep.CapStatus}, Config: json.RawMessage(`{"endpoint":"` + r.URL() + `"}`),
	}, nil); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	conn.Notify(context.Background(), yep.MethodInitialized, struct{}{})
	for _, e := range []yep.TraceEventParams{
		ev(yep.TraceTurnStarted, trace1, turn1, "", "1", nil),
		ev(yep.TraceToolStarted, trace1, tool1, turn1, "1", yep.ToolStartedData{Tool: "echo"}),
	} {
		if err := conn.Notify(context.Background(), yep.MethodTraceEvent, e); err != nil {
			t.Fatal(err)
		}
	}
	stop() // the connection ends with both spans open
	spans := r.Spans()
	if len(spans) != 2 {
		t.Fatalf("flushed %d spans at exit, want the 2 open ones:\n%s", len(spans), otlptest.Tree(spans))
	}
	for _, sp := range spans {
		if sp.StatusCode != "Error" || !strings.Contains(sp.StatusMessage, "the connection to the host ended") {
			t.Errorf("span %s left open: status %s %q", sp.Name, sp.StatusCode, sp.StatusMessage)
		}
	}
	if !strings.Contains(logs.String(), "exported=2") {
		t.Errorf("no exit summary in the logs:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), token) {
		t.Errorf("the token is in the logs:\n%s", logs.String())
	}
}
