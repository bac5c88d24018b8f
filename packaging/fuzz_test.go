package packaging

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

var manifestSeeds = []string{
	`{"name":"lsp","version":"0.1.0","yolop":{"protocol_version":"1.0","capabilityServer":{"command":"yolop-extension-lsp"},"tools":[{"name":"lsp_hover","never_defer":true}]}}`,
	`{"name":"x","version":"1","yolop":{"protocol_version":"2.0"}}`,
	`{"name":"x","version":"1","yolop":{"protocol_version":"1.0","capabilityServer":{"command":"../../bin/sh"}}}`,
	`{"name":"x","version":"1","yolop":{"protocol_version":"1.0","config_schema":{"$ref":"../x"}}}`,
	`{"name":"x","version":"1","yolop":{"protocol_version":"1.0","prompt":"hi"}}`,
	`{"name":"x","version":"1","yolop":{"protocol_version":"1.0","prompt":{"file":"p.md","dynamic":true}}}`,
	`{"name":"x","version":"1","yolop":{"protocol_version":"1.0","capabilityServer":{"command":"s"},"hooks":[{"event":"pre_tool_use","matcher":"["}]}}`,
	`{"name":"x","version":"1","yolop":{"protocol_version":"1.0","config_schema":{"properties":{"a":{"secret":true,"env":"A"}}}}}`,
	`{"name":"x","version":"1","yolop":{"protocol_version":"1.0","mcpServers":[{"name":"m","type":"http","url":"https://h"}]}}`,
	`{"name":1}`, `[]`, `null`, ``, `{"name":"x","version":"1","yolop":null}`,
}

func FuzzLoad(f *testing.F) {
	for _, s := range manifestSeeds {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	os.WriteFile(filepath.Join(dir, "p.md"), []byte("prompt"), 0o644)
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, "plugin.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := Load(dir)
		if err != nil {
			return
		}
		_ = Summary(m)
		if c := Diff(m, m); !c.Empty() {
			t.Fatalf("a manifest differs from itself: %s", c)
		}
		if _, err := m.ConfigFields(); err != nil {
			t.Fatalf("a loaded manifest has unreadable config fields: %v", err)
		}
	})
}

var lockSeeds = []string{
	`{"version":1,"extensions":[]}`,
	`{"version":1,"extensions":[{"name":"a","source":"https://h/o/r","kind":"git","content_hash":"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","files":[],"installed_at":"2026-01-01T00:00:00Z"}]}`,
	`{"version":2}`, `{"version":1,"extensions":[{"name":"a"},{"name":"a"}]}`, `{"version":1`, ``, `[]`,
	`{"version":1,"extensions":[{"name":"a","source":"/p","kind":"path","content_hash":"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","files":[],"skills":[{"name":"deploy","description":"d","digest":"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}],"installed_at":"2026-01-01T00:00:00Z"}]}`,
	`{"version":1,"extensions":[{"name":"a","source":"/p","kind":"path","content_hash":"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","files":[],"skills":[],"installed_at":"2026-01-01T00:00:00Z"}]}`,
	`{"version":1,"extensions":[{"name":"a","source":"/p","kind":"path","content_hash":"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","files":[],"skills":[{"name":"../x","digest":"nope"}],"installed_at":"2026-01-01T00:00:00Z"}]}`,
}

func FuzzParseLock(f *testing.F) {
	for _, s := range lockSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseLock(data)
		if err != nil {
			return
		}
		out, err := l.Marshal()
		if err != nil {
			t.Fatalf("a parsed lock does not marshal: %v", err)
		}
		l2, err := ParseLock(out)
		if err != nil {
			t.Fatalf("a written lock does not parse: %v\n%s", err, out)
		}
		out2, _ := l2.Marshal()
		if !bytes.Equal(out, out2) {
			t.Fatalf("lock write is not stable:\n%s\n%s", out, out2)
		}
	})
}

func FuzzParseSource(f *testing.F) {
	for _, s := range []string{".", "https://h/o/r@v1", "git@h:o/r@x", "crates.io:a@1", "lsp", "-x", "ext::sh", "file:///x", "sparse+http://127.0.0.1:1/#a@1", "sparse+https://h/p#a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		src, err := ParseSource(s)
		if err != nil {
			return
		}
		if len(s) > 0 && s[0] == '-' {
			t.Fatalf("accepted %q", s)
		}
		again, err := ParseSource(src.String())
		if err != nil || again.Kind != src.Kind {
			t.Fatalf("%q → %q does not re-parse: %v", s, src.String(), err)
		}
		if src.Kind == SourceCrate && (again.String() != src.String() || again.Registry != src.Registry) {
			t.Fatalf("crate source %q → %q → %q (registry %q, then %q)", s, src.String(), again.String(), src.Registry, again.Registry)
		}
	})
}

func FuzzLoadCargo(f *testing.F) {
	seed, _ := os.ReadFile("testdata/cargo/Cargo.toml")
	f.Add(seed)
	f.Add([]byte("[package]\nname = \"x\"\nversion = \"1\"\n[package.metadata.yolop]\nprotocol_version = \"1.0\"\n"))
	f.Add([]byte("[package]\nname = 1\nversion = { workspace = true }\n[package.metadata]\nyolop = 3\n"))
	f.Add([]byte("[package.metadata.yolop]\nprotocol_version = 1979-05-27T07:32:00Z\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, "Cargo.toml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := Load(dir)
		if err != nil {
			return
		}
		if c := Diff(m, m); !c.Empty() {
			t.Fatalf("a manifest differs from itself: %s", c)
		}
	})
}
