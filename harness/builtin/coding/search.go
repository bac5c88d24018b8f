package coding

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"yolop.dev/core/yep"
)

// grepLineLen bounds the part of a line grep matches against and shows.
const (
	grepMatchLen = 64 << 10
	grepShowLen  = 300
)

// walk calls fn for every entry under t (t itself included), in lexical
// order, skipping .git directories and never following symbolic links.
// rel is the entry's path relative to t ("" for t), name its path as the
// tools show it (relative to the workspace root). Unreadable directories
// are skipped; fn returning fs.SkipAll ends the walk.
func walk(ctx context.Context, fsys fs.FS, t target, fn func(rel, name string, d fs.DirEntry) error) error {
	start := filepath.ToSlash(t.rel)
	err := fs.WalkDir(fsys, start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == start {
				return unwrapPath(err)
			}
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if p != start && d.IsDir() && d.Name() == ".git" {
			return fs.SkipDir
		}
		rel := ""
		if p != start {
			rel = strings.TrimPrefix(p, start+"/")
			if start == "." {
				rel = p
			}
		}
		return fn(rel, path.Join(t.name, rel), d)
	})
	return err
}

// compileGlob validates a glob whose "**" segments span directories and
// returns its matcher over slash-separated relative paths.
func compileGlob(pattern string) (func(rel string) bool, error) {
	pattern = strings.TrimPrefix(filepath.ToSlash(pattern), "./")
	if strings.HasPrefix(pattern, "/") || pattern == ".." || strings.HasPrefix(pattern, "../") || strings.Contains(pattern, "/../") {
		return nil, fmt.Errorf("%w: the pattern %q must be relative to path, without ..", ErrOutsideWorkspace, pattern)
	}
	segs := strings.Split(pattern, "/")
	for _, s := range segs {
		if _, err := path.Match(s, ""); err != nil {
			return nil, fmt.Errorf("bad pattern %q: %w", pattern, err)
		}
	}
	return func(rel string) bool { return globMatch(segs, strings.Split(rel, "/")) }, nil
}

