// Package atomicfile replaces files so that a reader, or a crash, sees the
// old content or the new, never a mix: the data goes to a temporary file in
// the same directory, which is synced, given its mode, renamed over the
// destination, and the directory synced.
//
// A destination that is a symbolic link is replaced by a regular file:
// the link is not followed, so a link planted where a file is expected
// cannot redirect the write. A caller whose destination may legitimately
// be a link it wants kept (a settings file in a dotfiles checkout)
// resolves it first with [FollowLinks].
//
// The temporary file is created with mode 0600 (os.CreateTemp) and only
// then chmod'ed to the requested mode, so a private file is never readable
// by others, even for an instant.
package atomicfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// KeepMode as the perm of [Write] or [WriteFunc] keeps the mode of the
// file being replaced, or uses 0644 when there is none.
const KeepMode fs.FileMode = 1 << 31

// Write replaces path with data, with mode perm (or [KeepMode]).
func Write(path string, data []byte, perm fs.FileMode) error {
	return WriteFunc(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFunc replaces path with what fill writes, with mode perm (or
// [KeepMode]). If fill fails, path is left as it was and no temporary file
// remains. Errors name path.
func WriteFunc(path string, perm fs.FileMode, fill func(io.Writer) error) error {
	if perm == KeepMode {
		perm = 0o644
		if fi, err := os.Stat(path); err == nil {
			perm = fi.Mode().Perm()
		}
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if err := fill(tmp); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(name, path); err != nil {
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	ok = true
	return SyncDir(dir)
}

// maxLinks bounds the links FollowLinks follows, as the kernel's own
// limit does (ELOOP).
const maxLinks = 40

// FollowLinks returns the path of the file that path names once symbolic
// links at its last element are followed (a relative link from the
// directory holding it), or path itself when it is not a link or does not
// exist. A dangling link yields the path it points to, so a [Write] there
// creates the file and keeps the link. Writing to the returned path
// replaces the link's target in the target's own directory and leaves the
// link in place.
func FollowLinks(path string) (string, error) {
	for range maxLinks {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return "", fmt.Errorf("following the link %s: %w", path, err)
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		path = dest
	}
	return "", fmt.Errorf("following the link %s: more than %d links in a row (a loop?); replace it with the file itself", path, maxLinks)
}

// SyncDir fsyncs a directory, so a rename or a new entry in it survives a
// crash. File systems that cannot sync a directory are not an error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !isUnsupported(err) {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}
