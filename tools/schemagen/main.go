// Command schemagen generates the published YEP schema from the wire types
// of yolop.dev/core/yep, the single source of truth.
//
// It writes schema/yep/v1/schema.json (JSON Schema Draft 2020-12: payloads
// keyed by method under "messages", the error and capability_params shapes
// at the top level, every type under "$defs") and schema/yep/v1/meta.json
// (protocol versions, methods with direction, kind and gating capability,
// capability tokens, hook events, trace event types, every event type with
// its payload and whether it is forwarded as trace/event, error codes).
// The payload of every event type of yep.Events is a $defs entry, and
// trace/event's data is typed by the event's type.
//
// Structure staged behind the yep_unstable build tag of core/yep is not in
// those files: a build without the tag does not have it. -unstable runs the
// generator built with the tag (`go run -tags yep_unstable`), which writes
// schema/yep/v1/unstable/schema.json and meta.json instead — the target of
// an SDK generator that wants the staged structure — and never the stable
// files. -check checks both sets.
//
// Usage, from anywhere inside the repository:
//
//	go run ./tools/schemagen                   # regenerate the stable files
//	go run ./tools/schemagen -unstable         # regenerate the unstable files
//	go run ./tools/schemagen -check            # exit 1, with a diff, when a file of either set is stale
//	go run ./tools/schemagen -unstable -check  # check only the unstable files
//
// The repository root is found by walking up from the working directory to
// go.work; -root overrides it. Descriptions come from the doc comments of
// core/yep, so a comment change regenerates too. The rules the Go types
// cannot express (required fields, closed enums, the shape of each
// capability token's params) are the tables in tables.go.
package main

//go:generate go run . -root ../..
//go:generate go run . -unstable -root ../..

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"yolop.dev/core/yep"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the command; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("schemagen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	check := fs.Bool("check", false, "do not write; exit 1 and print a diff when a generated file is stale or missing (with -unstable, only the unstable files; without, both sets)")
	unstable := fs.Bool("unstable", false, "generate "+UnstableDir+" from core/yep built with the "+UnstableTag+" tag (runs `go run -tags "+UnstableTag+"`), not the stable files")
	root := fs.String("root", "", "repository root (default: the directory of the go.work above the working directory)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *root == "" {
		wd, err := os.Getwd()
		if err != nil {
			fmt.Fprintf(stderr, "schemagen: %v\n", err)
			return 2
		}
		r, err := FindRoot(wd)
		if err != nil {
			fmt.Fprintf(stderr, "schemagen: %v\n", err)
			return 2
		}
		*root = r
	}
	// The unstable build runs elsewhere: -root must not depend on the
	// working directory.
	abs, err := filepath.Abs(*root)
	if err != nil {
		fmt.Fprintf(stderr, "schemagen: %v\n", err)
		return 2
	}
	*root = abs
	if *unstable && !yep.Unstable {
		// Only a build with the tag has the staged types.
		return runUnstable(ctx, *root, *check, stdout, stderr)
	}
	files, err := GenerateAt(*root)
	if err != nil {
		fmt.Fprintf(stderr, "schemagen: %v\n", err)
		return 1
	}
	paths := SchemaPath + " and " + MetaPath
	if yep.Unstable {
		paths = UnstableSchemaPath + " and " + UnstableMetaPath
	}
	if *check {
		code := 0
		if err := Check(*root, files); err != nil {
			fmt.Fprintf(stderr, "schemagen: %v\n", err)
			code = 1
		} else {
			fmt.Fprintf(stdout, "schemagen: %s are up to date\n", paths)
		}
		if !yep.Unstable {
			code = max(code, runUnstable(ctx, *root, true, stdout, stderr))
		}
		return code
	}
	if err := Write(*root, files); err != nil {
		fmt.Fprintf(stderr, "schemagen: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "schemagen: wrote %s\n", paths)
	return 0
}

// runUnstable runs this command built with [UnstableTag] on root, to write
// or check the unstable files, and returns its exit code.
func runUnstable(ctx context.Context, root string, check bool, stdout, stderr io.Writer) int {
	dir, err := sourceDir(root)
	if err != nil {
		fmt.Fprintf(stderr, "schemagen: %v\n", err)
		return 2
	}
	args := []string{"run", "-tags", UnstableTag, ".", "-root", root}
	if check {
		args = append(args, "-check")
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return max(exit.ExitCode(), 1)
		}
		fmt.Fprintf(stderr, "schemagen: running the %s build (go %s in %s): %v\n", UnstableTag, strings.Join(args, " "), dir, err)
		return 1
	}
	return 0
}

// sourceDir returns the directory of this command's source, to build it
// with another tag: root/tools/schemagen when root is the repository, else
// the directory it was compiled from.
func sourceDir(root string) (string, error) {
	dir := filepath.Join(root, "tools", "schemagen")
	if _, err := os.Stat(filepath.Join(dir, "main.go")); err == nil {
		return dir, nil
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		if _, err := os.Stat(file); err == nil {
			return filepath.Dir(file), nil
		}
	}
	return "", fmt.Errorf("no tools/schemagen under %s to build with the %s tag, and this binary does not know its source directory: pass the repository root as -root", root, UnstableTag)
}

// FindRoot returns the nearest directory at or above dir holding go.work.
func FindRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.work at or above %s: run from inside the yolop repository or pass -root", dir)
		}
		d = parent
	}
}

// GenerateAt generates the files from core/yep as compiled in, with docs
// read from root/core/yep.
//
// A build with [UnstableTag] generates the unstable files from the staged
// types; one without generates the stable files.
func GenerateAt(root string) (map[string][]byte, error) {
	var tags []string
	if yep.Unstable {
		tags = append(tags, UnstableTag)
	}
	src, err := ParseSource(filepath.Join(root, "core", "yep"), tags...)
	if err != nil {
		return nil, err
	}
	return Generate(DefaultInput(src))
}

// Write writes files under root.
func Write(root string, files map[string][]byte) error {
	for _, path := range sortedKeys(files) {
		full := filepath.Join(root, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return fmt.Errorf("creating the directory of %s: %w", path, err)
		}
		if err := os.WriteFile(full, files[path], 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}

// ErrStale is matched by the error of [Check] when a file differs.
var ErrStale = errors.New("generated file is stale")

// Check compares files with what is on disk under root. The error names
// every stale or missing file, with a unified diff (committed → generated),
// and says how to regenerate.
func Check(root string, files map[string][]byte) error {
	var msgs []string
	for _, path := range sortedKeys(files) {
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
		if errors.Is(err, os.ErrNotExist) {
			msgs = append(msgs, path+" is missing")
			continue
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		if !bytes.Equal(got, files[path]) {
			diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
				A:        difflib.SplitLines(string(got)),
				B:        difflib.SplitLines(string(files[path])),
				FromFile: path + " (committed)",
				ToFile:   path + " (generated)",
				Context:  2,
			})
			if err != nil {
				return fmt.Errorf("diffing %s: %w", path, err)
			}
			msgs = append(msgs, fmt.Sprintf("%s is stale:\n%s", path, diff))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	command := "go run ./tools/schemagen"
	for path := range files {
		if strings.HasPrefix(path, UnstableDir) {
			command += " -unstable"
			break
		}
	}
	return fmt.Errorf("%w: %s\nThe generated files do not match core/yep (a wire type or doc comment changed, or a file was edited by hand): run `%s` from the repository root and commit the result", ErrStale, strings.Join(msgs, "\n"), command)
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
