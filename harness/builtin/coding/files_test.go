package coding_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"yolop.dev/harness/builtin/coding"
)

func TestTools(t *testing.T) {
	c := coding.New(coding.Options{})
	if c.Name() != "builtin:coding" {
		t.Fatalf("Name = %q", c.Name())
	}
	var names []string
	for _, d := range c.Tools() {
		names = append(names, d.Name)
		if !d.NeverDefer || d.Description == "" || !strings.Contains(string(d.InputSchema), `"type":"object"`) || !strings.Contains(string(d.InputSchema), `"required":[`) {
			t.Errorf("tool %s: never_defer %v, description %q, schema %s", d.Name, d.NeverDefer, d.Description, d.InputSchema)
		}
	}
	if d := cmp.Diff([]string{"read_file", "write_file", "edit_file", "list_files", "grep", "bash"}, names); d != "" {
		t.Fatalf("tools (-want +got):\n%s", d)
	}
}

func TestReadFile(t *testing.T) {
	f := newFixture(t, coding.Options{ReadCap: 64})
	writeFile(t, f.path("a.txt"), "one\ntwo\nthree\n")
	if res := f.ok(t, "read_file", `{"path":"a.txt"}`); res.Output != "one\ntwo\nthree\n" {
		t.Fatalf("whole file = %q", res.Output)
	}
	// An absolute path inside the root is the same file.
	if res := f.ok(t, "read_file", args(t, map[string]any{"path": f.path("a.txt")})); res.Output != "one\ntwo\nthree\n" {
		t.Fatalf("by absolute path = %q", res.Output)
	}
	res := f.ok(t, "read_file", `{"path":"a.txt","offset":2,"limit":1}`)
	if want := "two\n[lines 2-2 shown; the file continues: read on with offset=3]"; res.Output != want {
		t.Fatalf("offset 2 limit 1 = %q, want %q", res.Output, want)
	}
	if got := dataOf(t, res)["next_offset"]; got != float64(3) {
		t.Fatalf("next_offset = %v", got)
	}
	if res := f.ok(t, "read_file", `{"path":"a.txt","offset":3}`); res.Output != "three\n" {
		t.Fatalf("offset 3 = %q", res.Output)
	}
	f.fails(t, "read_file", `{"path":"a.txt","offset":9}`, "past the end", "3 lines")

	// The byte cap stops at a line boundary and says where to go on.
	var long strings.Builder
	for i := range 20 {
		fmt.Fprintf(&long, "line %02d\n", i+1) // 8 bytes each
	}
	writeFile(t, f.path("long.txt"), long.String())
	res = f.ok(t, "read_file", `{"path":"long.txt"}`)
	if !strings.HasPrefix(res.Output, "line 01\n") || !strings.Contains(res.Output, "line 08\n[lines 1-8 shown (the 64-byte cap of one read); the file continues: read on with offset=9]") {
		t.Fatalf("capped read = %q", res.Output)
	}
	if res := f.ok(t, "read_file", `{"path":"long.txt","offset":9,"limit":2}`); !strings.HasPrefix(res.Output, "line 09\nline 10\n[lines 9-10") {
		t.Fatalf("next page = %q", res.Output)
	}
	// One line longer than the cap: its head.
	writeFile(t, f.path("wide.txt"), strings.Repeat("x", 100)+"\nend\n")
	if res := f.ok(t, "read_file", `{"path":"wide.txt"}`); !strings.HasPrefix(res.Output, strings.Repeat("x", 64)+"\n[line 1 is longer than 64 bytes") {
		t.Fatalf("wide line = %q", res.Output)
	}

	writeFile(t, f.path("empty.txt"), "")
	if res := f.ok(t, "read_file", `{"path":"empty.txt"}`); res.Output != "[empty file]" {
		t.Fatalf("empty file = %q", res.Output)
	}
	writeFile(t, f.path("bin"), "\x00\x01\x02")
	f.fails(t, "read_file", `{"path":"bin"}`, "bin", "binary")
	f.fails(t, "read_file", `{"path":"nope.txt"}`, "nope.txt", "no such file")
	if err := os.Mkdir(f.path("dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.fails(t, "read_file", `{"path":"dir"}`, "dir", "list_files")
}

func TestWriteFile(t *testing.T) {
	f := newFixture(t, coding.Options{})
	res := f.ok(t, "write_file", `{"path":"new/deep/file.go","content":"package deep\n"}`)
	if res.Output != "created new/deep/file.go (13 bytes)" {
		t.Fatalf("create = %q", res.Output)
	}
	if got := readFile(t, f.path("new/deep/file.go")); got != "package deep\n" {
		t.Fatalf("file holds %q", got)
	}
	// Replacing keeps the file's permissions and leaves no temporary file.
	writeFile(t, f.path("run.sh"), "#!/bin/sh\n")
	if err := os.Chmod(f.path("run.sh"), 0o750); err != nil {
		t.Fatal(err)
	}
	if res := f.ok(t, "write_file", `{"path":"run.sh","content":"#!/bin/sh\necho hi\n"}`); res.Output != "replaced run.sh (18 bytes)" {
		t.Fatalf("replace = %q", res.Output)
	}
	if fi, err := os.Stat(f.path("run.sh")); err != nil || fi.Mode().Perm() != 0o750 {
		t.Fatalf("run.sh mode = %v, %v; want 0750 kept", fi.Mode(), err)
	}
	if got := readFile(t, f.path("run.sh")); got != "#!/bin/sh\necho hi\n" {
		t.Fatalf("run.sh holds %q", got)
	}
	entries, err := os.ReadDir(f.root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if d := cmp.Diff([]string{"new", "run.sh"}, names); d != "" {
		t.Fatalf("workspace entries (-want +got):\n%s", d)
	}
	// Empty content is a file, not a missing argument.
	f.ok(t, "write_file", `{"path":"empty","content":""}`)
	f.fails(t, "write_file", `{"path":"x"}`, "content")
	f.fails(t, "write_file", `{"path":"new","content":"x"}`, "new", "directory")
	f.fails(t, "write_file", `{"path":".","content":"x"}`, "workspace root")

	// Writing through a symbolic link inside the workspace writes its target.
	if err := os.Symlink("run.sh", f.path("link.sh")); err != nil {
		t.Fatal(err)
	}
	f.ok(t, "write_file", `{"path":"link.sh","content":"via link\n"}`)
	if got := readFile(t, f.path("run.sh")); got != "via link\n" {
		t.Fatalf("the link's target holds %q", got)
	}
	if fi, err := os.Lstat(f.path("link.sh")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("link.sh is no longer a link: %v, %v", fi, err)
	}
}

func TestEditFile(t *testing.T) {
	f := newFixture(t, coding.Options{})
	writeFile(t, f.path("a.go"), "x := 1\ny := 1\nz := 2\n")
	if err := os.Chmod(f.path("a.go"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := f.ok(t, "edit_file", `{"path":"a.go","old_string":"z := 2","new_string":"z := 3"}`)
	if res.Output != "edited a.go: 1 replacement" {
		t.Fatalf("edit = %q", res.Output)
	}
	if got := readFile(t, f.path("a.go")); got != "x := 1\ny := 1\nz := 3\n" {
		t.Fatalf("after edit %q", got)
	}
	// Ambiguous: the error counts the occurrences and the file is unchanged.
	f.fails(t, "edit_file", `{"path":"a.go","old_string":" := 1","new_string":" := 0"}`, "a.go", "occurs 2 times", "replace_all")
	if got := readFile(t, f.path("a.go")); got != "x := 1\ny := 1\nz := 3\n" {
		t.Fatalf("an ambiguous edit changed the file: %q", got)
	}
	if res := f.ok(t, "edit_file", `{"path":"a.go","old_string":" := 1","new_string":" := 0","replace_all":true}`); res.Output != "edited a.go: 2 replacements" {
		t.Fatalf("replace_all = %q", res.Output)
	}
	if got := readFile(t, f.path("a.go")); got != "x := 0\ny := 0\nz := 3\n" {
		t.Fatalf("after replace_all %q", got)
	}
	if fi, err := os.Stat(f.path("a.go")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("a.go mode = %v, %v; want 0600 kept", fi.Mode(), err)
	}
	f.fails(t, "edit_file", `{"path":"a.go","old_string":"w := 9","new_string":"w := 8"}`, "a.go", "does not occur")
	f.fails(t, "edit_file", `{"path":"a.go","old_string":"x","new_string":"x"}`, "the same")
	f.fails(t, "edit_file", `{"path":"a.go","old_string":"","new_string":"x"}`, "old_string")
	f.fails(t, "edit_file", `{"path":"missing.go","old_string":"a","new_string":"b"}`, "missing.go", "no such file")
	writeFile(t, f.path("crlf.txt"), "a\r\nb\r\n")
	f.fails(t, "edit_file", `{"path":"crlf.txt","old_string":"a\nb","new_string":"c"}`, "CRLF")
	entries, _ := os.ReadDir(f.root)
	if len(entries) != 2 {
		t.Fatalf("workspace holds %d entries, want a.go and crlf.txt (no temporary files)", len(entries))
	}
}

func TestListFiles(t *testing.T) {
	f := newFixture(t, coding.Options{})
	for _, p := range []string{"go.mod", "cmd/app/main.go", "cmd/app/main_test.go", "docs/a.md", ".git/HEAD", "internal/x/.git/config"} {
		writeFile(t, f.path(p), "x\n")
	}
	if err := os.Symlink(f.outside, f.path("out")); err != nil {
		t.Fatal(err)
	}
	res := f.ok(t, "list_files", `{}`)
	want := "cmd/\ncmd/app/\ncmd/app/main.go\ncmd/app/main_test.go\ndocs/\ndocs/a.md\ngo.mod\ninternal/\ninternal/x/\nout"
	if d := cmp.Diff(want, res.Output); d != "" {
		t.Fatalf("list (-want +got):\n%s", d) // .git skipped; the link listed, not followed
	}
	if res := f.ok(t, "list_files", `{"path":"cmd","pattern":"**/*_test.go"}`); res.Output != "cmd/app/main_test.go" {
		t.Fatalf("pattern = %q", res.Output)
	}
	if res := f.ok(t, "list_files", `{"pattern":"*/*/main.go"}`); res.Output != "cmd/app/main.go" {
		t.Fatalf("pattern = %q", res.Output)
	}
	if res := f.ok(t, "list_files", `{"pattern":"*.go"}`); !strings.HasPrefix(res.Output, "no entries") {
		t.Fatalf("*.go at the top = %q", res.Output)
	}
	res = f.ok(t, "list_files", `{"max_results":3}`)
	if want := "cmd/\ncmd/app/\ncmd/app/main.go\n[the first 3 entries; narrow path or pattern to see the rest]"; res.Output != want {
		t.Fatalf("capped = %q, want %q", res.Output, want)
	}
	if res := f.ok(t, "list_files", `{"path":"go.mod"}`); res.Output != "go.mod" {
		t.Fatalf("a file = %q", res.Output)
	}
	f.fails(t, "list_files", `{"pattern":"../*"}`, "..")
	f.fails(t, "list_files", `{"pattern":"[x"}`, "bad pattern")
	f.fails(t, "list_files", `{"path":"nope"}`, "nope")
}

func TestGrep(t *testing.T) {
	f := newFixture(t, coding.Options{})
	writeFile(t, f.path("a.go"), "package a\n\nfunc Hello() {}\n")
	writeFile(t, f.path("sub/b.go"), "package sub\n// hello there\n")
	writeFile(t, f.path("sub/c.txt"), "HELLO text\n")
	writeFile(t, f.path(".git/x"), "Hello from git\n")
	writeFile(t, f.path("bin.dat"), "Hello\x00binary")
	if err := os.Symlink(filepath.Join(f.outside, "secret.txt"), f.path("s.txt")); err != nil {
		t.Fatal(err)
	}
	res := f.ok(t, "grep", `{"pattern":"Hello"}`)
	if res.Output != "a.go:3: func Hello() {}" {
		t.Fatalf("grep = %q", res.Output)
	}
	res = f.ok(t, "grep", `{"pattern":"hello","case_insensitive":true}`)
	if want := "a.go:3: func Hello() {}\nsub/b.go:2: // hello there\nsub/c.txt:1: HELLO text"; res.Output != want {
		t.Fatalf("grep -i = %q, want %q", res.Output, want)
	}
	if res := f.ok(t, "grep", `{"pattern":"(?i)hello","glob":"*.go","path":"sub"}`); res.Output != "sub/b.go:2: // hello there" {
		t.Fatalf("glob and path = %q", res.Output)
	}
	if res := f.ok(t, "grep", `{"pattern":"^package","path":"sub/b.go"}`); res.Output != "sub/b.go:1: package sub" {
		t.Fatalf("one file = %q", res.Output)
	}
	if res := f.ok(t, "grep", `{"pattern":"secret"}`); !strings.HasPrefix(res.Output, "no matches") {
		t.Fatalf("grep followed a link out of the workspace: %q", res.Output)
	}
	res = f.ok(t, "grep", `{"pattern":"(?i)hello","max_results":2}`)
	if !strings.HasSuffix(res.Output, "[the first 2 matches; narrow the pattern, path or glob to see the rest]") || dataOf(t, res)["truncated"] != true {
		t.Fatalf("capped grep = %q", res.Output)
	}
	f.fails(t, "grep", `{"pattern":"(unclosed"}`, "regular expression")
}
