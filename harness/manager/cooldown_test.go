package manager

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"yolop.dev/harness/fetch"
	"yolop.dev/harness/firstseen"
	"yolop.dev/harness/settings"
	"yolop.dev/packaging"
	"yolop.dev/registry/cratesio"
)

// A clock tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// cooldownRegistry is a static index served on loopback that versions of
// yolop-extension-echo are published into.
type cooldownRegistry struct {
	t     *testing.T
	index string
	reg   string
}

func newCooldownRegistry(t *testing.T) *cooldownRegistry {
	index := filepath.Join(t.TempDir(), "index")
	srv := httptest.NewServer(cratesio.ServeIndex(index))
	t.Cleanup(srv.Close)
	return &cooldownRegistry{t: t, index: index, reg: "sparse+" + srv.URL + "/"}
}

func (r *cooldownRegistry) publish(version string) {
	t := r.t
	t.Helper()
	src := t.TempDir()
	files := map[string]string{
		"Cargo.toml":  fmt.Sprintf("[package]\nname = \"yolop-extension-echo\"\nversion = %q\n", version),
		"plugin.json": fmt.Sprintf(`{"name":"echo","version":%q,"yolop":{"protocol_version":"1.0","capabilityServer":{"command":"echo-server"},"tools":[{"name":"echo"}]}}`, version),
	}
	for n, body := range files {
		if err := os.WriteFile(filepath.Join(src, n), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := cratesio.WriteCrate(&buf, "yolop-extension-echo", version, src); err != nil {
		t.Fatal(err)
	}
	crate := filepath.Join(t.TempDir(), "echo.crate")
	if err := os.WriteFile(crate, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := cratesio.Publish(context.Background(), r.index, crate, cratesio.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
}

// yank marks version yanked in the index, as a registry does.
func (r *cooldownRegistry) yank(version string) {
	r.t.Helper()
	p := filepath.Join(r.index, filepath.FromSlash(cratesio.IndexPath("yolop-extension-echo")))
	b, err := os.ReadFile(p)
	if err != nil {
		r.t.Fatal(err)
	}
	old := fmt.Sprintf(`"vers":%q`, version)
	if !bytes.Contains(b, []byte(old)) || !bytes.Contains(b, []byte(`"yanked":false`)) {
		r.t.Fatalf("index line of %s not found in %s", version, b)
	}
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if bytes.Contains(l, []byte(old)) {
			l = bytes.Replace(l, []byte(`"yanked":false`), []byte(`"yanked":true`), 1)
		}
		out = append(out, l)
	}
	if err := os.WriteFile(p, bytes.Join(out, []byte("\n")), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func cooldownManager(t *testing.T, cfg string, c *clock) *Manager {
	t.Helper()
	if err := os.WriteFile(filepath.Join(cfg, "settings.toml"), []byte("[registry]\nretries = 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return New(Options{
		Store:        packaging.NewStore(cfg),
		Settings:     settings.New(cfg),
		Fetchers:     map[packaging.SourceKind]fetch.Fetcher{packaging.SourceCrate: fetch.Crate{ConfigDir: cfg}},
		AllowFileGit: true,
		FirstSeen:    firstseen.New(cfg),
		Now:          c.Now,
	})
}

func installedVersion(t *testing.T, m *Manager) string {
	t.Helper()
	lock, err := m.Store().ReadLock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return lock.Entry("echo").Version
}

// An update installs only a version first seen at least the cooldown
// (48h by default) ago: with 1.1.0 seen three days ago and 1.2.0 seen now
// it installs 1.1.0 and says 1.2.0 waits and until when; once the clock
// passes the wait, 1.2.0; Now installs the newest at once and says so; a
// version yanked during its wait is never installed.
func TestUpdateWaitsForTheCooldown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newCooldownRegistry(t)
	c := &clock{now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	cfg := t.TempDir()
	m := cooldownManager(t, cfg, c)
	r.publish("1.0.0")
	out, err := m.Install(ctx, InstallRequest{Source: r.reg + "#yolop-extension-echo", Consent: accept})
	if err != nil || out.Entry.Version != "1.0.0" || len(out.Notes) != 0 {
		t.Fatalf("a first install is not delayed: %+v, %v", out, err)
	}

	// 1.1.0 is published and seen by an update: it waits, nothing changes.
	r.publish("1.1.0")
	before, _ := os.ReadFile(filepath.Join(cfg, "extensions.lock"))
	out, err = m.Update(ctx, "echo", accept)
	if err != nil || !out.Held || !out.Unchanged || out.Entry.Version != "1.0.0" {
		t.Fatalf("update during the wait: %+v, %v", out, err)
	}
	if want := "update 1.1.0 waits until 2026-12-03 10:00 UTC (cooldown 48h)"; len(out.Notes) != 1 || !strings.HasPrefix(out.Notes[0], want) {
		t.Fatalf("notes %q; want one starting %q", out.Notes, want)
	}
	if after, _ := os.ReadFile(filepath.Join(cfg, "extensions.lock")); !bytes.Equal(before, after) {
		t.Fatal("a held update changed extensions.lock")
	}
	e, _ := m.Store().ReadLock(ctx)
	if w, err := m.Waiting(ctx, e.Entry("echo"), nil); err != nil || len(w) != 1 || w[0].Text() != "update 1.1.0 waits until 2026-12-03 10:00 UTC (cooldown 48h)" {
		t.Fatalf("waiting: %+v, %v", w, err)
	}

	// Three days on, 1.2.0 appears: 1.1.0 has waited, 1.2.0 has not.
	c.Add(72 * time.Hour)
	r.publish("1.2.0")
	out, err = m.Update(ctx, "echo", accept)
	if err != nil || out.Held || out.Entry.Version != "1.1.0" {
		t.Fatalf("update after 1.1.0's wait: %+v, %v", out, err)
	}
	if want := "update 1.2.0 waits until 2026-12-06 10:00 UTC (cooldown 48h); installing 1.1.0"; len(out.Notes) != 1 || !strings.HasPrefix(out.Notes[0], want) {
		t.Fatalf("notes %q; want one starting %q", out.Notes, want)
	}
	if got := installedVersion(t, m); got != "1.1.0" {
		t.Fatalf("installed %s, want 1.1.0", got)
	}

	// One second short of the wait: still 1.1.0. Then 1.2.0.
	c.Add(48*time.Hour - time.Second)
	if out, err = m.Update(ctx, "echo", accept); err != nil || !out.Held || installedVersion(t, m) != "1.1.0" {
		t.Fatalf("a second before the wait ends: %+v, %v", out, err)
	}
	c.Add(time.Second)
	if out, err = m.Update(ctx, "echo", accept); err != nil || out.Held || len(out.Notes) != 0 || installedVersion(t, m) != "1.2.0" {
		t.Fatalf("when the wait ends: %+v, %v", out, err)
	}

	// --now installs a version seen this instant, and says so.
	r.publish("1.3.0")
	out, err = m.UpdateWith(ctx, "echo", UpdateOptions{Now: true}, accept)
	if err != nil || installedVersion(t, m) != "1.3.0" || len(out.Notes) != 1 || !strings.HasPrefix(out.Notes[0], "installing yolop-extension-echo 1.3.0 without the cooldown (--now") {
		t.Fatalf("--now: %+v, %v", out, err)
	}

	// 1.4.0 is seen, then yanked during its wait: never installed, even
	// long after its wait would have ended.
	r.publish("1.4.0")
	if out, err = m.Update(ctx, "echo", accept); err != nil || !out.Held {
		t.Fatalf("1.4.0 should wait: %+v, %v", out, err)
	}
	r.yank("1.4.0")
	c.Add(30 * 24 * time.Hour)
	if out, err = m.Update(ctx, "echo", accept); err != nil || out.Held || installedVersion(t, m) != "1.3.0" {
		t.Fatalf("a yanked 1.4.0 after its wait: %+v, %v (installed %s)", out, err, installedVersion(t, m))
	}
	if out, err = m.UpdateWith(ctx, "echo", UpdateOptions{Now: true}, accept); err != nil || installedVersion(t, m) != "1.3.0" {
		t.Fatalf("a yanked 1.4.0 with --now: %+v, %v", out, err)
	}
}

// [update] cooldown = "0" turns the wait off; a malformed value fails the
// update with an error naming the key, and changes nothing.
func TestCooldownSetting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newCooldownRegistry(t)
	c := &clock{now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	cfg := t.TempDir()
	m := cooldownManager(t, cfg, c)
	r.publish("1.0.0")
	if _, err := m.Install(ctx, InstallRequest{Source: r.reg + "#yolop-extension-echo", Consent: accept}); err != nil {
		t.Fatal(err)
	}
	r.publish("1.1.0")
	settingsPath := filepath.Join(cfg, "settings.toml")
	if err := os.WriteFile(settingsPath, []byte("[registry]\nretries = 0\n[update]\ncooldown = \"soon\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Update(ctx, "echo", accept); err == nil || !strings.Contains(err.Error(), "update.cooldown") || installedVersion(t, m) != "1.0.0" {
		t.Fatalf("malformed cooldown: %v", err)
	}
	if err := os.WriteFile(settingsPath, []byte("[registry]\nretries = 0\n[update]\ncooldown = \"0\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := m.Update(ctx, "echo", accept); err != nil || len(out.Notes) != 0 || installedVersion(t, m) != "1.1.0" {
		t.Fatalf("cooldown 0: %+v, %v", out, err)
	}
}

// A corrupt first-seen record fails the update with an error naming the
// file, and is left as it is (never reset, which would restart waits
// without the user knowing).
func TestCorruptFirstSeenIsNotReset(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newCooldownRegistry(t)
	c := &clock{now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	cfg := t.TempDir()
	m := cooldownManager(t, cfg, c)
	r.publish("1.0.0")
	if _, err := m.Install(ctx, InstallRequest{Source: r.reg + "#yolop-extension-echo", Consent: accept}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(cfg, firstseen.FileName)
	if err := os.WriteFile(p, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.publish("1.1.0")
	_, err := m.Update(ctx, "echo", accept)
	if !errors.Is(err, firstseen.ErrCorrupt) || !strings.Contains(err.Error(), p) {
		t.Fatalf("update over a corrupt record: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "{not json" || installedVersion(t, m) != "1.0.0" {
		t.Fatalf("the record was rewritten (%q) or the update applied", b)
	}
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func gitCommit(t *testing.T, repo, version string) string {
	t.Helper()
	manifest := fmt.Sprintf(`{"name":"echo","version":%q,"yolop":{"protocol_version":"1.0","capabilityServer":{"command":"echo-server"},"tools":[{"name":"echo"}]}}`, version)
	if err := os.WriteFile(filepath.Join(repo, "plugin.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, repo, "add", "plugin.json")
	gitRun(t, repo, "commit", "-q", "-m", version)
	return gitRun(t, repo, "rev-parse", "HEAD")
}

// An update of a git source tracking a branch moves only to a commit the
// branch pointed at at least the cooldown ago: with the tip too new it
// moves to an older tip that has waited, or stays; a pinned commit is
// what the user named and is not held.
func TestGitUpdateWaitsForTheCooldown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := t.TempDir()
	gitRun(t, repo, "init", "-q")
	a := gitCommit(t, repo, "1.0.0")
	c := &clock{now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	cfg := t.TempDir()
	m := cooldownManager(t, cfg, c)
	if out, err := m.Install(ctx, InstallRequest{Source: "file://" + repo + "@main", Consent: accept}); err != nil || out.Entry.Commit != a {
		t.Fatalf("install: %+v, %v", out, err)
	}
	commit := func() string {
		lock, err := m.Store().ReadLock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return lock.Entry("echo").Commit
	}

	c.Add(time.Hour)
	b := gitCommit(t, repo, "1.1.0")
	out, err := m.Update(ctx, "echo", accept)
	if err != nil || !out.Held || commit() != a || len(out.Notes) != 1 || !strings.HasPrefix(out.Notes[0], "update to commit "+b[:12]+" waits until 2026-12-03 11:00 UTC (cooldown 48h)") {
		t.Fatalf("branch moved to b: %+v, %v", out, err)
	}

	c.Add(24 * time.Hour)
	cc := gitCommit(t, repo, "1.2.0")
	if out, err = m.Update(ctx, "echo", accept); err != nil || !out.Held || commit() != a {
		t.Fatalf("branch moved to c, b not yet waited: %+v, %v", out, err)
	}
	c.Add(24 * time.Hour)
	out, err = m.Update(ctx, "echo", accept)
	if err != nil || out.Held || commit() != b || len(out.Notes) != 1 || !strings.Contains(out.Notes[0], "installing commit "+b[:12]) {
		t.Fatalf("b has waited, c has not: %+v, %v (installed %s)", out, err, commit())
	}
	e, _ := m.Store().ReadLock(ctx)
	if w, err := m.Waiting(ctx, e.Entry("echo"), nil); err != nil || len(w) != 1 || w[0].Text() != "update to commit "+cc[:12]+" waits until 2026-12-04 11:00 UTC (cooldown 48h)" {
		t.Fatalf("waiting: %+v, %v", w, err)
	}
	c.Add(24 * time.Hour)
	if out, err = m.Update(ctx, "echo", accept); err != nil || commit() != cc {
		t.Fatalf("c has waited: %+v, %v", out, err)
	}

	// A pinned commit installs and updates as named.
	d := gitCommit(t, repo, "1.3.0")
	m2 := cooldownManager(t, t.TempDir(), c)
	if out, err := m2.Install(ctx, InstallRequest{Source: "file://" + repo + "@" + d, Consent: accept}); err != nil || out.Entry.Commit != d {
		t.Fatalf("pinned install: %+v, %v", out, err)
	}
	if out, err := m2.Update(ctx, "echo", accept); err != nil || out.Held || len(out.Notes) != 0 {
		t.Fatalf("pinned update: %+v, %v", out, err)
	}
}
