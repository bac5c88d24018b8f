package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"yolop.dev/internal/launchertest"
)

// TestMain lets the test binary stand in for the yolop binary: the demo
// and --ext packages spawn it as "serve-echo" (and the demo's model as
// "serve-scripted-model").
func TestMain(m *testing.M) {
	if (len(os.Args) > 1 && (os.Args[1] == "serve-echo" || os.Args[1] == "serve-lab" || os.Args[1] == "serve-scripted-model")) || os.Getenv("YOLOP_TEST_CLI") == "1" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	pinGoCaches()
	done := launchertest.Use()
	dir, err := os.MkdirTemp("", "yolop-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	builtDir = dir
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		done()
		os.RemoveAll(builtDir)
		os.Exit(code)
	}))
}

// pinGoCaches sets GOCACHE, GOMODCACHE and GOPATH to what they are now,
// so the `go build`s of tests that point HOME at a temporary directory
// (runEnv) still use the machine's build cache rather than compiling
// everything afresh under the new HOME.
func pinGoCaches() {
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		return // the tests that build say why go fails
	}
	vals := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		if i < len(vals) && vals[i] != "" {
			os.Setenv(k, vals[i])
		}
	}
}

// cli runs the CLI in-process with stdin and returns stdout, stderr and
// the exit code.
func cli(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb syncBuf
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// events decodes --json output.
func events(t *testing.T, out string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("--json printed a non-JSON line %q", l)
		}
		evs = append(evs, m)
	}
	return evs
}

// wrapperSandbox is the yolop.sandbox block of a test package whose server
// is a shell wrapper that runs this test binary: it runs another program
// (exec), reads the test binary's directory, and may write each of rw (a
// log or marker the wrapper writes) besides the workspace, as a real
// server that runs another program must declare.
func wrapperSandbox(t testing.TB, rw ...string) map[string]any {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fs := []any{
		map[string]any{"path": "${workspace}", "access": "rw"},
		map[string]any{"path": "${package}", "access": "ro"},
		map[string]any{"path": filepath.Dir(exe), "access": "ro"},
	}
	for _, p := range rw {
		fs = append(fs, map[string]any{"path": p, "access": "rw"})
	}
	return map[string]any{"exec": true, "fs": fs}
}

// withWrapperSandbox adds [wrapperSandbox] to the manifest JSON b.
func withWrapperSandbox(t testing.TB, b []byte, rw ...string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["yolop"].(map[string]any)["sandbox"] = wrapperSandbox(t, rw...)
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// builtDir holds the binaries [built] builds; TestMain makes and removes it.
var builtDir string

var (
	builtMu   sync.Mutex
	builtBins = map[string]func() (string, error){}
)

// built builds the Go package pkg once per test binary, without -race,
// into builtDir, and returns the binary's path. A program these tests run
// many times starts far sooner so than as this -race test binary.
func built(pkg string) (string, error) {
	builtMu.Lock()
	f, ok := builtBins[pkg]
	if !ok {
		f = sync.OnceValues(func() (string, error) {
			bin := filepath.Join(builtDir, filepath.Base(pkg))
			if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
				return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
			}
			return bin, nil
		})
		builtBins[pkg] = f
	}
	builtMu.Unlock()
	return f()
}

// echoServer is the echo example (yolop.dev/core/examples/echo, the same
// echoext the demo's serve-echo runs), [built] once.
func echoServer() (string, error) { return built("yolop.dev/core/examples/echo") }

// echoPackage writes an echo package whose bin/ holds a wrapper that runs
// the echo example built once ([echoServer]); it returns the package dir.
func echoPackage(t *testing.T) string {
	t.Helper()
	bin, err := echoServer()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	manifest, err := os.ReadFile("demo/plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(manifest, &m); err != nil {
		t.Fatal(err)
	}
	sb := wrapperSandbox(t)
	sb["fs"] = append(sb["fs"].([]any), map[string]any{"path": bin, "access": "ro"})
	m["yolop"].(map[string]any)["sandbox"] = sb
	manifest, _ = json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "bin"), 0o755)
	script := "#!/bin/sh\nexec '" + bin + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "bin", "yolop-extension-echo"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestEmbeddedManifestMatchesTheEchoExample(t *testing.T) {
	want, err := os.ReadFile("../../core/examples/echo/plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile("demo/plugin.json")
	if !bytes.Equal(got, want) {
		t.Fatal("cmd/yolop/demo/plugin.json differs from core/examples/echo/plugin.json; copy it over")
	}
}
