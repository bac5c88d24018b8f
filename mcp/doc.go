// Package mcp is the root of yolop's MCP module: MCP both ways on the
// official go-sdk (github.com/modelcontextprotocol/go-sdk), kept out of
// core so core stays light.
//
//   - [yolop.dev/mcp/client] is the MCP client path of the host: the
//     servers a workspace's .mcp.json names and those enabled extensions
//     contribute, connected over stdio or streamable HTTP and served to a
//     session as tools named mcp__<server>__<tool>, through the
//     [yolop.dev/core/host.ContributedTools] seam.
//   - [yolop.dev/mcp/gateway] is the other direction: a session's
//     extension tools served to any MCP client (`yolop mcp serve`).
package mcp
