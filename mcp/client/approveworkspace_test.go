package client_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/mcp/client"
)

// ApproveWorkspace shows the proposal and pins the approval when confirm
// accepts, under the workspace's absolute path: an empty workspace is the
// current directory and a relative one is resolved, so a second run from
// elsewhere finds it approved. A refusal pins nothing.
func TestApproveWorkspace(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	writeMCP(t, ws, `{"mcpServers":{"files":{"command":"mcp-files","args":["--root","."]}}}`)
	approvals := client.NewApprovals(filepath.Join(root, "config"))
	t.Chdir(ws)

	var out strings.Builder
	declined := errors.New("declined")
	if err := client.ApproveWorkspace(ctx, "", approvals, &out, func() error { return declined }); !errors.Is(err, declined) {
		t.Fatalf("declined: %v", err)
	}
	if !strings.Contains(out.String(), "mcp-files") {
		t.Fatalf("the proposal was not shown:\n%s", out.String())
	}
	if prev, err := approvals.Lookup(ws); err != nil || prev != nil {
		t.Fatalf("a declined approval was pinned: %v, %v", prev, err)
	}

	out.Reset()
	if err := client.ApproveWorkspace(ctx, "", approvals, &out, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "sessions in "+ws+" start its servers") {
		t.Fatalf("approval message does not name the workspace's absolute path:\n%s", out.String())
	}
	if prev, err := approvals.Lookup(ws); err != nil || prev == nil {
		t.Fatalf("not pinned: %v, %v", prev, err)
	}

	t.Chdir(root)
	out.Reset()
	if err := client.ApproveWorkspace(ctx, "ws", approvals, &out, func() error { t.Fatal("asked again"); return nil }); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), filepath.Join(ws, client.FileName)+" is already approved") {
		t.Fatalf("relative workspace:\n%s", out.String())
	}
}
