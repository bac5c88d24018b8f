package config

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"yolop.dev/core"
	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/harness/secrets"
	"yolop.dev/packaging"
	"yolop.dev/packaging/hostgrant"
	"yolop.dev/transport/stdio"
)

// serverPy is the host's raw-protocol test server: with init_file in its
// YEP_TEST_SPEC it writes the environment it received and the initialize
// params it got.
func serverPy(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../core/host/testdata/server.py")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

type initDump struct {
	Params yep.InitializeParams `json:"params"`
	Env    map[string]string    `json:"env"`
}

func readDump(t *testing.T, path string) initDump {
	t.Helper()
	var d initDump
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return d
}

// processFixture resolves cfgtest through a Resolver whose environment
// sets the ${...} placeholders of its server spec, and starts it in a real
// session with a sibling extension that has no secrets.
type processFixture struct {
	*fixture
	initFile, siblingInit string
	sess                  *host.Session
	logs                  *syncBuf
	scrub                 *Scrubber
}

type syncBuf struct {
	mu chan struct{}
	b  strings.Builder
}

func newSyncBuf() *syncBuf { s := &syncBuf{mu: make(chan struct{}, 1)}; return s }
func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu <- struct{}{}
	defer func() { <-s.mu }()
	return s.b.Write(p)
}
func (s *syncBuf) String() string {
	s.mu <- struct{}{}
	defer func() { <-s.mu }()
	return s.b.String()
}

