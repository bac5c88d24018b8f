// Command crosscheck type-checks every package of the workspace, from
// source, for platforms other than the one it runs on: what
// `GOOS=x GOARCH=y go build ./...` in each module checks, without
// compiling and linking the whole dependency graph once per platform.
//
// Usage, from the workspace root:
//
//	go run ./tools/crosscheck linux/arm64 darwin/arm64 windows/amd64
//
// It prints each type error with its position and exits 1 if there is
// any. Test files are not checked (nor are they by go build).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"golang.org/x/tools/go/packages"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, targets []string, stdout, stderr io.Writer) int {
	if len(targets) == 0 {
		fmt.Fprintln(stderr, "usage: crosscheck GOOS/GOARCH ...")
		return 2
	}
	patterns, err := workspacePatterns(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "crosscheck:", err)
		return 1
	}
	status := 0
	for _, t := range targets {
		goos, goarch, ok := strings.Cut(t, "/")
		if !ok || goos == "" || goarch == "" {
			fmt.Fprintf(stderr, "crosscheck: %q is not GOOS/GOARCH\n", t)
			return 2
		}
		start := time.Now()
		n, errs, err := check(ctx, "", goos, goarch, patterns)
		if err != nil {
			fmt.Fprintf(stderr, "crosscheck %s: %v\n", t, err)
			return 1
		}
		for _, e := range errs {
			fmt.Fprintf(stderr, "%s: %s\n", t, e)
		}
		if len(errs) > 0 {
			fmt.Fprintf(stderr, "crosscheck: the workspace does not type-check for %s (%d errors)\n", t, len(errs))
			status = 1
			continue
		}
		fmt.Fprintf(stdout, "crosscheck: %d packages type-check for %s (%.1fs)\n", n, t, time.Since(start).Seconds())
	}
	return status
}

// workspacePatterns is one "<module>/..." pattern per module of go.work.
func workspacePatterns(ctx context.Context) ([]string, error) {
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Path}}").Output()
	if err != nil {
		return nil, fmt.Errorf("listing the workspace's modules: %w", err)
	}
	var pats []string
	for _, m := range strings.Fields(string(out)) {
		pats = append(pats, m+"/...")
	}
	return pats, nil
}

// check loads and type-checks patterns in dir (the current directory when
// empty), and every package they import, from source for goos/goarch. It returns how many packages matched and
// their errors (those of dependencies included: a dependency that does
// not build for the platform is as fatal as our own code).
func check(ctx context.Context, dir, goos, goarch string, patterns []string) (int, []string, error) {
	cfg := &packages.Config{
		Context: ctx,
		Dir:     dir,
		Mode:    packages.LoadAllSyntax,
		Env:     append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0", "GOFLAGS=-mod=readonly"),
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return 0, nil, err
	}
	var errs []string
	seen := map[string]bool{}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			if s := e.Error(); !seen[s] {
				seen[s] = true
				errs = append(errs, s)
			}
		}
	})
	return len(pkgs), errs, nil
}
