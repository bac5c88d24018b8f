// Command mcptestserver runs the test MCP server over stdio. -mode hang
// never answers initialize; -mode garbage writes non-JSON; -mode exit
// writes to stderr and exits 3 after initialize. -names '["a","b"]' serves
// only echo tools named as the JSON array says.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"yolop.dev/mcp/internal/testserver"
)

func main() {
	mode := flag.String("mode", "", "hang | garbage | crash")
	names := flag.String("names", "", "serve only echo tools with these names (a JSON array)")
	flag.Parse()
	srv := testserver.New(os.Getenv("MCPTEST_CANCEL_MARK"))
	if *names != "" {
		var ns []string
		if err := json.Unmarshal([]byte(*names), &ns); err != nil {
			fmt.Fprintln(os.Stderr, "-names:", err)
			os.Exit(2)
		}
		srv = testserver.Named(ns)
	}
	switch *mode {
	case "hang":
		testserver.Hang()
		return
	case "garbage":
		fmt.Println("this is not JSON-RPC")
		fmt.Println("{\"jsonrpc\":\"2.0\",\"id\":\"nope\"")
		fmt.Fprintln(os.Stderr, "garbage server wrote garbage")
		testserver.Hang()
		return
	case "crash":
		fmt.Fprintln(os.Stderr, "crash server: giving up at once")
		os.Exit(3)
	}
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
