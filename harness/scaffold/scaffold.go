package scaffold

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"yolop.dev/packaging"
)

// Languages a package can be scaffolded in.
const (
	// Python is one stdlib-only file, bin/yolop-extension-<name>, run by
	// python3 (3.8 or later). Nothing to build.
	Python = "python"
	// TypeScript is one dependency-free file for Node.js (18 or later),
	// bin/yolop-extension-<name>: JavaScript with `// @ts-check` and JSDoc
	// types, so it runs without a compile step and type-checks with tsc.
	TypeScript = "typescript"
	// Go is a module on the Go SDK (yolop.dev/core/sdk), built into bin/.
	Go = "go"
	// Rust is a crate whose only dependency is serde_json, the compiled
	// twin of the raw-protocol servers, built into bin/ by cargo.
	Rust = "rust"
)

// DefaultTool is the tool a package gets when it is asked for nothing
// else it could contribute.
const DefaultTool = "hello"

// Langs lists the languages, in the order help text shows them.
var Langs = []string{Python, TypeScript, Go, Rust}

// Options say what to scaffold. Name and Lang are required; every other
// field's zero value leaves that facet out.
type Options struct {
	// Name is the extension name: lowercase letters, digits, '-' and '_',
	// starting with a letter or digit (capability ref ext:<name>).
	Name string
	// Lang is one of [Langs].
	Lang string
	// Dir is the package directory to create; it must not exist. Empty
	// means <Name> in the working directory.
	Dir string
	// Tools are tool names; each gets a manifest entry with an input
	// schema and "example" arguments (so doctor calls it), and a handler.
	// With no tools, hooks, commands or prompt asked for, the package gets
	// one tool, [DefaultTool].
	Tools []string
	// Hooks are subscriptions: "<event>" (pre_tool_use or post_tool_use,
	// on tools named "bash") or "<event>:<glob>" for another matcher.
	Hooks []string
	// Prompt adds a static system-prompt contribution.
	Prompt bool
	// DynamicPrompt adds a per-turn prompt/contribution handler.
	DynamicPrompt bool
	// Commands are slash-command names, served as /<name>:<command>.
	Commands []string
	// Status opts into status/changed, with an emit_status helper.
	Status bool
	// Ask opts into ui/ask, with an ask helper the first tool uses.
	Ask bool
	// Config adds a config_schema with one optional field and handles
	// config/changed.
	Config bool
	// Skills ships skills/<name>/SKILL.md and declares skills.
	Skills bool
	// SDK (Python and TypeScript only) writes the server on the
	// language's yolop SDK, vendored into the package (see [SDKDir]) so
	// it installs and runs with no network, instead of the single-file,
	// dependency-free server.
	SDK bool

	// CoreDir (Go only) is a checkout's core/ directory to build the SDK
	// from: go.mod gets `replace yolop.dev/core => CoreDir` and the SDK's
	// go.sum, so the package builds offline. Empty means the directory of
	// the yolop checkout that Dir is inside, if it is inside one, and
	// otherwise the SDK built into this binary, written under
	// [CoreVendorDir].
	CoreDir string
	// CargoRegistry (Rust only) is a directory of crate sources (a
	// vendored registry, e.g. Debian's /usr/share/cargo/registry from
	// librust-serde-json-dev) that .cargo/config.toml points crates.io
	// at, for a machine that cannot reach crates.io. Empty means
	// crates.io.
	CargoRegistry string
}

// A Step is one build command, run in Dir.
type Step struct {
	// Dir is the directory the command runs in: the package directory.
	Dir string
	// Args is the command and its arguments.
	Args []string
	// Env is extra environment, KEY=VALUE, over the caller's.
	Env []string
}

