package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"yolop.dev/extensions/logfire/otlptest"
)

// canary is the Logfire token of the CLI test: after a whole session it
// may be found in connections.toml and in the Authorization header of the
// exports, and nowhere else.
const canary = "pylf_v1_us_canary7Qx9ZtLm3"

// TestYolopCLI is the extension as a user gets it, through the real CLI
// built from this workspace: packed with its server, published to a
// sparse registry served on 127.0.0.1, installed by bare name, its token
// set with `ext secret set`, its endpoint with `ext config set`, graded by
// `yolop ext doctor`, then enabled for a `yolop session` that also loads
// the echotrace example in place. The OTLP receiver must get one trace
// per turn in which the echotrace server's own spans sit inside the
// host's tool span, and the token must stay out of everything but
// connections.toml and the Authorization header.
func TestYolopCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the yolop CLI; skipped with -short")
	}
	dir := t.TempDir()
	repo := filepath.Join(moduleDir(), "..", "..")
	yolop := filepath.Join(dir, "yolop")
	build := exec.Command("go", "build", "-o", yolop, "./cmd/yolop")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the yolop CLI: %v\n%s", err, out)
	}
	r := otlptest.New()
	defer r.Close()
	otlpEndpoint = r.URL()

	cfg := t.TempDir()
	work := t.TempDir()
	// The receiver listens on a port the kernel picked, which the
	// manifests' sandboxes do not name: the user lets both servers reach
	// it, as settings.toml's [sandbox] is theirs to widen.
	u, err := url.Parse(r.URL())
	if err != nil {
		t.Fatal(err)
	}
	settings := fmt.Sprintf("[sandbox.extensions.logfire]\nconnect = [%[1]s]\n\n[sandbox.extensions.echotrace]\nconnect = [%[1]s]\n", u.Port())
	if err := os.WriteFile(filepath.Join(cfg, "settings.toml"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	var transcript bytes.Buffer // every byte the CLI printed
	cli := func(stdin string, args ...string) string {
		t.Helper()
		out := yolopRun(t, yolop, cfg, stdin, &transcript, args...)
		return out
	}

	// Pack, publish, serve, install by bare name.
	packed := cli("", "ext", "pack", filepath.Join(moduleDir(), "package"), "--go-main", filepath.Join(moduleDir(), "cmd", "yolop-extension-logfire"), "-o", work, "--targets", "host")
	var crate, art string
	for _, f := range strings.Fields(packed) {
		switch {
		case strings.HasSuffix(f, ".crate"):
			crate = f
		case strings.HasSuffix(f, ".tar.gz"):
			art = f
		}
	}
	if crate == "" || art == "" {
		t.Fatalf("pack printed no crate and artifact:\n%s", packed)
	}
	index := filepath.Join(work, "index")
	cli("", "registry", "publish", crate, "--index", index, "--artifact", art)
	reg := serve(t, yolop, index)
	mustContain(t, cli("", "ext", "install", "logfire", "--registry", reg, "--yes"), "installed logfire 0.1.0")
	if _, err := os.Stat(filepath.Join(cfg, "extensions", "logfire", "bin", "yolop-extension-logfire")); err != nil {
		t.Fatalf("the server binary was not provisioned from the artifact: %v", err)
	}

	// Configure: the token as a secret, the endpoint as plain config.
	cli(canary, "ext", "secret", "set", "logfire", "token", "--stdin")
	cli("", "ext", "config", "set", "logfire", "endpoint", r.URL())
	cli("", "ext", "config", "set", "logfire", "service_name", "yolop-cli-test")
	cli("", "ext", "enable", "logfire")
	mustContain(t, cli("", "ext", "doctor", "logfire"), "OK:")
	doctorExports := len(r.Requests())

	// The echotrace example in place, exporting its own spans to the same
	// receiver (its manifest passes OTEL_EXPORTER_OTLP_ENDPOINT on).
	echo := filepath.Join(t.TempDir(), "echotrace")
	src := filepath.Join(moduleDir(), "examples", "echotrace")
	if err := os.CopyFS(echo, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	gb := exec.Command("go", "build", "-o", filepath.Join(echo, "bin", "yolop-extension-echotrace"), ".")
	gb.Dir = src
	if out, err := gb.CombinedOutput(); err != nil {
		t.Fatalf("build echotrace: %v\n%s", err, out)
	}

	script := "/call echo {\"text\":\"first\"}\n/call echo {\"text\":\"second\"}\n/status\n/quit\n"
	out := cli(script, "session", "--ext", echo, "--workspace", t.TempDir())
	mustContain(t, out, "first", "second")

	// Two turns, each: the host's turn and tool spans (from logfire) with
	// the echotrace server's spans inside the tool span.
	spans, ok := r.WaitFor(wait, func(spans []otlptest.Span, _ []otlptest.Request) bool {
		return countName(spans, "echo.render") == 2 && countName(spans, "turn") >= 2
	})
	if !ok {
		t.Fatalf("the receiver got:\n%s", otlptest.Tree(spans))
	}
	traces := map[string][]otlptest.Span{}
	for _, s := range spans {
		traces[s.TraceID] = append(traces[s.TraceID], s)
	}
	var turns int
	for id, ss := range traces {
		tree := otlptest.Tree(ss, "gen_ai.tool.name")
		if !strings.HasPrefix(tree, "turn\n") {
			continue // doctor's own calls, outside a turn
		}
		turns++
		t.Logf("trace %s:\n%s", id, otlptest.Tree(ss, "service.name", "gen_ai.tool.name", "yolop.extension", "yolop.tool.status", "rpc.method", "echo.text.length"))
		want := "turn\n  execute_tool echo gen_ai.tool.name=echo\n    tool/call echo gen_ai.tool.name=echo\n      echo.render\n"
		if tree != want {
			t.Errorf("trace %s:\n%s\nwant:\n%s", id, tree, want)
		}
		for _, s := range ss {
			want := "yolop-cli-test"
			if strings.HasPrefix(s.Name, "tool/call") || s.Name == "echo.render" {
				want = "yolop-extension-echotrace"
			}
			if s.Service != want {
				t.Errorf("span %s from service %q, want %q", s.Name, s.Service, want)
			}
			for k, v := range s.Attrs {
				if strings.Contains(v, canary) {
					t.Errorf("span %s attribute %s carries the token", s.Name, k)
				}
			}
		}
	}
	if turns != 2 {
		t.Errorf("%d traces with a turn, want 2", turns)
	}
	var authed int
	for _, req := range r.Requests()[doctorExports:] {
		switch req.Authorization {
		case canary:
			authed++
		case "":
		default:
			t.Errorf("an export's Authorization is %q", req.Authorization)
		}
	}
	if authed == 0 {
		t.Error("no export carried the token as its Authorization")
	}

	// A rejected token is the extension's status, live in the REPL and in
	// /status, until export recovers.
	r.Answer(func(int) int { return 401 })
	sess := startSession(t, yolop, cfg, &transcript, "session", "--workspace", t.TempDir())
	sess.send("/call echo {\"text\":\"third\"}")
	failing := "logfire: export failing (401 unauthorized)"
	sess.expect("[logfire] " + failing)
	sess.send("/status")
	sess.expect(`status="` + failing + `"`)
	r.Answer(nil)
	sess.send("/call echo {\"text\":\"fourth\"}")
	// The status cleared: "[logfire] " and nothing after it.
	sess.expectLine(func(l string) bool { return strings.TrimSpace(l) == "[logfire]" }, "the status cleared")
	sess.send("/quit")
	sess.wait()

	// The canary is in connections.toml and nowhere else: not in any
	// other file of the config directory (settings, locks, logs,
	// history), not in anything the CLI printed.
	var holders []string
	filepath.WalkDir(cfg, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(path)
		if bytes.Contains(b, []byte(canary)) {
			rel, _ := filepath.Rel(cfg, path)
			holders = append(holders, rel)
		}
		return nil
	})
	if !slices.Equal(holders, []string{"connections.toml"}) {
		t.Errorf("files holding the token: %q; want only connections.toml", holders)
	}
	if strings.Contains(transcript.String(), canary) {
		t.Errorf("the CLI printed the token:\n%s", transcript.String())
	}
}

// A liveSession is a `yolop session` fed line by line.
type liveSession struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	errb  bytes.Buffer
	out   *bytes.Buffer
}

