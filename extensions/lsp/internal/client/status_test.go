package client

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// statusServer is a raw LSP server, the shape of rust-analyzer's start:
// after initialized it says it is not quiescent, then ends one progress
// report (of several, for rust-analyzer); it says quiescent only once a
// document is opened, which the test controls.
const statusServer = `
import json, sys

def read():
    length = None
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        line = line.strip()
        if not line:
            break
        k, v = line.split(b":", 1)
        if k.lower() == b"content-length":
            length = int(v)
    return json.loads(sys.stdin.buffer.read(length))

def send(msg):
    msg["jsonrpc"] = "2.0"
    b = json.dumps(msg).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(b) + b)
    sys.stdout.buffer.flush()

def status(quiescent):
    send({"method": "experimental/serverStatus", "params": {"health": "ok", "quiescent": quiescent}})

while True:
    msg = read()
    m = msg.get("method")
    if m == "initialize":
        caps = msg["params"]["capabilities"]
        assert caps["experimental"]["serverStatusNotification"] is True, caps
        send({"id": msg["id"], "result": {"capabilities": {"textDocumentSync": 1}}})
    elif m == "initialized":
        status(False)
        send({"method": "$/progress", "params": {"token": "fetch", "value": {"kind": "begin", "title": "Fetching"}}})
        send({"method": "$/progress", "params": {"token": "fetch", "value": {"kind": "end"}}})
    elif m == "textDocument/didOpen":
        status(True)
    elif m == "shutdown":
        send({"id": msg["id"], "result": None})
    elif m == "exit":
        sys.exit(0)
    elif "id" in msg:
        send({"id": msg["id"], "result": None})
`

// TestWaitReadyWaitsForQuiescent: a server that sends
// experimental/serverStatus is ready when it says quiescent, not when a
// progress report ends.
func TestWaitReadyWaitsForQuiescent(t *testing.T) {
	root := t.TempDir()
	script := filepath.Join(t.TempDir(), "server.py")
	if err := os.WriteFile(script, []byte(statusServer), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "main.rs")
	if err := os.WriteFile(file, []byte("fn main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("python3", script)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	ctx := context.Background()
	c, err := Start(ctx, stdout, stdin, Options{Name: "status-server", Root: root, Closer: stdin})
	if err != nil {
		cmd.Process.Kill()
		t.Fatal(err)
	}
	defer c.Close(ctx)

	// Wait (on the client's change signal) until both the ended progress
	// and the "not quiescent" status have arrived.
	deadline := time.After(time.Minute)
	for {
		c.mu.Lock()
		seen, ch := c.progEnds > 0 && c.status, c.changed
		c.mu.Unlock()
		if seen {
			break
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatal("the server's progress and status never arrived")
		}
	}
	// Nothing will change until the test opens a document, so this can
	// only end at its limit; a client that trusted the ended progress
	// would answer ready at once.
	if ready, err := c.WaitReady(ctx, 0, 50*time.Millisecond); ready || err != nil {
		t.Fatalf("WaitReady = %v, %v before the server said quiescent; want not ready", ready, err)
	}
	if _, err := c.Sync(ctx, file); err != nil {
		t.Fatal(err)
	}
	if ready, err := c.WaitReady(ctx, 0, time.Minute); !ready || err != nil {
		t.Fatalf("WaitReady = %v, %v after the server said quiescent; want ready", ready, err)
	}
}