func startProcess(t *testing.T, f *fixture) *processFixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	p := &processFixture{fixture: f, initFile: filepath.Join(dir, "init.json"), siblingInit: filepath.Join(dir, "sibling.json"), logs: newSyncBuf(), scrub: NewScrubber()}
	spec, _ := json.Marshal(map[string]any{"capabilities": []string{"tools", "config", "status"}, "init_file": p.initFile, "name": "cfgtest"})
	env := map[string]string{"SERVER_PY": serverPy(t), "CFGTEST_SPEC": string(spec)}
	f.r.LookupEnv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if err := p.scrub.Load(ctx, f.sec); err != nil {
		t.Fatal(err)
	}
	log := hclog.New(&hclog.LoggerOptions{Output: p.scrub.Writer(p.logs), Level: hclog.Trace})
	f.r.Logger = log
	g, warnings, err := f.r.Grant(ctx, f.m)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) == 0 || !strings.Contains(warnings[len(warnings)-1], "${CFGTEST_UNSET_ARG} in capabilityServer.args[2]") {
		t.Errorf("warnings = %q", warnings)
	}
	// The sibling: the same server, another extension, no config.
	sib, err := packaging.Load("testdata/cfgtest")
	if err != nil {
		t.Fatal(err)
	}
	sg, err := hostgrant.FromManifest(sib)
	if err != nil {
		t.Fatal(err)
	}
	sspec, _ := json.Marshal(map[string]any{"init_file": p.siblingInit, "name": "sibling"})
	sg.Name, sg.Server.Name = "sibling", "sibling"
	sg.Tools = nil
	sg.Server.Args = []string{"-u", serverPy(t)}
	sg.Server.Env = map[string]string{"YEP_TEST_SPEC": string(sspec)}
	// Both run the host's test server, a script outside their package,
	// and write their dump into dir: their sandboxes say so.
	for _, gr := range []*host.Grant{&g, &sg} {
		gr.Server.Sandbox.Paths = append(gr.Server.Sandbox.Paths, core.ConfinedPath{Path: serverPy(t)}, core.ConfinedPath{Path: dir, Write: true})
	}
	p.sess = host.NewSession(host.SessionOptions{
		Grants:    []host.Grant{g, sg},
		Transport: stdio.New(stdio.Options{Logger: log}),
		Logger:    log,
		Extension: host.ExtensionOptions{Scrub: p.scrub.Scrub, StopGrace: 2 * time.Second},
	})
	t.Cleanup(p.sess.Close)
	for _, name := range []string{"cfgtest", "sibling"} {
		e, _ := p.sess.Extension(name)
		if err := e.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// TestSecretReachesOnlyItsServersEnv starts a real server process that
// writes the environment and the initialize params it received: the
// secret is in its environment, absent from initialize.config, and absent
// from a sibling server's environment.
func TestSecretReachesOnlyItsServersEnv(t *testing.T) {
	f := newFixture(t)
	f.config(t, map[string]any{"mode": "fast", "count": 2, "token": "tok-put-in-settings"})
	f.secret(t, token)
	p := startProcess(t, f)
	d := readDump(t, p.initFile)
	if d.Env["CFGTEST_TOKEN"] != token {
		t.Errorf("server env CFGTEST_TOKEN = %q, want the secret", d.Env["CFGTEST_TOKEN"])
	}
	if d.Env["CFGTEST_GREETING"] != "hello" || d.Env["FALLBACK"] != "plain" {
		t.Errorf("env fields: greeting %q fallback %q", d.Env["CFGTEST_GREETING"], d.Env["FALLBACK"])
	}
	var cfg map[string]any
	if err := json.Unmarshal(d.Params.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg["mode"] != "fast" || cfg["count"] != float64(2) {
		t.Errorf("initialize.config = %s", d.Params.Config)
	}
	if _, ok := cfg["token"]; ok || strings.Contains(string(d.Params.Config), "tok-") {
		t.Errorf("a secret reached initialize.config: %s", d.Params.Config)
	}
	sd := readDump(t, p.siblingInit)
	for k, v := range sd.Env {
		if strings.Contains(v, token) || k == "CFGTEST_TOKEN" {
			t.Errorf("the sibling server received the secret in %s", k)
		}
	}
	if strings.Contains(p.logs.String(), token) {
		t.Errorf("logs leak the secret:\n%s", p.logs)
	}
}

// TestDefaultsReachARealServer starts the raw-protocol server with a
// config that leaves greeting unset: its schema default is in the
// initialize.config the server received, beside the values set.
func TestDefaultsReachARealServer(t *testing.T) {
	f := newFixture(t)
	f.config(t, map[string]any{"mode": "slow", "count": 4})
	f.secret(t, token)
	p := startProcess(t, f)
	d := readDump(t, p.initFile)
	var cfg map[string]any
	if err := json.Unmarshal(d.Params.Config, &cfg); err != nil {
		t.Fatalf("initialize.config %q: %v", d.Params.Config, err)
	}
	want := map[string]any{"mode": "slow", "count": float64(4), "greeting": "hello"}
	if d := cmp.Diff(want, cfg); d != "" {
		t.Errorf("initialize.config the server received (-want +got):\n%s", d)
	}
}

// TestScrubberRedactsAnEchoingExtension has the server echo its own token
// through tool output, status and a log line.
func TestScrubberRedactsAnEchoingExtension(t *testing.T) {
	f := newFixture(t)
	f.config(t, map[string]any{"mode": "fast", "count": 2})
	f.secret(t, token)
	p := startProcess(t, f)
	ctx := context.Background()
	label := "[redacted:cfgtest.token]"
	args := json.RawMessage(`{"text":"my token is ` + token + `","message":"log ` + token + `"}`)
	res, err := p.sess.CallTool(ctx, "echo", "1", args, nil)
	if err != nil || res.Output != "my token is "+label {
		t.Errorf("echo = %q, %v", res.Output, err)
	}
	if _, err := p.sess.CallTool(ctx, "status", "2", json.RawMessage(`{"text":"using `+token+`"}`), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.sess.CallTool(ctx, "log", "3", args, nil); err != nil {
		t.Fatal(err)
	}
	res, err = p.sess.CallTool(ctx, "env", "4", nil, nil)
	if err != nil || strings.Contains(res.Output, token) || !strings.Contains(res.Output, label) {
		t.Errorf("env dump through a tool leaks or lacks the label: %v", err)
	}
	var status string
	for _, st := range p.sess.Stats() {
		if st.Name == "cfgtest" {
			status = st.Status
		}
	}
	if status != "using "+label {
		t.Errorf("status = %q", status)
	}
	logs := p.logs.String()
	if strings.Contains(logs, token) || !strings.Contains(logs, "log "+label) {
		t.Errorf("logs:\n%s", logs)
	}
}

// TestPushLiveConfig changes the capability config and the secret of a
// running extension.
func TestPushLiveConfig(t *testing.T) {
	f := newFixture(t)
	f.config(t, map[string]any{"mode": "fast", "count": 2})
	f.secret(t, token)
	p := startProcess(t, f)
	ctx := context.Background()
	e, _ := p.sess.Extension("cfgtest")
	pid := e.PID()
	if restarted, err := f.r.PushSession(ctx, p.sess, f.m); err != nil || restarted {
		t.Fatalf("unchanged push: %v %v", restarted, err)
	}
	// A plain change: config/changed, the server says ok.
	f.config(t, map[string]any{"mode": "slow", "count": 2})
	if restarted, err := f.r.PushSession(ctx, p.sess, f.m); err != nil || restarted || e.PID() != pid {
		t.Fatalf("plain change: restarted=%v err=%v", restarted, err)
	}
	if !strings.Contains(string(e.Grant().Config), `"slow"`) {
		t.Errorf("grant config = %s", e.Grant().Config)
	}
	// The server answers restart-required when restart is true.
	f.config(t, map[string]any{"mode": "slow", "count": 2, "restart": true})
	if restarted, err := f.r.PushSession(ctx, p.sess, f.m); err != nil || !restarted || e.PID() == pid {
		t.Fatalf("restart-required: restarted=%v err=%v", restarted, err)
	}
	if d := readDump(t, p.initFile); !strings.Contains(string(d.Params.Config), "restart") {
		t.Errorf("restarted server's config = %s", d.Params.Config)
	}
	// An invalid change is refused; the server keeps its config.
	f.config(t, map[string]any{"mode": "bogus", "count": 2})
	if _, err := f.r.PushSession(ctx, p.sess, f.m); err == nil {
		t.Fatal("invalid config pushed")
	}
	if strings.Contains(string(e.Grant().Config), "bogus") {
		t.Error("invalid config reached the grant")
	}
	// A new secret: the server restarts with it in its environment.
	f.config(t, map[string]any{"mode": "slow", "count": 2})
	newTok := token + "-rotated"
	f.secret(t, newTok)
	pid = e.PID()
	if restarted, err := f.r.PushSession(ctx, p.sess, f.m); err != nil || !restarted || e.PID() == pid {
		t.Fatalf("secret change: restarted=%v err=%v", restarted, err)
	}
	if d := readDump(t, p.initFile); d.Env["CFGTEST_TOKEN"] != newTok {
		t.Error("the restarted server did not get the new secret")
	}
	// Not in the session: nothing to do.
	other := *f.m
	other.Name = "absent"
	if restarted, err := f.r.PushSession(ctx, p.sess, &other); err != nil || restarted {
		t.Errorf("absent extension: %v %v", restarted, err)
	}
	_ = secrets.Redacted
}
