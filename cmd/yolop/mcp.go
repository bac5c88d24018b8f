package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/spf13/cobra"

	"yolop.dev/mcp/gateway"
)

type mcpServeFlags struct {
	http        string
	token       string
	allowRemote bool
	exts        []string
}

func (a *app) mcpCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "MCP both ways: serve the enabled extensions to MCP clients",
	}
	var f mcpServeFlags
	serve := &cobra.Command{
		Use:   "serve",
		Short: "Serve the enabled extensions' tools to any MCP client (stdio, or streamable HTTP with --http)",
		Long: `Serve the tools of every enabled extension (plus --ext packages loaded in
place) as an MCP server, so Claude Code, goose or an IDE can call them:

  claude mcp add yolop -- yolop mcp serve

Over stdio by default. With --http ADDR it serves streamable HTTP at
http://ADDR/mcp; ADDR must be on loopback unless --allow-remote is given,
and then a bearer token is required (--token, or $YOLOP_MCP_TOKEN; one is
generated and printed to stderr when neither is set).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.mcpServe(cmd.Context(), f) },
	}
	serve.Flags().StringVar(&f.http, "http", "", "serve streamable HTTP on `ADDR` (e.g. 127.0.0.1:8765) instead of stdio")
	serve.Flags().StringVar(&f.token, "token", "", "require this bearer `TOKEN` over HTTP (default $YOLOP_MCP_TOKEN)")
	serve.Flags().BoolVar(&f.allowRemote, "allow-remote", false, "allow --http on a non-loopback address (a bearer token is then required)")
	serve.Flags().StringArrayVar(&f.exts, "ext", nil, "also serve the package in `DIR`, loaded in place (repeatable)")
	cmd.AddCommand(serve, a.mcpApproveCmd())
	return cmd
}

func (a *app) mcpServe(ctx context.Context, f mcpServeFlags) error {
	if f.token == "" {
		f.token = os.Getenv("YOLOP_MCP_TOKEN")
	}
	if f.http != "" {
		tok, generated, err := gateway.CheckListenAddr(f.http, f.allowRemote, f.token)
		if errors.Is(err, gateway.ErrRemoteNotAllowed) {
			return fmt.Errorf("--http %w; pass --allow-remote (a bearer token is then required) or bind 127.0.0.1", err)
		}
		if err != nil {
			return fmt.Errorf("--http %w", err)
		}
		if generated {
			fmt.Fprintf(a.stderr, "yolop mcp serve: bearer token for this server: %s\n", tok)
		}
		f.token = tok
	}
	h, err := a.harness()
	if err != nil {
		return err
	}
	o := gateway.HarnessOptions{Options: gateway.Options{Version: version, Logger: a.log}, InPlace: f.exts, Token: f.token,
		Warn: func(w string) { fmt.Fprintln(a.stderr, "warning:", w) }}
	if f.http != "" {
		if o.Listener, err = net.Listen("tcp", f.http); err != nil {
			return fmt.Errorf("yolop mcp serve: %w", err)
		}
		fmt.Fprintf(a.stderr, "yolop mcp serve: listening on http://%s/mcp\n", o.Listener.Addr())
	}
	if err := gateway.ServeHarness(ctx, h, o); err != nil {
		return fmt.Errorf("yolop mcp serve: %w", err)
	}
	return nil
}