// String is the step as a shell command line.
func (s Step) String() string {
	parts := slices.Clone(s.Env)
	for _, a := range s.Args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

// A Seam is one function the author fills in.
type Seam struct {
	// File is the package-relative file that holds it.
	File string
	// Func is the function's name.
	Func string
	// What says what it handles.
	What string
}

// A Result is what [New] wrote and what comes next.
type Result struct {
	// Name and Lang are the extension's name and language.
	Name, Lang string
	// Dir is the package directory (absolute).
	Dir string
	// Files lists the files written, package-relative, sorted.
	Files []string
	// Server is the package-relative path of the server the manifest runs:
	// bin/yolop-extension-<name>.
	Server string
	// Seams are the functions to fill in.
	Seams []Seam
	// Build are the commands that put the server in bin/; none for
	// Python and TypeScript.
	Build []Step
}

// New validates o and writes the package. Bad options are refused before
// anything is written, with an error matching one of this package's
// sentinels; the package is assembled in a temporary directory beside the
// target and renamed into place, so a failure leaves nothing behind. The
// generated manifest is checked with [packaging.Load] before the rename.
// New never runs the build steps: see [Result.RunBuild].
func New(o Options) (*Result, error) {
	sp, err := newSpec(o)
	if err != nil {
		return nil, err
	}
	dir := o.Dir
	if dir == "" {
		dir = o.Name
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("scaffold %s: %w", o.Name, err)
	}
	if _, err := os.Lstat(dir); err == nil {
		return nil, fmt.Errorf("%w: %s already exists; choose another directory (--dir) or remove it", ErrExists, dir)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("scaffold %s: %w", o.Name, err)
	}
	parent := filepath.Dir(dir)
	if fi, err := os.Stat(parent); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: the parent directory %s does not exist; create it first", ErrInvalidOptions, parent)
	}
	if o.Lang == Go {
		if err := sp.resolveCore(o.CoreDir, dir); err != nil {
			return nil, err
		}
	}
	if o.Lang == Rust && o.CargoRegistry != "" {
		abs, err := filepath.Abs(o.CargoRegistry)
		if err != nil {
			return nil, fmt.Errorf("scaffold %s: cargo registry: %w", o.Name, err)
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("%w: the cargo registry %s is not a directory (on Debian: apt-get install librust-serde-json-dev)", ErrInvalidOptions, abs)
		}
		sp.CargoRegistry = abs
	}
	files, err := sp.render()
	if err != nil {
		return nil, err
	}

	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".scaffold-*")
	if err != nil {
		return nil, fmt.Errorf("scaffold %s: %w", o.Name, err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("scaffold %s: %w", o.Name, err)
	}
	var names []string
	for _, f := range files {
		p := filepath.Join(tmp, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, fmt.Errorf("scaffold %s: %w", o.Name, err)
		}
		if err := os.WriteFile(p, f.data, f.mode); err != nil {
			return nil, fmt.Errorf("scaffold %s: %w", o.Name, err)
		}
		names = append(names, f.path)
	}
	if _, err := packaging.Load(tmp); err != nil {
		return nil, fmt.Errorf("scaffold %s: the generated manifest does not load (a bug in the scaffold; please report it): %w", o.Name, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Lstat(dir); serr == nil {
			return nil, fmt.Errorf("%w: %s appeared while scaffolding", ErrExists, dir)
		}
		return nil, fmt.Errorf("scaffold %s: %w", o.Name, err)
	}
	slices.Sort(names)
	r := &Result{Name: o.Name, Lang: o.Lang, Dir: dir, Files: names, Server: "bin/" + sp.Binary, Seams: sp.seams()}
	for _, args := range sp.buildSteps() {
		r.Build = append(r.Build, Step{Dir: dir, Args: args.args, Env: args.env})
	}
	return r, nil
}

// RunBuild runs the build steps in order, writing their output to out
// (nil discards it). The first failing step ends the build with an error
// matching [ErrBuild] that names the step and ends with its output.
func (r *Result) RunBuild(ctx context.Context, out io.Writer) error {
	for _, s := range r.Build {
		var buf bytes.Buffer
		w := io.Writer(&buf)
		if out != nil {
			w = io.MultiWriter(&buf, out)
		}
		path, err := exec.LookPath(s.Args[0])
		if err != nil {
			return fmt.Errorf("%w: `%s` in %s: %s is not installed or not on PATH: %w", ErrBuild, s, s.Dir, s.Args[0], err)
		}
		cmd := exec.CommandContext(ctx, path, s.Args[1:]...)
		cmd.Dir = s.Dir
		cmd.Env = append(os.Environ(), s.Env...)
		cmd.Stdout, cmd.Stderr = w, w
		if err := cmd.Run(); err != nil {
			hint := ""
			switch {
			case r.Lang == Rust && !slices.Contains(r.Files, ".cargo/config.toml"):
				hint = "\nif this machine cannot reach crates.io, remove the package and scaffold it again with a directory source for serde_json (--cargo-registry /usr/share/cargo/registry, from Debian's librust-serde-json-dev)"
			}
			return fmt.Errorf("%w: `%s` in %s: %w\n%s%s", ErrBuild, s, s.Dir, err, tail(buf.String(), 4000), hint)
		}
	}
	return nil
}

// Next lists the commands that take the package from here to a running
// extension: build (if needed), install, doctor, enable.
func (r *Result) Next() []string {
	var out []string
	for _, s := range r.Build {
		out = append(out, fmt.Sprintf("(cd %s && %s)", shellQuote(r.Dir), s))
	}
	return append(out,
		"yolop ext install "+shellQuote(r.Dir)+" --yes",
		"yolop ext doctor "+r.Name,
		"yolop ext enable "+r.Name,
	)
}

// Text is a summary for people and agents: what was written, the seams
// to fill in and the next commands.
func (r *Result) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "scaffolded extension %s (%s) in %s:\n", r.Name, r.Lang, r.Dir)
	vendoredCore := 0
	for _, f := range r.Files {
		if strings.HasPrefix(f, CoreVendorDir+"/") {
			vendoredCore++
			continue
		}
		fmt.Fprintf(&b, "  %s\n", f)
	}
	if vendoredCore > 0 {
		fmt.Fprintf(&b, "  %s/  (the Go SDK's source, %d files: this yolop's yolop.dev/core, which go.mod replaces the module with)\n", CoreVendorDir, vendoredCore)
	}
	b.WriteString("fill in (the rest speaks the protocol and needs no edits):\n")
	for _, s := range r.Seams {
		fmt.Fprintf(&b, "  %s  %s: %s\n", s.File, s.Func, s.What)
	}
	b.WriteString("next:\n")
	for _, n := range r.Next() {
		fmt.Fprintf(&b, "  %s\n", n)
	}
	return b.String()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
