package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	mcpclient "yolop.dev/mcp/client"
)

// shoutServer is a raw MCP server over stdio: it answers initialize,
// tools/list with one tool, shout, and tools/call with the text upper-cased.
const shoutServer = `
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    meth, res = m.get("method"), {}
    if meth == "initialize":
        res = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
               "serverInfo": {"name": "shout", "version": "1.0.0"}}
    elif meth == "tools/list":
        res = {"tools": [{"name": "shout", "description": "Upper-cases text.",
                          "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]}
    elif meth == "tools/call":
        res = {"content": [{"type": "text", "text": m["params"]["arguments"]["text"].upper()}]}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": res}) + "\n")
    sys.stdout.flush()
`

// TestMinimalHostMCP runs minihost in a workspace whose .mcp.json names a
// real MCP server: once the file is approved, the server's tool is a tool
// of minihost's session; before, nothing starts and the call fails.
func TestMinimalHostMCP(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is needed for the raw MCP server: %v", err)
	}
	ctx := context.Background()
	cfg, ws := t.TempDir(), t.TempDir()
	script := filepath.Join(ws, "shout.py")
	if err := os.WriteFile(script, []byte(shoutServer), 0o644); err != nil {
		t.Fatal(err)
	}
	mcpJSON := `{"mcpServers":{"shout":{"command":"` + python + `","args":["` + script + `"]}}}`
	if err := os.WriteFile(filepath.Join(ws, mcpclient.FileName), []byte(mcpJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "minihost")
	goBuild(t, bin, ".")
	minihost := func() (string, error) {
		cmd := exec.Command(bin, mcpclient.ToolName("shout", "shout"), `{"text":"hi from mcp"}`)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "YOLOP_CONFIG_DIR="+cfg)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	// Not approved: nobody is asked (minihost has no terminal), nothing
	// starts.
	if out, err := minihost(); err == nil {
		t.Fatalf("minihost called the tool of an unapproved .mcp.json:\n%s", out)
	}

	rev, err := mcpclient.ReviewFile(filepath.Join(ws, mcpclient.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := mcpclient.NewApprovals(cfg).Approve(ctx, ws, rev); err != nil {
		t.Fatal(err)
	}
	out, err := minihost()
	if err != nil {
		t.Fatalf("minihost with the approved .mcp.json: %v\n%s", err, out)
	}
	if want := "HI FROM MCP\n"; out != want {
		t.Fatalf("minihost printed %q, want %q", out, want)
	}
}

func goBuild(t *testing.T, out, pkg string) {
	t.Helper()
	if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
}
