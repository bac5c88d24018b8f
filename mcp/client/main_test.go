package client_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/host"
	"yolop.dev/mcp/client"
	"yolop.dev/mcp/internal/testpkg"
	"yolop.dev/transport/stdio"
)

func TestMain(m *testing.M) {
	cleanup, err := testpkg.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

func bin(name string) string { return testpkg.Bin(name) }

func everythingJS(t *testing.T) string { return testpkg.EverythingJS(t) }

func writePackage(t *testing.T, env map[string]string, servers []map[string]any) host.Grant {
	return testpkg.TestExt(t, env, servers)
}

type fixture struct {
	s   *host.Session
	mcp *client.Client
}

// newSession runs a session over grants with an MCP client over servers.
func newSession(t *testing.T, o client.Options, grants ...host.Grant) fixture {
	t.Helper()
	tr := stdio.New(stdio.Options{Logger: hclog.NewNullLogger()})
	o.Transport = tr
	c := client.New(o)
	s := host.NewSession(host.SessionOptions{Grants: grants, Transport: tr, Contributed: []host.ContributedTools{c}})
	t.Cleanup(s.Close)
	if err := s.Start(context.Background()); err != nil {
		t.Logf("start: %v", err)
	}
	return fixture{s, c}
}

func toolNames(s *host.Session) map[string]host.ToolInfo {
	out := map[string]host.ToolInfo{}
	for _, t := range s.Tools() {
		out[t.Name] = t
	}
	return out
}
