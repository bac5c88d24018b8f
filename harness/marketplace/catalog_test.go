package marketplace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseCatalogReadsClaudeCodesFormat(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("testdata", "market", filepath.FromSlash(CatalogPath)))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseCatalog(data)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "yolop-fixtures" || c.Owner != "yolop tests" || len(c.Plugins) != 2 {
		t.Fatalf("catalog = %+v", c)
	}
	g := c.Plugins[0]
	if g.Name != "bash-guard" || g.Version != "0.1.0" || g.Category != "security" || g.Err != nil || g.Source != (Source{Kind: KindPath, Path: "plugins/bash-guard"}) {
		t.Fatalf("entry 0 = %+v", g)
	}
	if _, err := c.Entry("nope"); !errors.Is(err, ErrNoPlugin) || !strings.Contains(err.Error(), "bash-guard, greeter") {
		t.Fatalf("missing entry: %v", err)
	}
}

func TestEntrySources(t *testing.T) {
	t.Parallel()
	sha := strings.Repeat("ab", 20)
	for _, tc := range []struct {
		source string
		root   string
		want   Source
		err    string // substring of the entry's error; "" means usable
	}{
		{source: `"./plugins/x"`, want: Source{Kind: KindPath, Path: "plugins/x"}},
		{source: `"./"`, want: Source{Kind: KindPath, Path: "."}},
		{source: `"x"`, root: "./plugins", want: Source{Kind: KindPath, Path: "plugins/x"}},
		{source: `"./plugins/x"`, root: "./plugins", want: Source{Kind: KindPath, Path: "plugins/x"}},
		{source: `{"source":"github","repo":"owner/repo","ref":"v2.0.0","sha":"` + sha + `"}`, want: Source{Kind: KindGitHub, Repo: "owner/repo", Ref: "v2.0.0", SHA: sha}},
		{source: `{"source":"url","url":"https://gitlab.com/team/plugin.git"}`, want: Source{Kind: KindURL, URL: "https://gitlab.com/team/plugin.git"}},
		{source: `{"source":"git-subdir","url":"https://example.com/mono.git","path":"tools/p","ref":"main"}`, want: Source{Kind: KindGitSubdir, URL: "https://example.com/mono.git", Path: "tools/p", Ref: "main"}},
		// Hostile or unknown: each entry is kept, with why it cannot install.
		{source: `"../outside"`, err: "leaves the marketplace root"},
		{source: `"./plugins/../../outside"`, err: "leaves the marketplace root"},
		{source: `"x"`, root: "./plugins/../..", err: "leaves the marketplace root"},
		{source: `"/etc"`, err: "absolute"},
		{source: `"./a\\b"`, err: "backslash"},
		{source: `"./.git/hooks"`, err: ".git"},
		{source: `{"source":"npm","package":"@acme/plugin"}`, err: `source kind "npm"`},
		{source: `{"source":"pip","package":"acme"}`, err: `source kind "pip"`},
		{source: `{"repo":"owner/repo"}`, err: "relative path or an object"},
		{source: `42`, err: "relative path or an object"},
		{source: `"https://example.com/p.git"`, err: `{"source": "url"`},
		{source: `{"source":"github","repo":"../x"}`, err: "not owner/repo"},
		{source: `{"source":"github","repo":"owner/repo","sha":"abc123"}`, err: "not a full commit id"},
		{source: `{"source":"url","url":"https://e.com/p.git","ref":"--upload-pack=x"}`, err: "not a branch or tag"},
		{source: `{"source":"git-subdir","url":"https://e.com/p.git","path":"../x"}`, err: "inside the repository"},
	} {
		meta := ""
		if tc.root != "" {
			meta = `"metadata":{"pluginRoot":"` + tc.root + `"},`
		}
		data := `{"name":"m","owner":{"name":"o"},` + meta + `"plugins":[{"name":"p","source":` + tc.source + `}]}`
		c, err := ParseCatalog([]byte(data))
		if tc.root == "./plugins/../.." {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrMalformedCatalog) {
				t.Errorf("pluginRoot %s: err = %v", tc.root, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: the catalog is refused: %v", tc.source, err)
			continue
		}
		e := c.Plugins[0]
		if tc.err == "" {
			if e.Err != nil || e.Source != tc.want {
				t.Errorf("%s: source = %+v, err %v; want %+v", tc.source, e.Source, e.Err, tc.want)
			}
			continue
		}
		if e.Err == nil || !errors.Is(e.Err, ErrUnsupportedSource) || !strings.Contains(e.Err.Error(), tc.err) || !strings.Contains(e.Err.Error(), "plugin p") {
			t.Errorf("%s: entry err = %v, want ErrUnsupportedSource naming %q", tc.source, e.Err, tc.err)
		}
	}
}

func TestMalformedCatalogsAreRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ data, want string }{
		{`not json`, "invalid character"},
		{`[]`, "cannot unmarshal"},
		{`{"owner":{"name":"o"},"plugins":[]}`, "marketplace name"},
		{`{"name":"Bad Name","owner":{"name":"o"},"plugins":[]}`, "marketplace name"},
		{`{"name":"m","plugins":[]}`, "owner"},
		{`{"name":"m","owner":"o","plugins":[]}`, "owner"},
		{`{"name":"m","owner":{"name":"o"}}`, "plugins must be an array"},
		{`{"name":"m","owner":{"name":"o"},"plugins":null}`, "plugins must be an array"},
		{`{"name":"m","owner":{"name":"o"},"plugins":{"p":{}}}`, "plugins must be an array"},
		{`{"name":"m","owner":{"name":"o"},"plugins":[{"source":"./p"}]}`, "not a plugin name"},
		{`{"name":"m","owner":{"name":"o"},"plugins":[{"name":"../p","source":"./p"}]}`, "not a plugin name"},
		{`{"name":"m","owner":{"name":"o"},"plugins":[{"name":"p","source":"./p"},{"name":"p","source":"./q"}]}`, "listed twice"},
		{`{"name":"m","owner":{"name":"o"},"plugins":[` + strings.Repeat(" ", MaxCatalogBytes) + `]}`, "larger than"},
	} {
		_, err := ParseCatalog([]byte(tc.data))
		if !errors.Is(err, ErrMalformedCatalog) || !strings.Contains(err.Error(), tc.want) {
			name := tc.data
			if len(name) > 80 {
				name = name[:80]
			}
			t.Errorf("%s: err = %v, want ErrMalformedCatalog with %q", name, err, tc.want)
		}
	}
}

func FuzzParseCatalog(f *testing.F) {
	data, _ := os.ReadFile(filepath.Join("testdata", "market", filepath.FromSlash(CatalogPath)))
	f.Add(data)
	f.Add([]byte(`{"name":"m","owner":{"name":"o"},"metadata":{"pluginRoot":"p"},"plugins":[{"name":"p","source":{"source":"git-subdir","url":"u","path":"a/../b"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCatalog(data)
		if err != nil {
			return
		}
		for _, e := range c.Plugins {
			if e.Err != nil {
				continue
			}
			if p := e.Source.Path; p != "" && (p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/")) {
				t.Fatalf("entry %s escapes: %q", e.Name, p)
			}
		}
	})
}
