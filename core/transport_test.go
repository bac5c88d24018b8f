package core_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"yolop.dev/core"
	"yolop.dev/core/transporttest"
)

// Transports starts each server with the transport its spec names, stdio
// when it names none, and refuses a transport the host lacks by name.
func TestTransportsRouteBySpec(t *testing.T) {
	started := map[string]int{}
	tr := func(name string) core.Transport {
		return &countingTransport{name: name, started: started, inner: &transporttest.Transport{Servers: map[string]transporttest.Server{
			"x": func(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
				_, err := io.Copy(io.Discard, stdin)
				return err
			},
		}}}
	}
	ts := core.Transports{core.TransportStdio: tr("stdio"), core.TransportWASM: tr("wasm")}
	for _, spec := range []core.ServerSpec{{Name: "x"}, {Name: "x", Transport: "stdio"}, {Name: "x", Transport: "wasm"}} {
		inst, err := ts.Start(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		inst.Kill()
	}
	if started["stdio"] != 2 || started["wasm"] != 1 {
		t.Fatalf("started %v; want 2 over stdio (named and default) and 1 over wasm", started)
	}
	_, err := ts.Start(context.Background(), core.ServerSpec{Name: "x", Transport: core.TransportGoPlugin})
	if !errors.Is(err, core.ErrTransportUnavailable) || !strings.Contains(err.Error(), `extension "x" runs over the go-plugin transport`) || !strings.Contains(err.Error(), "stdio, wasm") {
		t.Fatalf("an unavailable transport: %v", err)
	}
}

type countingTransport struct {
	name    string
	started map[string]int
	inner   core.Transport
}

func (c *countingTransport) Start(ctx context.Context, spec core.ServerSpec) (core.Instance, error) {
	c.started[c.name]++
	return c.inner.Start(ctx, spec)
}

// TestExpandSandbox: a workspace path follows the workspace given at each
// start, is dropped when there is none, and the grant's own rules are not
// changed by an expansion.
func TestExpandSandbox(t *testing.T) {
	c := &core.Confinement{
		Paths:   []core.ConfinedPath{{Path: core.WorkspaceVar + "/src", Write: true}, {Path: "/pkg"}},
		Connect: []uint16{443},
	}
	got := core.ExpandSandbox(c, "/w")
	want := []core.ConfinedPath{{Path: "/w/src", Write: true}, {Path: "/pkg"}}
	if !slices.Equal(got.Paths, want) || !slices.Equal(got.Connect, []uint16{443}) {
		t.Fatalf("expanded = %+v", got)
	}
	got.Connect[0] = 1
	if c.Paths[0].Path != core.WorkspaceVar+"/src" || c.Connect[0] != 443 {
		t.Fatalf("the grant's rules changed: %+v", c)
	}
	if none := core.ExpandSandbox(c, ""); len(none.Paths) != 1 || none.Paths[0].Path != "/pkg" {
		t.Fatalf("without a workspace = %+v", none.Paths)
	}
	if core.ExpandSandbox(nil, "/w") != nil {
		t.Fatal("nil confinement expanded to a value")
	}
}
