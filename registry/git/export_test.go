package git

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckEntryName(t *testing.T) {
	refused := []string{
		"", ".", "..", "a..b", "...",
		".git", ".GIT", ".Git", "git~1", "GIT~2", ".git.", ".git ", ".git. .",
		".g\u200cit", "\ufeff.git",
		"a/b", `a\b`, "a\x00b", "a\nb", "tab\tname", "del\x7f", "name\r",
		"x:y", ".git::$INDEX_ALLOCATION",
		"trailing.", "trailing ",
		"nul", "NUL.txt", "com1", "lpt9.rs", "aux.c", "con",
		strings.Repeat("a", 256), "\xff\xfe",
	}
	for _, name := range refused {
		if why := checkEntryName(name); why == "" {
			t.Errorf("checkEntryName(%q) accepted, want refused", name)
		}
	}
	accepted := []string{
		"plugin.json", ".gitmodules", ".gitignore", ".github", "git", "git~", "git~x",
		"bin", "server.py", "README.md", "a.b.c", "UPPER", "ünïcode", "nul-ish", "console",
		strings.Repeat("a", 255),
	}
	for _, name := range accepted {
		if why := checkEntryName(name); why != "" {
			t.Errorf("checkEntryName(%q) refused (%s), want accepted", name, why)
		}
	}
}

func FuzzCheckEntryName(f *testing.F) {
	for _, seed := range []string{"plugin.json", ".git", "git~1", ".GIT.", "a..b", `a\b`, "a/b", "nul", ".g\u200cit", "\x00", "ok name"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if checkEntryName(name) != "" {
			return
		}
		const root = "/root/pkg"
		if p := filepath.Join(root, name); filepath.Dir(p) != root || filepath.Base(p) != name {
			t.Fatalf("accepted %q escapes or is rewritten: %q", name, p)
		}
		if isDotGit(name) || strings.ContainsAny(name, "/\\:\x00") || strings.Contains(name, "..") {
			t.Fatalf("accepted unsafe name %q", name)
		}
		if strings.EqualFold(strings.TrimRight(stripIgnorable(name), ". "), ".git") {
			t.Fatalf("accepted a .git variant %q", name)
		}
	})
}