func globMatch(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			pat = pat[1:]
			if len(pat) == 0 {
				return true
			}
			for i := range len(name) + 1 {
				if globMatch(pat, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// capOf is the cap of one call: the option, or fewer when asked.
func capOf(option, asked int) int {
	if asked > 0 && asked < option {
		return asked
	}
	return option
}

func (c *Coding) listFiles(ctx context.Context, ws workspace, args json.RawMessage, _ func(string)) (yep.ToolResult, error) {
	var a struct {
		Path       string `json:"path"`
		Pattern    string `json:"pattern"`
		MaxResults int    `json:"max_results"`
	}
	if err := decode("list_files", args, &a); err != nil {
		return failed(err), nil
	}
	t, err := ws.resolve(a.Path)
	if err != nil {
		return failed(err), nil
	}
	var match func(string) bool
	if a.Pattern != "" {
		if match, err = compileGlob(a.Pattern); err != nil {
			return failed(fmt.Errorf("list_files: %w", err)), nil
		}
	}
	r, err := ws.openRoot()
	if err != nil {
		return failed(err), nil
	}
	defer r.Close()
	limit := capOf(c.o.ListCap, a.MaxResults)
	var entries []string
	truncated := false
	err = walk(ctx, r.FS(), t, func(rel, name string, d fs.DirEntry) error {
		if rel == "" && d.IsDir() || rel != "" && match != nil && !match(rel) {
			return nil // the directory listed; or filtered out
		}
		if len(entries) == limit {
			truncated = true
			return fs.SkipAll
		}
		if d.IsDir() {
			name += "/"
		}
		entries = append(entries, name)
		return nil
	})
	if ctx.Err() != nil {
		return yep.ToolResult{}, ctx.Err()
	}
	if err != nil {
		return failed(fmt.Errorf("list_files %s: %w", t.name, err)), nil
	}
	out := strings.Join(entries, "\n")
	switch {
	case len(entries) == 0 && match != nil:
		out = fmt.Sprintf("no entries under %s match %q", t.name, a.Pattern)
	case len(entries) == 0:
		out = fmt.Sprintf("%s is empty", t.name)
	case truncated:
		out += fmt.Sprintf("\n[the first %d entries; narrow path or pattern to see the rest]", limit)
	}
	return yep.ToolResult{Output: out, Data: data(map[string]any{"path": t.name, "entries": len(entries), "truncated": truncated})}, nil
}

func (c *Coding) grep(ctx context.Context, ws workspace, args json.RawMessage, _ func(string)) (yep.ToolResult, error) {
	var a struct {
		Pattern         string `json:"pattern"`
		Path            string `json:"path"`
		Glob            string `json:"glob"`
		CaseInsensitive bool   `json:"case_insensitive"`
		MaxResults      int    `json:"max_results"`
	}
	if err := decode("grep", args, &a); err != nil {
		return failed(err), nil
	}
	if a.Pattern == "" {
		return failed(errors.New(`grep needs {"pattern": "<regexp>"}`)), nil
	}
	expr := a.Pattern
	if a.CaseInsensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return failed(fmt.Errorf("grep: the pattern is not a Go regular expression: %w", err)), nil
	}
	var match func(string) bool
	if a.Glob != "" {
		glob, err := compileGlob(a.Glob)
		if err != nil {
			return failed(fmt.Errorf("grep: %w", err)), nil
		}
		if strings.Contains(a.Glob, "/") {
			match = glob
		} else {
			match = func(rel string) bool { return glob(path.Base(rel)) }
		}
	}
	t, err := ws.resolve(a.Path)
	if err != nil {
		return failed(err), nil
	}
	r, err := ws.openRoot()
	if err != nil {
		return failed(err), nil
	}
	defer r.Close()
	fsys := r.FS()
	limit := capOf(c.o.GrepCap, a.MaxResults)
	var out strings.Builder
	matches, files := 0, 0
	truncated := false
	err = walk(ctx, fsys, t, func(rel, name string, d fs.DirEntry) error {
		if !d.Type().IsRegular() || (match != nil && rel != "" && !match(rel)) {
			return nil
		}
		f, err := fsys.Open(path.Join(filepath.ToSlash(t.rel), rel))
		if err != nil {
			return nil // unreadable: skipped, as a directory walk skips it
		}
		defer f.Close()
		br := bufio.NewReaderSize(f, 64<<10)
		if head, _ := br.Peek(sniffLen); bytes.IndexByte(head, 0) >= 0 {
			return nil
		}
		found := false
		for n := 1; ; n++ {
			line, err := readLine(br, grepMatchLen)
			if line != "" {
				line = strings.TrimRight(line, "\r\n")
				if re.MatchString(line) {
					if matches == limit {
						truncated = true
						return fs.SkipAll
					}
					matches++
					if !found {
						found = true
						files++
					}
					if len(line) > grepShowLen {
						line = line[:grepShowLen] + "…"
					}
					fmt.Fprintf(&out, "%s:%d: %s\n", name, n, line)
				}
			}
			if err == io.EOF {
				return nil
			} else if err != nil {
				return nil // a read error ends this file, not the search
			}
		}
	})
	if ctx.Err() != nil {
		return yep.ToolResult{}, ctx.Err()
	}
	if err != nil {
		return failed(fmt.Errorf("grep %s: %w", t.name, err)), nil
	}
	text := out.String()
	switch {
	case matches == 0:
		text = fmt.Sprintf("no matches for %q under %s", a.Pattern, t.name)
	case truncated:
		text += fmt.Sprintf("[the first %d matches; narrow the pattern, path or glob to see the rest]", limit)
	default:
		text = strings.TrimSuffix(text, "\n")
	}
	return yep.ToolResult{Output: text, Data: data(map[string]any{"matches": matches, "files": files, "truncated": truncated})}, nil
}
