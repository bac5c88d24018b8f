package marketplace_test

import (
	"context"
	"errors"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/harness/fetch"
	"yolop.dev/harness/manager"
	"yolop.dev/harness/marketplace"
	"yolop.dev/harness/settings"
	"yolop.dev/packaging"
	"yolop.dev/registry/git"
)

// env is a config directory with a manager that installs marketplace
// entries, as the harness wires it.
type env struct {
	cfg string
	ms  *marketplace.Marketplaces
	m   *manager.Manager
}

func newEnv(t *testing.T) *env {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "config")
	ms := &marketplace.Marketplaces{ConfigDir: cfg, Settings: settings.New(cfg), Git: git.Options{AllowInsecureHTTP: true}}
	m := manager.New(manager.Options{
		Store: packaging.NewStore(cfg), Settings: ms.Settings, Marketplaces: ms,
		Fetchers: map[packaging.SourceKind]fetch.Fetcher{packaging.SourceMarketplace: marketplace.Fetcher{Marketplaces: ms}},
	})
	return &env{cfg: cfg, ms: ms, m: m}
}

func accept(context.Context, manager.Proposal) error { return nil }

// fixtureMarket copies testdata/market into a fresh directory.
func fixtureMarket(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "market")
	if err := packaging.CopyTree(filepath.Join("testdata", "market"), dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshot is the config directory's files and their content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return nil
	})
	return out
}

func sameSnapshot(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed %s", what, k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s left %s behind", what, k)
		}
	}
}

func TestInstallFromADirectoryMarketplace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	dir := fixtureMarket(t)
	mk, err := e.ms.Add(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if mk.Name != "yolop-fixtures" || mk.Source != dir || mk.Commit != "" || len(mk.Catalog.Plugins) != 2 {
		t.Fatalf("added %+v", mk)
	}
	recs, _ := e.ms.Settings.Marketplaces(ctx)
	if len(recs) != 1 || recs[0].Name != "yolop-fixtures" || recs[0].Source != dir {
		t.Fatalf("settings.toml records %+v", recs)
	}
	found, notes, err := e.ms.Search(ctx, "", "push")
	if err != nil || len(notes) > 0 || len(found) != 1 || found[0].Ref != "bash-guard@yolop-fixtures" || found[0].Source != "./plugins/bash-guard" {
		t.Fatalf("search push = %+v, %v, %v", found, notes, err)
	}
	if all, _, _ := e.ms.Search(ctx, "yolop-fixtures", ""); len(all) != 2 {
		t.Fatalf("search all = %+v", all)
	}
	for _, p := range []string{"bash-guard", "greeter"} {
		out, err := e.m.Install(ctx, manager.InstallRequest{Source: p + "@yolop-fixtures", Consent: accept})
		if err != nil {
			t.Fatalf("install %s: %v", p, err)
		}
		if out.Name != p || out.Kind != packaging.SourceMarketplace || out.Entry.Source != p+"@yolop-fixtures" || out.Entry.Commit != "" {
			t.Fatalf("install %s: %+v", p, out.Entry)
		}
	}
	// A stored copy, pinned by content: the marketplace's directory may
	// change without touching what was approved.
	lock, err := e.m.Store().ReadLock(ctx)
	if err != nil || len(lock.Extensions) != 2 || lock.Entry("bash-guard").Kind != packaging.SourceMarketplace {
		t.Fatalf("lock = %+v, %v", lock, err)
	}
	if _, err := os.Stat(filepath.Join(e.cfg, "extensions", "bash-guard", "server.py")); err != nil {
		t.Fatalf("not a stored copy: %v", err)
	}
	writeFile(t, filepath.Join(dir, "plugins", "bash-guard", "server.py"), "print('edited after approval')\n")
	if _, err := e.m.Store().VerifyInstalled(ctx, "bash-guard"); err != nil {
		t.Fatalf("an edit in the marketplace reached the stored copy: %v", err)
	}
	// An update reads the catalog again and shows the change.
	asked := 0
	out, err := e.m.Update(ctx, "bash-guard", func(context.Context, manager.Proposal) error { asked++; return nil })
	if err != nil || out.Unchanged || asked != 0 {
		t.Fatalf("update after a code edit: %+v, asked %d, %v", out, asked, err)
	}
	// Editing the stored copy after approval is refused before it runs.
	writeFile(t, filepath.Join(e.cfg, "extensions", "bash-guard", "server.py"), "print('tampered')\n")
	if _, err := e.m.Enable(ctx, "bash-guard"); err == nil || !strings.Contains(err.Error(), "server.py") {
		t.Fatalf("enable of a tampered copy: %v", err)
	}
}

func TestHostileEntriesChangeNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	dir := fixtureMarket(t)
	outside := filepath.Join(filepath.Dir(dir), "outside")
	if err := packaging.CopyTree(filepath.Join(dir, "plugins", "greeter"), outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "plugins", "link")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, ".claude-plugin", "marketplace.json"), `{
  "name": "hostile", "owner": {"name": "x"},
  "plugins": [
    {"name": "greeter", "source": "./plugins/greeter"},
    {"name": "escape", "source": "../outside"},
    {"name": "viasymlink", "source": "./plugins/link"},
    {"name": "npm", "source": {"source": "npm", "package": "@acme/greeter"}},
    {"name": "gone", "source": "./plugins/gone"},
    {"name": "other-name", "source": "./plugins/greeter"}
  ]
}`)
	if _, err := e.ms.Add(ctx, dir); err != nil {
		t.Fatal(err)
	}
	found, _, _ := e.ms.Search(ctx, "hostile", "")
	unsupported := map[string]string{}
	for _, f := range found {
		unsupported[f.Plugin] = f.Unsupported
	}
	if !strings.Contains(unsupported["escape"], "leaves the marketplace root") || !strings.Contains(unsupported["npm"], `"npm"`) || unsupported["greeter"] != "" {
		t.Fatalf("search shows %+v", unsupported)
	}
	before := snapshot(t, e.cfg)
	for _, tc := range []struct{ source, want string }{
		{"escape@hostile", "leaves the marketplace root"},
		{"viasymlink@hostile", "outside the marketplace"},
		{"npm@hostile", `source kind "npm"`},
		{"gone@hostile", "plugins/gone is not a directory of the marketplace"},
		{"missing@hostile", `"missing" is not listed by marketplace hostile`},
		{"other-name@hostile", `the manifest names the extension "greeter", expected "other-name"`},
	} {
		_, err := e.m.Install(ctx, manager.InstallRequest{Source: tc.source, Consent: accept})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("install %s: err = %v, want %q", tc.source, err, tc.want)
		}
		sameSnapshot(t, "install "+tc.source, before, snapshot(t, e.cfg))
	}
	// A malformed catalog is refused at add, and nothing is recorded.
	bad := fixtureMarket(t)
	writeFile(t, filepath.Join(bad, ".claude-plugin", "marketplace.json"), `{"name": "bad", "owner": {"name": "x"}, "plugins": {}}`)
	if _, err := e.ms.Add(ctx, bad); !errors.Is(err, marketplace.ErrMalformedCatalog) {
		t.Fatalf("add of a malformed catalog: %v", err)
	}
	if _, err := e.ms.Add(ctx, t.TempDir()); !errors.Is(err, marketplace.ErrMalformedCatalog) || !strings.Contains(err.Error(), "has no .claude-plugin/marketplace.json") {
		t.Fatalf("add of a directory without a catalog: %v", err)
	}
	sameSnapshot(t, "malformed add", before, snapshot(t, e.cfg))
	// A hand-edited name never reaches a file path.
	if err := e.ms.Settings.PutMarketplace(ctx, settings.Marketplace{Name: "../../x", Source: "https://example.com/x", Commit: strings.Repeat("a", 40)}); err != nil {
		t.Fatal(err)
	}
	if found, notes, err := e.ms.Search(ctx, "", ""); err != nil || len(notes) != 1 || !strings.Contains(notes[0], "not a marketplace name") || len(found) != 6 {
		t.Fatalf("search with a hand-edited name: %d found, notes %v, %v", len(found), notes, err)
	}
	if err := e.ms.Remove(ctx, "../../x"); !errors.Is(err, marketplace.ErrNoMarketplace) {
		t.Fatalf("remove of a hand-edited name: %v", err)
	}
	// A marketplace that was never added leaves <name>@<version> a crate.
	if src, ok := e.ms.Source(ctx, "greeter@nowhere"); ok {
		t.Fatalf("greeter@nowhere resolved to %+v", src)
	}
}

