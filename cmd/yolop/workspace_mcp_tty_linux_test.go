//go:build linux

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// On a terminal the first session in a workspace shows the servers of its
// .mcp.json and asks; nothing starts before the answer, and a yes is
// pinned so the next session does not ask.
func TestWorkspaceMCPAskedOnATerminal(t *testing.T) {
	isolate(t)
	srv := buildMCPTestServer(t)
	ws := t.TempDir()
	marker := filepath.Join(ws, "started")
	// The server marks that it ran, then serves MCP.
	writeWorkspaceMCP(t, ws, map[string]any{"repo": map[string]any{"command": "sh", "args": []string{"-c", `touch "$0" && exec "$1"`, marker, srv}}})

	session := func(answer string) string {
		t.Helper()
		ptmx, tty := openPTY(t)
		var screen syncBuf
		changed := make(chan struct{}, 1) // a value after each read
		go func() {
			b := make([]byte, 4096)
			for {
				n, err := ptmx.Read(b)
				screen.Write(b[:n])
				select {
				case changed <- struct{}{}:
				default:
				}
				if err != nil {
					return
				}
			}
		}()
		var errb syncBuf
		done := make(chan int, 1)
		go func() {
			done <- run(context.Background(), []string{"session", "--plain", "--no-enabled", "--workspace", ws}, tty, tty, &errb)
		}()
		waitScreen := func(want string) {
			t.Helper()
			hung := time.After(2 * time.Minute) // ends a hung test; measures nothing
			for !strings.Contains(screen.String(), want) {
				select {
				case <-changed:
				case <-hung:
					t.Fatalf("screen never showed %q:\n%q\nstderr: %s", want, screen.String(), errb.String())
				}
			}
		}
		if answer != "" {
			waitScreen("Start these MCP servers? [y/N]")
			if _, err := os.Stat(marker); err == nil {
				t.Fatalf("the workspace server started before the answer:\n%q", screen.String())
			}
			ptmx.Write([]byte(answer + "\r"))
		}
		waitScreen("yolop> ")
		ptmx.Write([]byte(`/call mcp__repo__echo {"text":"served"}` + "\r"))
		waitScreen("\r\nserved\r\n")
		ptmx.Write([]byte("/quit\r"))
		select {
		case code := <-done:
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
		case <-time.After(2 * time.Minute):
			t.Fatalf("the session did not end:\n%q", screen.String())
		}
		return screen.String()
	}

	screen := session("y")
	for _, want := range []string{"names 1 MCP server(s)", "repo: runs sh -c"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the question lacks %q:\n%q", want, screen)
		}
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the approved server did not run: %v", err)
	}
	// Pinned: the next session starts it without asking.
	if screen := session(""); strings.Contains(screen, "[y/N]") {
		t.Errorf("an approved workspace was asked about again:\n%q", screen)
	}
}
