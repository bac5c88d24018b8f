package packaging

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// File modes recorded in a [FileEntry].
const (
	ModeFile    = "file"    // a regular file without exec bits
	ModeExec    = "exec"    // a regular file with any exec bit
	ModeSymlink = "symlink" // a symbolic link; SHA256 is of its target string
)

// A FileEntry is one file of a package listing.
type FileEntry struct {
	Path   string `json:"path"` // slash-separated, relative to the package
	Mode   string `json:"mode"` // ModeFile, ModeExec or ModeSymlink
	SHA256 string `json:"sha256"`
}

// A FileListing is the canonical listing of a package: every regular file
// and symlink below the package directory, sorted by path. Directories are
// implied by their files. A listing of an author's tree ([ListDir]) leaves
// out .git; the listing of a stored package pins every file, .git ones
// included.
type FileListing []FileEntry

// HashPrefix starts every content hash.
const HashPrefix = "sha256:"

// Hash is the content hash of the listing: "sha256:" and the hex SHA-256 of
// the lines "<sha256> <mode> <path>\n", in path order.
func (l FileListing) Hash() string {
	h := sha256.New()
	for _, e := range l {
		fmt.Fprintf(h, "%s %s %s\n", e.SHA256, e.Mode, e.Path)
	}
	return HashPrefix + hex.EncodeToString(h.Sum(nil))
}

// ListDir computes the canonical listing of dir, an author's tree. Files
// named .git (at any depth) are skipped; sockets, devices, FIFOs and names
// holding a newline are refused with [ErrUnsafeTree].
func ListDir(dir string) (FileListing, error) { return listTree(dir, true) }

// listStored is the listing of a stored package: nothing is skipped, so a
// file under any .git directory is pinned and verified like the rest (no
// fetcher puts one there; one that appears later is a change).
func listStored(dir string) (FileListing, error) { return listTree(dir, false) }

func listTree(dir string, skipGit bool) (FileListing, error) {
	var out FileListing
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if skipGit && d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.ContainsAny(rel, "\n\r") {
			return fmt.Errorf("%w: %q: file name holds a newline", ErrUnsafeTree, rel)
		}
		switch t := d.Type(); {
		case t.IsDir():
			return nil
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256([]byte(target))
			out = append(out, FileEntry{Path: rel, Mode: ModeSymlink, SHA256: hex.EncodeToString(sum[:])})
		case t.IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			sum, err := hashFile(p)
			if err != nil {
				return err
			}
			mode := ModeFile
			if info.Mode().Perm()&0o111 != 0 {
				mode = ModeExec
			}
			out = append(out, FileEntry{Path: rel, Mode: mode, SHA256: sum})
		default:
			return fmt.Errorf("%w: %s is a %v, not a file, directory or symlink", ErrUnsafeTree, rel, t)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing package %s: %w", dir, err)
	}
	slices.SortFunc(out, func(a, b FileEntry) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// HashDir is the content hash of dir's canonical listing (see
// [FileListing.Hash]).
func HashDir(dir string) (string, error) {
	l, err := ListDir(dir)
	if err != nil {
		return "", err
	}
	return l.Hash(), nil
}

// A FileDiff names the files that differ between two listings.
type FileDiff struct {
	Changed []string // content or mode differs
	Added   []string // present now, absent from the expected listing
	Removed []string // expected, now missing
}

// Empty reports whether the listings were identical.
func (d FileDiff) Empty() bool { return len(d.Changed)+len(d.Added)+len(d.Removed) == 0 }

// String renders the diff as "changed: a, b; added: c; removed: d", listing
// at most 20 names per group.
func (d FileDiff) String() string {
	var parts []string
	for _, g := range []struct {
		name  string
		files []string
	}{{"changed", d.Changed}, {"added", d.Added}, {"removed", d.Removed}} {
		if len(g.files) == 0 {
			continue
		}
		names := g.files
		more := ""
		if len(names) > 20 {
			more = fmt.Sprintf(" and %d more", len(names)-20)
			names = names[:20]
		}
		parts = append(parts, g.name+": "+strings.Join(names, ", ")+more)
	}
	if len(parts) == 0 {
		return "no changes"
	}
	return strings.Join(parts, "; ")
}

// DiffListings compares an expected listing with an actual one.
func DiffListings(expected, actual FileListing) FileDiff {
	var d FileDiff
	want := make(map[string]FileEntry, len(expected))
	for _, e := range expected {
		want[e.Path] = e
	}
	for _, a := range actual {
		w, ok := want[a.Path]
		switch {
		case !ok:
			d.Added = append(d.Added, a.Path)
		case w != a:
			d.Changed = append(d.Changed, a.Path)
		}
		delete(want, a.Path)
	}
	for _, e := range expected {
		if _, ok := want[e.Path]; ok {
			d.Removed = append(d.Removed, e.Path)
		}
	}
	return d
}

// DiffDir lists dir and compares it with the expected listing.
func DiffDir(dir string, expected FileListing) (FileDiff, error) {
	actual, err := ListDir(dir)
	if err != nil {
		return FileDiff{}, err
	}
	return DiffListings(expected, actual), nil
}

// CopyTree copies the package tree src into dst (created if missing),
// preserving exec bits and syncing each file to disk. .git directories are
// skipped. A symlink is recreated only when it is relative and resolves
// inside src; an absolute symlink or one leaving the tree, and any special
// file, fails with [ErrUnsafeTree].
func CopyTree(src, dst string) error {
	root, err := filepath.EvalSymlinks(src)
	if err != nil {
		return fmt.Errorf("copying package %s: %w", src, err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("copying package %s: %w", src, err)
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		out := filepath.Join(dst, rel)
		switch t := d.Type(); {
		case t.IsDir():
			return os.Mkdir(out, 0o755)
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if filepath.IsAbs(target) {
				return fmt.Errorf("%w: %s is a symlink to the absolute path %s", ErrUnsafeTree, rel, target)
			}
			if !inside(root, filepath.Join(filepath.Dir(p), target)) {
				return fmt.Errorf("%w: %s is a symlink to %s, outside the package", ErrUnsafeTree, rel, target)
			}
			if real, err := filepath.EvalSymlinks(p); err == nil && !inside(root, real) {
				return fmt.Errorf("%w: %s resolves to %s, outside the package", ErrUnsafeTree, rel, real)
			}
			return os.Symlink(target, out)
		case t.IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			mode := os.FileMode(0o644)
			if info.Mode().Perm()&0o111 != 0 {
				mode = 0o755
			}
			return copyFile(p, out, mode)
		default:
			return fmt.Errorf("%w: %s is a %v, not a file, directory or symlink", ErrUnsafeTree, rel, t)
		}
	})
	if err != nil {
		return fmt.Errorf("copying package %s to %s: %w", src, dst, err)
	}
	return nil
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Chmod(mode); err != nil { // umask must not strip exec bits
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
