// Command benchext is a capability server for the agent's step
// benchmark: it serves the tools <prefix>_t00 … <prefix>_t<n-1>, each
// answering "ok <name>", for the prefix and count its arguments give.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"

	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: benchext <prefix> <tools>")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchext:", err)
		os.Exit(2)
	}
	s := sdk.NewServer(sdk.Info{Name: os.Args[1], Version: "0.1.0"}, sdk.Options{})
	for i := range n {
		name := fmt.Sprintf("%s_t%02d", os.Args[1], i)
		s.Tool(name, func(ctx context.Context, c *sdk.ToolCall) (yep.ToolResult, error) {
			return yep.ToolResult{Output: "ok " + name}, nil
		})
	}
	if err := s.Serve(context.Background()); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "benchext:", err)
		os.Exit(1)
	}
}