func startSession(t *testing.T, yolop, cfg string, transcript *bytes.Buffer, args ...string) *liveSession {
	t.Helper()
	s := &liveSession{t: t, lines: make(chan string, 1000), out: transcript}
	s.cmd = exec.Command(yolop, args...)
	s.cmd.Env = append(os.Environ(), "YOLOP_CONFIG_DIR="+cfg, "YOLOP_LOG=trace", "OTEL_EXPORTER_OTLP_ENDPOINT="+otlpEndpoint)
	s.cmd.Stderr = &s.errb
	s.stdin, _ = s.cmd.StdinPipe()
	stdout, _ := s.cmd.StdoutPipe()
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() { s.cmd.Process.Kill(); s.cmd.Wait() })
	return s
}

func (s *liveSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		s.t.Fatalf("session stdin: %v", err)
	}
}

// expect reads output lines until one contains want (bounded against a
// hang).
func (s *liveSession) expect(want string) {
	s.t.Helper()
	s.expectLine(func(l string) bool { return strings.Contains(l, want) }, want)
}

// expectLine reads output lines until ok holds for one.
func (s *liveSession) expectLine(ok func(string) bool, want string) {
	s.t.Helper()
	deadline := time.After(wait)
	var seen []string
	for {
		select {
		case l, open := <-s.lines:
			if !open {
				s.t.Fatalf("the session ended before %q; printed:\n%s\nstderr:\n%s", want, strings.Join(seen, "\n"), s.errb.String())
			}
			seen = append(seen, l)
			s.out.WriteString(l + "\n")
			if ok(l) {
				return
			}
		case <-deadline:
			s.t.Fatalf("no %q in:\n%s", want, strings.Join(seen, "\n"))
		}
	}
}