// gitCmd runs the git CLI in dir with a hermetic environment.
func gitCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func commitAll(t *testing.T, dir, msg string) string {
	t.Helper()
	gitCmd(t, dir, "add", "-A")
	gitCmd(t, dir, "commit", "-q", "-m", msg)
	return gitCmd(t, dir, "rev-parse", "HEAD")
}

// serveGit serves every repository under root through git http-backend
// on 127.0.0.1 and returns the base URL.
func serveGit(t *testing.T, root string) string {
	t.Helper()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	h := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"},
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL
}

func TestInstallFromAGitMarketplaceOverLoopback(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	root := t.TempDir()
	url := serveGit(t, root)
	// The greeter lives in a repository of its own, pinned by sha.
	greeter := filepath.Join(root, "greeter")
	if err := packaging.CopyTree(filepath.Join("testdata", "market", "plugins", "greeter"), greeter); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, greeter, "init", "-q", "-b", "main")
	greeterSHA := commitAll(t, greeter, "greeter")
	writeFile(t, filepath.Join(greeter, "README.md"), "a later commit the pin does not take\n")
	commitAll(t, greeter, "later")

	market := filepath.Join(root, "market")
	if err := packaging.CopyTree(filepath.Join("testdata", "market"), market); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(market, "plugins", "greeter")); err != nil {
		t.Fatal(err)
	}
	cat, _ := os.ReadFile(filepath.Join(market, ".claude-plugin", "marketplace.json"))
	writeFile(t, filepath.Join(market, ".claude-plugin", "marketplace.json"), strings.Replace(string(cat),
		`"source": "./plugins/greeter"`, `"source": {"source": "url", "url": "`+url+`/greeter", "ref": "main", "sha": "`+greeterSHA+`"}`, 1))
	gitCmd(t, market, "init", "-q", "-b", "main")
	first := commitAll(t, market, "catalog")

	mk, err := e.ms.Add(ctx, url+"/market")
	if err != nil {
		t.Fatal(err)
	}
	if mk.Commit != first || mk.Source != url+"/market" {
		t.Fatalf("added %+v, want commit %s", mk.Marketplace, first)
	}
	// Search reads the cached catalog: no network.
	if found, _, err := e.ms.Search(ctx, "", "greet"); err != nil || len(found) != 1 || !strings.HasPrefix(found[0].Source, url+"/greeter@"+greeterSHA) {
		t.Fatalf("search = %+v, %v", found, err)
	}
	g, err := e.m.Install(ctx, manager.InstallRequest{Source: "greeter@yolop-fixtures", Consent: accept})
	if err != nil {
		t.Fatal(err)
	}
	if g.Entry.Commit != greeterSHA {
		t.Fatalf("greeter pinned at %s, want %s", g.Entry.Commit, greeterSHA)
	}
	if _, err := os.Stat(filepath.Join(e.cfg, "extensions", "greeter", "README.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("greeter was fetched past its sha: %v", err)
	}
	b, err := e.m.Install(ctx, manager.InstallRequest{Source: "bash-guard@yolop-fixtures", Consent: accept})
	if err != nil {
		t.Fatal(err)
	}
	if b.Entry.Commit != first || b.Entry.Version != "0.1.0" {
		t.Fatalf("bash-guard entry %+v, want commit %s", b.Entry, first)
	}
	for _, f := range []string{"plugin.json", "server.py"} {
		if _, err := os.Stat(filepath.Join(e.cfg, "extensions", "bash-guard", f)); err != nil {
			t.Fatalf("the plugin's directory is not what was stored: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(e.cfg, "extensions", "bash-guard", ".claude-plugin")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the marketplace root was stored, not the plugin: %v", err)
	}

	// The marketplace moves on; installed plugins stay at the commit the
	// catalog was read at until the marketplace is added again.
	writeFile(t, filepath.Join(market, "plugins", "bash-guard", "plugin.json"), `{
  "name": "bash-guard", "version": "0.2.0",
  "yolop": {"protocol_version": "1.0", "capabilityServer": {"command": "python3", "args": ["server.py"]},
    "tools": [{"name": "guard_status", "description": "Say what the guard blocks"}, {"name": "guard_off", "description": "Turn the guard off"}]}
}`)
	second := commitAll(t, market, "bash-guard 0.2.0")
	out, err := e.m.Update(ctx, "bash-guard", nil)
	if err != nil || !out.Unchanged {
		t.Fatalf("update before the marketplace moved: %+v, %v", out, err)
	}
	if mk, err = e.ms.Update(ctx, "yolop-fixtures"); err != nil || mk.Commit != second {
		t.Fatalf("marketplace update: %+v, %v", mk, err)
	}
	before := snapshot(t, e.cfg)
	if _, err := e.m.Update(ctx, "bash-guard", func(_ context.Context, p manager.Proposal) error {
		if !p.Change.Widens() || !strings.Contains(p.Text, "guard_off") {
			t.Errorf("proposal = %s", p.Text)
		}
		return packaging.ErrNotApproved
	}); !errors.Is(err, packaging.ErrNotApproved) {
		t.Fatalf("declined update: %v", err)
	}
	sameSnapshot(t, "declined update", before, snapshot(t, e.cfg))
	out, err = e.m.Update(ctx, "bash-guard", accept)
	if err != nil || out.Entry.Commit != second || out.Entry.Version != "0.2.0" {
		t.Fatalf("accepted update: %+v, %v", out, err)
	}

	// Remove forgets the marketplace and its cache; the plugins stay.
	if err := e.ms.Remove(ctx, "yolop-fixtures"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e.cfg, "cache", "marketplaces", "yolop-fixtures.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("cached catalog left: %v", err)
	}
	if err := e.ms.Remove(ctx, "yolop-fixtures"); !errors.Is(err, marketplace.ErrNoMarketplace) {
		t.Fatalf("second remove: %v", err)
	}
	if _, err := e.m.Update(ctx, "bash-guard", accept); !errors.Is(err, marketplace.ErrNoMarketplace) {
		t.Fatalf("update after remove: %v", err)
	}
	if _, err := e.m.Store().VerifyInstalled(ctx, "bash-guard"); err != nil {
		t.Fatal(err)
	}
}

// Entries that are Claude Code plugins, with no yolop facet, install from
// a git marketplace on a loopback server the same way: stored, pinned at
// the marketplace's commit, and refused once a hook script is edited
// after approval.
func TestInstallClaudeCodePluginsFromAMarketplace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	root := t.TempDir()
	dir := filepath.Join(root, "ccmarket")
	if err := packaging.CopyTree(filepath.Join("testdata", "ccmarket"), dir); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, dir, "init", "-q", "-b", "main")
	commit := commitAll(t, dir, "catalog")
	if _, err := e.ms.Add(ctx, serveGit(t, root)+"/ccmarket"); err != nil {
		t.Fatal(err)
	}
	var summaries []string
	consent := func(_ context.Context, p manager.Proposal) error { summaries = append(summaries, p.Text); return nil }
	for _, p := range []string{"commit-commands", "push-guard"} {
		out, err := e.m.Install(ctx, manager.InstallRequest{Source: p + "@cc-fixtures", Consent: consent})
		if err != nil {
			t.Fatalf("install %s: %v", p, err)
		}
		if out.Entry.Kind != packaging.SourceMarketplace || out.Entry.Version != "1.0.0" || out.Entry.Commit != commit {
			t.Fatalf("install %s: %+v", p, out.Entry)
		}
		mf, err := out.Entry.ApprovedManifest()
		if err != nil || mf.Yolop != nil || mf.Declarative == nil {
			t.Fatalf("%s is not approved as a Claude Code plugin: %+v, %v", p, mf, err)
		}
	}
	if len(summaries) != 2 || !strings.Contains(summaries[0], "commit") || !strings.Contains(summaries[1], "guard.py") {
		t.Fatalf("consent summaries:\n%s", strings.Join(summaries, "\n---\n"))
	}
	writeFile(t, filepath.Join(e.cfg, "extensions", "push-guard", "hooks", "guard.py"), "import sys\nsys.exit(0)\n")
	if _, err := e.m.Enable(ctx, "push-guard"); err == nil || !strings.Contains(err.Error(), "guard.py") {
		t.Fatalf("enable after the hook script was edited: %v", err)
	}
}
