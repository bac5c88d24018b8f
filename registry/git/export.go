package git

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Structural limits on an exported tree.
const (
	maxDepth    = 64
	maxPathLen  = 4096
	maxNameLen  = 255
	maxLinkRead = 4096
)

// exporter writes a commit's tree under root, accepting only directories and
// regular files. It never follows or creates a symlink, and opens every file
// with O_EXCL|O_NOFOLLOW in directories it created itself.
type exporter struct {
	ctx      context.Context
	st       storer.EncodedObjectStorer
	root     string
	maxFiles int
	maxBytes int64

	entries int
	bytes   int64
	skipped []string
}

func (e *exporter) export(c *object.Commit) error {
	t, err := object.GetTree(e.st, c.TreeHash)
	if err != nil {
		return fmt.Errorf("read root tree %s: %w", c.TreeHash, err)
	}
	return e.tree(t, "", 1)
}

func (e *exporter) tree(t *object.Tree, rel string, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%w: %q is nested deeper than %d directories", ErrUnsafeTree, rel, maxDepth)
	}
	seen := make(map[string]string, len(t.Entries))
	for _, ent := range t.Entries {
		if err := e.ctx.Err(); err != nil {
			return err
		}
		p := path.Join(rel, ent.Name)
		if why := checkEntryName(ent.Name); why != "" {
			return fmt.Errorf("%w: entry %q: %s", ErrUnsafeTree, path.Join(rel, ent.Name), why)
		}
		if len(p) > maxPathLen {
			return fmt.Errorf("%w: path %q is longer than %d bytes", ErrUnsafeTree, p[:64]+"...", maxPathLen)
		}
		folded := strings.ToLower(stripIgnorable(ent.Name))
		if prev, dup := seen[folded]; dup {
			return fmt.Errorf("%w: entries %q and %q in %q collide on a case-insensitive file system", ErrUnsafeTree, prev, ent.Name, "/"+rel)
		}
		seen[folded] = ent.Name
		switch ent.Mode {
		case filemode.Dir:
			if err := e.count(p); err != nil {
				return err
			}
			sub, err := object.GetTree(e.st, ent.Hash)
			if err != nil {
				return fmt.Errorf("read tree %q (%s): %w", p, ent.Hash, err)
			}
			if err := os.Mkdir(e.local(p), 0o755); err != nil {
				return fmt.Errorf("create directory %q: %w", p, err)
			}
			if err := e.tree(sub, p, depth+1); err != nil {
				return err
			}
		case filemode.Regular, filemode.Deprecated:
			if err := e.file(p, ent, 0o644); err != nil {
				return err
			}
		case filemode.Executable:
			if err := e.file(p, ent, 0o755); err != nil {
				return err
			}
		case filemode.Submodule:
			e.skipped = append(e.skipped, p)
		case filemode.Symlink:
			return fmt.Errorf("%w: %q is a symlink to %q; symlinks are not allowed in a package (replace it with a copy of the file)", ErrUnsafeTree, p, e.linkTarget(ent))
		default:
			return fmt.Errorf("%w: %q has unsupported mode %o", ErrUnsafeTree, p, uint32(ent.Mode))
		}
	}
	return nil
}

func (e *exporter) count(p string) error {
	e.entries++
	if e.entries > e.maxFiles {
		return fmt.Errorf("%w: more than %d files and directories (at %q)", ErrTooLarge, e.maxFiles, p)
	}
	return nil
}

func (e *exporter) local(p string) string { return filepath.Join(e.root, filepath.FromSlash(p)) }

func (e *exporter) file(p string, ent object.TreeEntry, mode os.FileMode) (err error) {
	if err := e.count(p); err != nil {
		return err
	}
	blob, err := object.GetBlob(e.st, ent.Hash)
	if err != nil {
		return fmt.Errorf("read blob %q (%s): %w", p, ent.Hash, err)
	}
	if blob.Size < 0 || blob.Size > e.maxBytes-e.bytes {
		return fmt.Errorf("%w: %q (%d bytes) takes the total past %d bytes", ErrTooLarge, p, blob.Size, e.maxBytes)
	}
	e.bytes += blob.Size
	r, err := blob.Reader()
	if err != nil {
		return fmt.Errorf("read blob %q: %w", p, err)
	}
	defer r.Close()
	f, err := os.OpenFile(e.local(p), os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, mode)
	if err != nil {
		return fmt.Errorf("create file %q: %w", p, err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("write file %q: %w", p, cerr)
		}
	}()
	n, err := io.Copy(f, io.LimitReader(r, blob.Size+1))
	if err != nil {
		return fmt.Errorf("write file %q: %w", p, err)
	}
	if n != blob.Size {
		return fmt.Errorf("write file %q: blob is %d bytes, read %d", p, blob.Size, n)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write file %q: %w", p, err)
	}
	return nil
}

// linkTarget reads a symlink blob's target for an error message.
func (e *exporter) linkTarget(ent object.TreeEntry) string {
	blob, err := object.GetBlob(e.st, ent.Hash)
	if err != nil {
		return "?"
	}
	r, err := blob.Reader()
	if err != nil {
		return "?"
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, maxLinkRead))
	if err != nil && !errors.Is(err, io.EOF) {
		return "?"
	}
	return string(b)
}

// checkEntryName returns why a tree entry name is refused, or "".
func checkEntryName(name string) string {
	switch {
	case name == "":
		return "empty name"
	case len(name) > maxNameLen:
		return fmt.Sprintf("name longer than %d bytes", maxNameLen)
	case !utf8.ValidString(name):
		return "name is not valid UTF-8"
	case strings.Contains(name, ".."):
		return `name contains ".."`
	case name == ".":
		return `name is "."`
	}
	for _, r := range name {
		switch {
		case r < 0x20 || r == 0x7f:
			return "name contains NUL or a control character"
		case r == '/' || r == '\\':
			return "name contains a slash or backslash"
		case r == ':':
			return "name contains ':' (an NTFS alternate data stream)"
		}
	}
	if isDotGit(name) {
		return "name is .git or a variant of it that a case-insensitive, NTFS or HFS+ file system treats as .git"
	}
	if strings.HasSuffix(name, ".") || strings.HasSuffix(name, " ") {
		return "name ends with a dot or a space, which Windows drops"
	}
	if isWindowsDevice(name) {
		return "name is a Windows device name"
	}
	return ""
}

// isDotGit reports names a file system may resolve to ".git": any case,
// trailing dots and spaces (NTFS), the 8.3 short name git~N, and HFS+
// ignorable code points.
func isDotGit(name string) bool {
	n := strings.ToLower(stripIgnorable(name))
	n = strings.TrimRight(n, ". ")
	if n == ".git" {
		return true
	}
	if rest, ok := strings.CutPrefix(n, "git~"); ok && rest != "" && isDigits(rest) {
		return true
	}
	return false
}

// stripIgnorable removes the code points HFS+ ignores when comparing names
// (the list git's is_hfs_dotgit uses).
func stripIgnorable(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
			return -1
		}
		return r
	}, s)
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

var windowsDevices = map[string]bool{
	"con": true, "prn": true, "aux": true, "nul": true,
	"com1": true, "com2": true, "com3": true, "com4": true, "com5": true, "com6": true, "com7": true, "com8": true, "com9": true,
	"lpt1": true, "lpt2": true, "lpt3": true, "lpt4": true, "lpt5": true, "lpt6": true, "lpt7": true, "lpt8": true, "lpt9": true,
}

func isWindowsDevice(name string) bool {
	base, _, _ := strings.Cut(strings.ToLower(name), ".")
	return windowsDevices[strings.TrimRight(base, " ")]
}