func (s *liveSession) wait() {
	s.t.Helper()
	s.stdin.Close()
	for l := range s.lines {
		s.out.WriteString(l + "\n")
	}
	if err := s.cmd.Wait(); err != nil {
		s.t.Fatalf("session: %v\nstderr:\n%s", err, s.errb.String())
	}
	s.out.Write(s.errb.Bytes())
}

// otlpEndpoint is the OTEL_EXPORTER_OTLP_ENDPOINT the CLI runs with.
var otlpEndpoint string

func countName(spans []otlptest.Span, name string) int {
	n := 0
	for _, s := range spans {
		if s.Name == name {
			n++
		}
	}
	return n
}

// yolopRun runs the CLI with an isolated config dir and debug logs,
// returns stdout and appends stdout and stderr to transcript.
func yolopRun(t *testing.T, yolop, cfg, stdin string, transcript *bytes.Buffer, args ...string) string {
	t.Helper()
	cmd := exec.Command(yolop, args...)
	cmd.Env = append(os.Environ(), "YOLOP_CONFIG_DIR="+cfg, "YOLOP_LOG=trace", "OTEL_EXPORTER_OTLP_ENDPOINT="+otlpEndpoint)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	transcript.Write(out.Bytes())
	transcript.Write(errb.Bytes())
	if err != nil {
		t.Fatalf("yolop %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

func mustContain(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

// serve runs `yolop registry serve dir` until the test ends and returns
// the sparse+http://127.0.0.1:PORT/ URL it printed.
func serve(t *testing.T, yolop, dir string) string {
	t.Helper()
	cmd := exec.Command(yolop, "registry", "serve", dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	lines := make(chan string, 1)
	go func() {
		br := bufio.NewReader(stdout)
		line, _ := br.ReadString('\n')
		lines <- line
		io.Copy(io.Discard, br)
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(wait):
		t.Fatal("registry serve printed nothing")
	}
	f := strings.Fields(line)
	if len(f) < 2 || f[0] != "serving" || !strings.HasPrefix(f[1], "sparse+http://127.0.0.1:") {
		t.Fatalf("registry serve printed %q", line)
	}
	return f[1]
}
