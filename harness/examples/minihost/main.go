// Command minihost is a custom yolop host in one screen: it opens the
// config directory (settings, secrets, the installed extensions), starts a
// session over the enabled extensions and the MCP servers they contribute
// or the current directory's approved .mcp.json names, and runs one tool
// call, printing its streamed updates and its result.
//
//	minihost <tool> [json-args]
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/harness"
	mcpclient "yolop.dev/mcp/client"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:]))
}

func run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: minihost <tool> [json-args]")
		return 2
	}
	call := json.RawMessage(`{}`)
	if len(args) > 1 {
		call = json.RawMessage(args[1])
	}
	h, err := harness.Open(ctx, harness.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "minihost:", err)
		return 1
	}
	ws, _ := os.Getwd()
	// No one to ask: only an approved .mcp.json starts its servers
	// (approve it with `yolop mcp approve`).
	mcp := mcpclient.ForHarness(ctx, h, ws, nil)
	s, warnings := h.NewSession(ctx, harness.SessionOptions{WorkspaceRoot: ws, Contributed: []host.ContributedTools{mcp}})
	defer s.Close()
	_ = s.Start(ctx) // failures are in s.Stats(); the call below reports its own
	for _, w := range append(warnings, mcp.Warnings()...) {
		fmt.Fprintln(os.Stderr, "warning:", w)
	}
	res, err := s.CallTool(ctx, args[0], "call-1", call, func(u yep.ToolUpdateParams) { fmt.Println("update:", u.Output) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "minihost:", err)
		return 1
	}
	fmt.Println(res.Output)
	return 0
}
