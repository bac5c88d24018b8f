package coding

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutsideWorkspace is wrapped by every refusal of a path that leaves
// the workspace root.
var ErrOutsideWorkspace = errors.New("path is outside the workspace")

// A workspace is the session's root for one call: its path as configured
// and as resolved through symbolic links.
type workspace struct {
	root string // absolute and clean, as the session names it
	real string // root with its symbolic links resolved
}

// openWorkspace resolves the root the session names now.
func openWorkspace(root string) (workspace, error) {
	if root == "" {
		return workspace{}, errors.New("this session has no workspace root")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return workspace{}, fmt.Errorf("workspace root %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return workspace{}, fmt.Errorf("workspace root %s: %w", root, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return workspace{}, fmt.Errorf("workspace root %s: %w", root, err)
	}
	if !fi.IsDir() {
		return workspace{}, fmt.Errorf("workspace root %s is not a directory", root)
	}
	return workspace{root: abs, real: real}, nil
}

// A target is a path resolved inside the workspace.
type target struct {
	// name is the path as the tool shows it: relative to the root, with
	// forward slashes ("." for the root itself).
	name string
	// rel is the path relative to the resolved root with every symbolic
	// link in its existing prefix resolved; what [os.Root] opens.
	rel string
}

// abs is the target's absolute path under the resolved root.
func (w workspace) abs(t target) string { return filepath.Join(w.real, t.rel) }

// resolve resolves p — relative to the root, or absolute inside it — and
// refuses it when it, or what its symbolic links lead to, leaves the root.
func (w workspace) resolve(p string) (target, error) {
	if p == "" {
		p = "."
	}
	var rel string
	if filepath.IsAbs(p) {
		c := filepath.Clean(p)
		var ok bool
		if rel, ok = within(w.root, c); !ok {
			if rel, ok = within(w.real, c); !ok {
				return target{}, fmt.Errorf("%w: %s is not under the workspace root %s", ErrOutsideWorkspace, p, w.root)
			}
		}
	} else {
		rel = filepath.Clean(p)
		if !filepath.IsLocal(rel) && rel != "." {
			return target{}, fmt.Errorf("%w: %s climbs out of the workspace root %s", ErrOutsideWorkspace, p, w.root)
		}
	}
	name := filepath.ToSlash(rel)

	// Resolve the longest prefix that exists; what follows it does not
	// exist yet, so it holds no links.
	existing, rest := filepath.Join(w.real, rel), ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return target{}, fmt.Errorf("%s: %w", p, err)
		}
		parent := filepath.Dir(existing)
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) { // a dangling link: where would it lead?
			return target{}, fmt.Errorf("%s: refused: a symbolic link on the way leads nowhere, so where it leads cannot be checked against the workspace root %s (%w)", p, w.root, err)
		}
		return target{}, fmt.Errorf("%s: %w", p, err)
	}
	inner, ok := within(w.real, real)
	if !ok {
		return target{}, fmt.Errorf("%w: %s leads to %s through a symbolic link, outside the workspace root %s", ErrOutsideWorkspace, p, real, w.root)
	}
	return target{name: name, rel: filepath.Join(inner, rest)}, nil
}

// within returns p relative to root when p is root or under it.
func within(root, p string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

// openRoot opens the resolved root as an [os.Root].
func (w workspace) openRoot() (*os.Root, error) {
	r, err := os.OpenRoot(w.real)
	if err != nil {
		return nil, fmt.Errorf("workspace root %s: %w", w.root, err)
	}
	return r, nil
}
