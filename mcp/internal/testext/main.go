// Command testext is a YEP extension for the mcp module's tests that
// contributes MCP servers, as its environment says:
//
//   - MCPTEST_SERVER=<path>: "go", the go-sdk test server over stdio;
//   - MCPTEST_HTTP=1: "web", the go-sdk test server it hosts itself on
//     http://127.0.0.1:<port>/mcp, requiring "Authorization: Bearer
//     ${TESTEXT_TOKEN}" (the header it declares, which the host expands
//     from the extension's env);
//   - MCPTEST_EVERYTHING=<index.js>: "everything" (server-everything over
//     stdio) and "everything-http" (server-everything's streamable HTTP,
//     a process it owns, on MCPTEST_EVERYTHING_PORT — the port its
//     sandbox lets it bind and connect to — or else a port it picks);
//   - MCPTEST_WIDEN=1: "go" declared as a URL and an undeclared "extra",
//     which the host must refuse;
//   - MCPTEST_NAMES=<JSON array>: "go" runs with -names, serving only echo
//     tools of those names;
//   - MCPTEST_EXTRA_TOOL=<name>: one more tool of that name, answering
//     "extension tool <name>".
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
	"yolop.dev/mcp/internal/testserver"
)

func main() {
	s := sdk.NewServer(sdk.Info{Name: "testext", Version: "0.1.0", UIAsk: true}, sdk.Options{})
	s.Tool("ping", func(context.Context, *sdk.ToolCall) (yep.ToolResult, error) {
		return yep.ToolResult{Output: "pong"}, nil
	})
	s.Tool("ask", func(ctx context.Context, _ *sdk.ToolCall) (yep.ToolResult, error) {
		a, err := s.Ask(ctx, yep.UIAskParams{Prompt: "Your name?", Options: []string{"Ada", "Grace"}})
		if err != nil {
			return yep.ToolResult{}, err
		}
		if a.Cancelled {
			return yep.ToolResult{Output: "cancelled"}, nil
		}
		return yep.ToolResult{Output: "hello, " + a.Answer}, nil
	})
	if n := os.Getenv("MCPTEST_EXTRA_TOOL"); n != "" {
		s.Tool(n, func(context.Context, *sdk.ToolCall) (yep.ToolResult, error) {
			return yep.ToolResult{Output: "extension tool " + n}, nil
		})
	}
	if p := os.Getenv("MCPTEST_SERVER"); p != "" {
		if os.Getenv("MCPTEST_WIDEN") != "" {
			s.MCPServer(yep.MCPServerDecl{Name: "go", Type: yep.MCPHTTP, URL: "http://127.0.0.1:1/mcp"})
			s.MCPServer(yep.MCPServerDecl{Name: "extra", Command: p})
		} else if names := os.Getenv("MCPTEST_NAMES"); names != "" {
			s.MCPServer(yep.MCPServerDecl{Name: "go", Command: p, Args: []string{"-names", names}})
		} else {
			// WRAPPED_TOKEN comes from the manifest's env for this server.
			s.MCPServer(yep.MCPServerDecl{Name: "go", Command: p})
		}
	}
	if os.Getenv("MCPTEST_HTTP") != "" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fail(err)
		}
		want := "Bearer " + os.Getenv("TESTEXT_TOKEN")
		h := sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return testserver.New("") }, nil)
		go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != want {
				http.Error(w, "bad token", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		}))
		s.MCPServer(yep.MCPServerDecl{Name: "web", Type: yep.MCPHTTP, URL: fmt.Sprintf("http://%s/mcp", ln.Addr()),
			Headers: map[string]string{"Authorization": "Bearer ${TESTEXT_TOKEN}"}})
	}
	if js := os.Getenv("MCPTEST_EVERYTHING"); js != "" {
		s.MCPServer(yep.MCPServerDecl{Name: "everything", Command: "node", Args: []string{js, "stdio"}})
		port, err := strconv.Atoi(os.Getenv("MCPTEST_EVERYTHING_PORT"))
		if err != nil {
			port = freePort()
		}
		cmd := exec.Command("node", js, "streamableHttp")
		cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			fail(err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		for deadline := time.Now().Add(60 * time.Second); ; {
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				fail(fmt.Errorf("server-everything did not listen on %s", addr))
			}
			time.Sleep(50 * time.Millisecond)
		}
		defer cmd.Process.Kill()
		s.MCPServer(yep.MCPServerDecl{Name: "everything-http", Type: yep.MCPHTTP, URL: "http://" + addr + "/mcp"})
	}
	if err := s.Serve(context.Background()); err != nil {
		fail(err)
	}
}

func freePort() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "testext:", err)
	os.Exit(1)
}
