// Command gatewaycmd serves the package in the directory its argument
// names through the MCP gateway over stdio, as `yolop mcp serve --ext DIR
// --no-enabled` does, for the gateway benchmark.
package main

import (
	"context"
	"fmt"
	"os"

	"yolop.dev/core/host"
	"yolop.dev/mcp/gateway"
	"yolop.dev/packaging"
	"yolop.dev/packaging/hostgrant"
	"yolop.dev/transport/stdio"
)

func main() {
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "gatewaycmd:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	m, err := packaging.Load(dir)
	if err != nil {
		return err
	}
	g, err := hostgrant.FromManifest(m)
	if err != nil {
		return err
	}
	gw := gateway.New(gateway.Options{})
	defer gw.Close()
	s := host.NewSession(host.SessionOptions{Grants: []host.Grant{g}, Transport: stdio.New(stdio.Options{}), Ask: gw})
	defer s.Close()
	if err := s.Start(context.Background()); err != nil {
		return err
	}
	gw.Attach(s)
	return gw.ServeStdio(context.Background())
}
