package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"yolop.dev/core/yep"
	"yolop.dev/extensions/lsp/internal/lsptest"
	"yolop.dev/extensions/lsp/internal/protocol"
)

func TestMain(m *testing.M) {
	lsptest.PutGoplsOnPath()
	goleak.VerifyTestMain(m)
}

// tap records what the client writes and can run a hook after a write
// containing a marker.
type tap struct {
	w      io.Writer
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	hook   func()
}

func (t *tap) Write(b []byte) (int, error) {
	n, err := t.w.Write(b)
	t.mu.Lock()
	t.buf.Write(b)
	hook := t.hook
	fire := hook != nil && t.marker != "" && bytes.Contains(b, []byte(t.marker))
	if fire {
		t.hook = nil
	}
	t.mu.Unlock()
	if fire {
		hook()
	}
	return n, err
}

func (t *tap) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}

func (t *tap) onWrite(marker string, hook func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.marker, t.hook = marker, hook
}

// startGopls runs gopls on root and returns a started client.
func startGopls(t *testing.T, root string, encs []protocol.Encoding) (*Client, *tap) {
	t.Helper()
	return startGoplsWith(t, root, Options{Encodings: encs})
}

// startGoplsWith is startGopls with more options; Name, Root and Closer
// are filled in.
func startGoplsWith(t *testing.T, root string, opts Options) (*Client, *tap) {
	t.Helper()
	lsptest.RequireGopls(t)
	cmd := exec.Command("gopls")
	cmd.Dir = root
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tp := &tap{w: stdin}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts.Name, opts.Root, opts.Closer = "gopls", root, stdin
	c, err := Start(ctx, stdout, tp, opts)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() {
		// Generous: on a loaded machine gopls may still be loading the
		// workspace when asked to shut down.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Error("gopls did not exit after shutdown and exit")
		}
	})
	return c, tp
}

func TestHandshakeAndSync(t *testing.T) {
	root := lsptest.Fixture(t, "gomod")
	c, tp := startGopls(t, root, nil)
	if c.Encoding() != protocol.UTF8 && c.Encoding() != protocol.UTF16 {
		t.Fatalf("negotiated %q", c.Encoding())
	}
	if !Supported(c.Capabilities().DefinitionProvider) || !Supported(c.Capabilities().RenameProvider) {
		t.Fatalf("gopls capabilities not decoded: %+v", c.Capabilities())
	}
	ctx := context.Background()
	file := filepath.Join(root, "greet", "greet.go")
	d1, err := c.Sync(ctx, file)
	if err != nil || d1.Version != 1 {
		t.Fatalf("first sync: %+v %v", d1, err)
	}
	d2, err := c.Sync(ctx, file)
	if err != nil || d2 != d1 {
		t.Fatalf("unchanged file re-sent: %+v %v", d2, err)
	}
	if err := os.WriteFile(file, append([]byte(d1.Text.String()), "\n// more\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	d3, err := c.Sync(ctx, file)
	if err != nil || d3.Version != 2 || !strings.Contains(d3.Text.String(), "// more") {
		t.Fatalf("changed file: %+v %v", d3, err)
	}
	os.Remove(file)
	if _, err := c.Sync(ctx, file); err == nil || c.Document(file) != nil {
		t.Fatal("a deleted file stayed open")
	}
	out := tp.String()
	for _, m := range []string{`"textDocument/didOpen"`, `"textDocument/didChange"`, `"textDocument/didClose"`, `"positionEncodings":["utf-8","utf-16"]`} {
		if !strings.Contains(out, m) {
			t.Errorf("client never sent %s", m)
		}
	}
}

func TestEncodingOffer(t *testing.T) {
	root := lsptest.Fixture(t, "gomod")
	c, _ := startGopls(t, root, []protocol.Encoding{protocol.UTF16})
	if c.Encoding() != protocol.UTF16 {
		t.Fatalf("offered only utf-16, negotiated %q", c.Encoding())
	}
}

func TestCancelSendsCancelRequest(t *testing.T) {
	root := lsptest.Fixture(t, "gomod")
	c, tp := startGopls(t, root, nil)
	var got error
	for attempt := 0; attempt < 5; attempt++ {
		ctx, cancel := context.WithCancel(context.Background())
		// Cancel right after the request has been written, before gopls
		// can answer.
		tp.onWrite(`"workspace/symbol"`, cancel)
		var res any
		got = c.Call(ctx, "workspace/symbol", protocol.WorkspaceSymbolParams{Query: "Hello"}, &res)
		cancel()
		if got != nil {
			break
		}
	}
	if !errors.Is(got, yep.ErrCancelled) {
		t.Fatalf("cancelled call returned %v, want an error matching yep.ErrCancelled", got)
	}
	if !strings.Contains(tp.String(), `"method":"$/cancelRequest"`) {
		t.Fatal("no $/cancelRequest was sent")
	}
	// The connection is still usable.
	var res []protocol.SymbolInformation
	if err := c.Call(context.Background(), "workspace/symbol", protocol.WorkspaceSymbolParams{Query: "Hello"}, &res); err != nil {
		t.Fatalf("call after a cancel: %v", err)
	}
}

func TestPushDiagnostics(t *testing.T) {
	root := lsptest.Fixture(t, "gomod")
	c, _ := startGopls(t, root, nil)
	ctx := context.Background()
	file := filepath.Join(root, "greet", "shout.go")
	uri := protocol.URIFromPath(file)
	gen := c.DiagnosticsGen(uri)
	if _, err := c.Sync(ctx, file); err != nil {
		t.Fatal(err)
	}
	// Break the file and wait for gopls to say so.
	if err := os.WriteFile(file, []byte("package greet\n\nfunc Shout(name string) string {\n\treturn undefinedThing\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Sync(ctx, file); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		fresh, err := c.WaitDiagnostics(ctx, uri, gen, 0, time.Until(deadline))
		if err != nil || !fresh {
			t.Fatalf("no diagnostics published: fresh=%v err=%v", fresh, err)
		}
		items, _ := c.Diagnostics(uri)
		for _, d := range items {
			if strings.Contains(d.Message, "undefinedThing") {
				return
			}
		}
		gen = c.DiagnosticsGen(uri)
	}
	t.Fatal("gopls never reported undefinedThing")
}

func TestLookupSection(t *testing.T) {
	s := []byte(`{"gopls":{"staticcheck":true},"python":{"analysis":{"mode":"x"}}}`)
	for sec, want := range map[string]string{
		"gopls": `{"staticcheck":true}`, "python.analysis": `{"mode":"x"}`, "missing": `{}`, "python.analysis.nope": `{}`,
	} {
		if got := string(lookupSection(s, sec)); got != want {
			t.Errorf("%s: %s, want %s", sec, got, want)
		}
	}
	if got := string(lookupSection(nil, "gopls")); got != `{}` {
		t.Errorf("nil settings: %s", got)
	}
}

// initialize's processId is our pid, so a server can exit when we die;
// with NoProcessID it is null, for a server in a PID namespace of its own
// that cannot see our pid (pyright exits when the pid it is given does not
// exist).
func TestProcessID(t *testing.T) {
	root := lsptest.Fixture(t, "gomod")
	_, tp := startGopls(t, root, nil)
	if want := fmt.Sprintf(`"processId":%d`, os.Getpid()); !strings.Contains(tp.String(), want) {
		t.Errorf("initialize lacks %s", want)
	}
	_, tp = startGoplsWith(t, root, Options{NoProcessID: true})
	if !strings.Contains(tp.String(), `"processId":null`) {
		t.Errorf("initialize with NoProcessID lacks \"processId\":null")
	}
}
