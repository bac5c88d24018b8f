package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/packaging"
)

// A Claude Code marketplace through the binary: add a directory's
// catalog, search it, install an entry by <plugin>@<marketplace>
// (a yolop package, and a Claude Code plugin without the facet from a
// second catalog: their lock entries pin the stored copies), refuse a plugin
// the catalog does not list, and remove the marketplace.
func TestExtMarketplaceThroughTheBinary(t *testing.T) {
	t.Parallel()
	cfg, work := filepath.Join(t.TempDir(), "config"), t.TempDir()
	market := filepath.Join(work, "market")
	if err := packaging.CopyTree(filepath.Join("..", "..", "harness", "marketplace", "testdata", "market"), market); err != nil {
		t.Fatal(err)
	}
	out := must(t, cfg, work, "ext", "marketplace", "add", "./market")
	mustContain(t, "add", out, "added marketplace yolop-fixtures (2 plugins) from "+market)
	if err := packaging.CopyTree(filepath.Join("..", "..", "harness", "marketplace", "testdata", "ccmarket"), filepath.Join(work, "ccmarket")); err != nil {
		t.Fatal(err)
	}
	must(t, cfg, work, "ext", "marketplace", "add", "./ccmarket")
	out = must(t, cfg, work, "ext", "search", "--marketplace", "yolop-fixtures", "push")
	mustContain(t, "search", out, "bash-guard@yolop-fixtures", "0.1.0", "Blocks git push")
	if strings.Contains(out, "greeter") {
		t.Errorf("search push listed the greeter:\n%s", out)
	}
	out = must(t, cfg, work, "ext", "install", "greeter@yolop-fixtures", "--yes")
	mustContain(t, "install", out, "Extension greeter 0.2.0")
	// A Claude Code plugin, no yolop facet: its summary shows its hook
	// script.
	out = must(t, cfg, work, "ext", "install", "push-guard@cc-fixtures", "--yes")
	mustContain(t, "install push-guard", out, "push-guard", "guard.py")
	lock, err := packaging.ReadLockFile(filepath.Join(cfg, packaging.LockFileName))
	if err != nil || lock.Entry("greeter") == nil || lock.Entry("greeter").Kind != packaging.SourceMarketplace || lock.Entry("greeter").Source != "greeter@yolop-fixtures" || lock.Entry("push-guard") == nil || lock.Entry("push-guard").Kind != packaging.SourceMarketplace {
		t.Fatalf("lock = %+v, %v", lock, err)
	}
	before, _ := os.ReadFile(filepath.Join(cfg, packaging.LockFileName))
	_, errOut, code := yolopProc(t, cfg, work, "", "ext", "install", "missing@yolop-fixtures", "--yes")
	if code == 0 || !strings.Contains(errOut, `"missing" is not listed by marketplace yolop-fixtures (it lists: bash-guard, greeter)`) {
		t.Fatalf("install of a missing plugin: exit %d\n%s", code, errOut)
	}
	if after, _ := os.ReadFile(filepath.Join(cfg, packaging.LockFileName)); string(after) != string(before) {
		t.Error("a failed install changed extensions.lock")
	}
	out = must(t, cfg, work, "ext", "marketplace", "update", "yolop-fixtures")
	mustContain(t, "update", out, "updated marketplace yolop-fixtures (2 plugins)")
	must(t, cfg, work, "ext", "marketplace", "remove", "yolop-fixtures")
	out = must(t, cfg, work, "ext", "marketplace", "list", "--json")
	if strings.Contains(out, "yolop-fixtures") || !strings.Contains(out, `"name": "cc-fixtures"`) {
		t.Errorf("list after remove = %s", out)
	}
}
