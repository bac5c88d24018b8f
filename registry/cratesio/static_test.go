package cratesio

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestPlainStaticServer serves an index written by Publish with
// `python3 -m http.server` (no yolop code on the server side): resolution,
// download and the Last-Modified/304 cache must all work, which is what
// the README promises for any static file server.
func TestPlainStaticServer(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 is not installed") // .ci/run installs it: in CI a skip would hide a broken install step
		}
		t.Skip("python3 is not installed")
	}
	indexDir := t.TempDir()
	publishCrate(t, indexDir, "yolop-extension-echo", "0.1.0", echoFiles("0.1.0"))
	cmd := exec.Command(py, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", indexDir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	portc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		re := regexp.MustCompile(`port (\d+)`)
		sent := false
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil && !sent {
				portc <- m[1]
				sent = true
			}
		}
		if !sent {
			close(portc)
		}
	}()
	var port string
	select {
	case p, ok := <-portc:
		if !ok {
			t.Fatal("python3 http.server printed no port")
		}
		port = p
	case <-time.After(30 * time.Second):
		t.Fatal("python3 http.server did not start")
	}
	reg := "sparse+http://127.0.0.1:" + port + "/"
	opts := fastOptions(reg)
	opts.CacheDir = t.TempDir()
	ctx := context.Background()
	rel, err := NewClient(opts).Resolve(ctx, "yolop-extension-echo", "^0.1", "")
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "pkg")
	if err := NewClient(opts).Fetch(ctx, rel, dest, nil); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dest, "plugin.json")); err != nil || !strings.Contains(string(b), "echo") {
		t.Fatalf("plugin.json = %q, %v", b, err)
	}
	// The cache stored Last-Modified validators (python sends no ETag).
	cached, err := os.ReadFile(NewClient(opts).cachePath(IndexPath("yolop-extension-echo")))
	if err != nil || !strings.HasPrefix(string(cached), `{"last-modified":`) {
		t.Errorf("cache entry = %.80q, %v", cached, err)
	}
	// A warm resolve revalidates with If-Modified-Since and still works.
	if _, err := NewClient(opts).Resolve(ctx, "yolop-extension-echo", "^0.1", ""); err != nil {
		t.Fatal(err)
	}
	// python logs each request to stderr; the warm index request got a 304.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(log.String(), "GET /yo/lo/yolop-extension-echo HTTP/1.1\" 304") {
		if time.Now().After(deadline) {
			t.Fatalf("no 304 for the index file in the server log:\n%s", log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
