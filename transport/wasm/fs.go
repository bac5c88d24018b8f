package wasm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"
)

// A Mount gives a guest one host directory. Nothing else of the host's
// file system is visible to it.
type Mount struct {
	// HostPath is the host directory, absolute.
	HostPath string
	// GuestPath is where the guest sees it, an absolute slash-separated
	// path such as "/workspace". Empty means the same as HostPath (with
	// slashes).
	GuestPath string
	// ReadOnly refuses every change through the mount: writes, creation,
	// removal, renames, links and attribute changes fail with EROFS.
	ReadOnly bool
	// Within, when set, is the directory HostPath lies in and may not
	// leave, such as the workspace root or the package directory. Start
	// opens HostPath from Within one component at a time and refuses the
	// mount if any component below Within is a symbolic link, so a link
	// planted in the workspace (or made there by a guest with a writable
	// mount) cannot carry the mount elsewhere. Empty means HostPath is
	// opened as it stands, following links in it.
	Within string
}

// checkMounts validates mounts and returns them with GuestPath filled in.
func checkMounts(mounts []Mount) ([]Mount, error) {
	out := make([]Mount, 0, len(mounts))
	seen := map[string]bool{}
	for _, m := range mounts {
		if !filepath.IsAbs(m.HostPath) {
			return nil, fmt.Errorf("%w: host path %q is not absolute", ErrInvalidMount, m.HostPath)
		}
		fi, err := os.Stat(m.HostPath)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidMount, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("%w: %s is not a directory", ErrInvalidMount, m.HostPath)
		}
		g := m.GuestPath
		if g == "" {
			g = filepath.ToSlash(m.HostPath)
		}
		if !strings.HasPrefix(g, "/") || strings.ContainsRune(g, 0) {
			return nil, fmt.Errorf("%w: guest path %q must be absolute (start with /)", ErrInvalidMount, g)
		}
		g = path.Clean(g)
		if seen[g] {
			return nil, fmt.Errorf("%w: guest path %s is mounted twice", ErrInvalidMount, g)
		}
		seen[g] = true
		m.HostPath, m.GuestPath = filepath.Clean(m.HostPath), g
		if m.Within != "" {
			m.Within = filepath.Clean(m.Within)
			if !filepath.IsAbs(m.Within) || !within(m.Within, m.HostPath) {
				return nil, fmt.Errorf("%w: mount %s is not inside %s", ErrInvalidMount, m.HostPath, m.Within)
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// sysfsConfig is the FSConfig extension that mounts an [experimentalsys.FS].
type sysfsConfig = sysfs.FSConfig

// rootFS is an [experimentalsys.FS] over an [os.Root]: every path the guest
// names is resolved inside the mounted directory by the operating system,
// symbolic links included, so neither "..", an absolute link nor a link
// that climbs out (one the guest made itself in a writable mount, or one
// already there) reaches a file outside it. wazero's own directory mount
// resolves paths by joining strings and lets the host follow links, which
// a writable mount turns into an escape.
type rootFS struct {
	experimentalsys.UnimplementedFS
	root *os.Root
	// readOnly refuses every change with EROFS (wazero's ReadFS answers
	// an open for writing with ENOSYS, which reads as a missing feature).
	readOnly bool
}

// mountFS returns the file system for m; the caller closes the root.
func mountFS(m Mount) (experimentalsys.FS, *os.Root, error) {
	root, err := openMount(m)
	if err != nil {
		return nil, nil, err
	}
	return &rootFS{root: root, readOnly: m.ReadOnly}, root, nil
}

// openMount opens m's host directory. Below m.Within it descends one
// component at a time: each must be a directory, not a symbolic link, and
// the directory opened must be the one that was looked at, so a link
// swapped in between the look and the open is caught too.
func openMount(m Mount) (*os.Root, error) {
	if m.Within == "" {
		root, err := os.OpenRoot(m.HostPath)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidMount, err)
		}
		return root, nil
	}
	root, err := os.OpenRoot(m.Within)
	if err != nil {
		return nil, fmt.Errorf("%w: mount %s: %v", ErrInvalidMount, m.HostPath, err)
	}
	rel, _ := filepath.Rel(m.Within, m.HostPath) // local: checked by checkMounts
	if rel == "." {
		return root, nil
	}
	at := m.Within
	for c := range strings.SplitSeq(rel, string(filepath.Separator)) {
		at = filepath.Join(at, c)
		fi, err := root.Lstat(c)
		if err != nil {
			root.Close()
			return nil, fmt.Errorf("%w: mount %s: %v", ErrInvalidMount, m.HostPath, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, _ := root.Readlink(c)
			root.Close()
			return nil, fmt.Errorf("%w: mount %s: %s is a symbolic link (to %s); a mount below %s is opened without following links: replace the link with a real directory, or remove the mount from capabilityServer.fs in the manifest", ErrMountLink, m.HostPath, at, target, m.Within)
		}
		if !fi.IsDir() {
			root.Close()
			return nil, fmt.Errorf("%w: mount %s: %s is not a directory", ErrInvalidMount, m.HostPath, at)
		}
		next, err := root.OpenRoot(c)
		root.Close()
		if err != nil {
			return nil, fmt.Errorf("%w: mount %s: %v", ErrInvalidMount, m.HostPath, err)
		}
		opened, err := next.Stat(".")
		if err != nil || !os.SameFile(fi, opened) {
			next.Close()
			return nil, fmt.Errorf("%w: mount %s: %s changed while it was being opened; start the extension again", ErrMountLink, m.HostPath, at)
		}
		root = next
	}
	return root, nil
}

// name turns a guest path relative to the mount into a name for the root.
func name(p string) string {
	p = strings.TrimLeft(p, "/")
	if p == "" {
		return "."
	}
	return p
}

// errno maps an error from the os package to a WASI errno. An error that
// carries no system errno comes from the root's own checks (a path or a
// link that leaves the mount) and is reported as EPERM, as wazero reports
// a path with "..".
func errno(err error) experimentalsys.Errno {
	if err == nil {
		return 0
	}
	e := experimentalsys.UnwrapOSError(err)
	if e == experimentalsys.EIO {
		var se syscall.Errno
		if !errors.As(err, &se) {
			return experimentalsys.EPERM
		}
	}
	return e
}

func toOSFlag(f experimentalsys.Oflag) int {
	var flag int
	switch f & (experimentalsys.O_RDONLY | experimentalsys.O_RDWR | experimentalsys.O_WRONLY) {
	case experimentalsys.O_RDWR:
		flag = os.O_RDWR
	case experimentalsys.O_WRONLY:
		flag = os.O_WRONLY
	default:
		flag = os.O_RDONLY
	}
	if f&experimentalsys.O_APPEND != 0 {
		flag |= os.O_APPEND
	}
	if f&experimentalsys.O_CREAT != 0 {
		flag |= os.O_CREATE
	}
	if f&experimentalsys.O_EXCL != 0 {
		flag |= os.O_EXCL
	}
	if f&experimentalsys.O_TRUNC != 0 {
		flag |= os.O_TRUNC
	}
	if f&experimentalsys.O_SYNC != 0 {
		flag |= os.O_SYNC
	}
	return flag
}

// OpenFile implements [experimentalsys.FS]. The file is opened through
// the root, then handed to wazero's adapter for files of an [fs.FS], which
// supplies reads, writes, seeks and directory listing over it.
func (r *rootFS) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	n := name(p)
	if r.readOnly {
		writes := flag&(experimentalsys.O_WRONLY|experimentalsys.O_RDWR) != 0 ||
			flag&(experimentalsys.O_CREAT|experimentalsys.O_TRUNC|experimentalsys.O_APPEND) != 0
		if writes {
			if flag&experimentalsys.O_DIRECTORY != 0 {
				return nil, experimentalsys.EISDIR
			}
			return nil, experimentalsys.EROFS
		}
	}
	if flag&experimentalsys.O_NOFOLLOW != 0 {
		if fi, err := r.root.Lstat(n); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, experimentalsys.ELOOP
		}
	}
	f, err := r.root.OpenFile(n, toOSFlag(flag), perm)
	if err != nil {
		return nil, errno(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, errno(err)
	}
	if flag&experimentalsys.O_DIRECTORY != 0 && !fi.IsDir() {
		f.Close()
		return nil, experimentalsys.ENOTDIR
	}
	adapted, e := (&sysfs.AdaptFS{FS: &fileFS{root: r.root, name: n, first: f}}).OpenFile(".", flag&^experimentalsys.O_DIRECTORY, perm)
	if e != 0 {
		f.Close()
		return nil, e
	}
	return &rootFile{File: adapted, f: f, append: flag&experimentalsys.O_APPEND != 0}, 0
}

// A fileFS is the [fs.FS] of one file already opened through a root.
// wazero's adapter opens it once; it opens a directory again to rewind
// its listing, and that goes through the root too.
type fileFS struct {
	root  *os.Root
	name  string
	first *os.File
}

func (f *fileFS) Open(string) (fs.File, error) {
	if first := f.first; first != nil {
		f.first = nil
		return first, nil
	}
	return f.root.Open(f.name)
}

// Lstat implements [experimentalsys.FS].
func (r *rootFS) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) {
	fi, err := r.root.Lstat(name(p))
	if err != nil {
		return sys.Stat_t{}, errno(err)
	}
	return sys.NewStat_t(fi), 0
}

// Stat implements [experimentalsys.FS].
func (r *rootFS) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	fi, err := r.root.Stat(name(p))
	if err != nil {
		return sys.Stat_t{}, errno(err)
	}
	return sys.NewStat_t(fi), 0
}

// Mkdir implements [experimentalsys.FS].
func (r *rootFS) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	return errno(r.root.Mkdir(name(p), perm))
}

// Chmod implements [experimentalsys.FS].
func (r *rootFS) Chmod(p string, perm fs.FileMode) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	return errno(r.root.Chmod(name(p), perm))
}

// Rename implements [experimentalsys.FS].
func (r *rootFS) Rename(from, to string) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	return errno(r.root.Rename(name(from), name(to)))
}

// Rmdir implements [experimentalsys.FS].
func (r *rootFS) Rmdir(p string) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	fi, err := r.root.Lstat(name(p))
	if err != nil {
		return errno(err)
	}
	if !fi.IsDir() {
		return experimentalsys.ENOTDIR
	}
	return errno(r.root.Remove(name(p)))
}

// Unlink implements [experimentalsys.FS].
func (r *rootFS) Unlink(p string) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	fi, err := r.root.Lstat(name(p))
	if err != nil {
		return errno(err)
	}
	if fi.IsDir() {
		return experimentalsys.EISDIR
	}
	return errno(r.root.Remove(name(p)))
}

// Link implements [experimentalsys.FS].
func (r *rootFS) Link(oldPath, newPath string) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	return errno(r.root.Link(name(oldPath), name(newPath)))
}

// Symlink implements [experimentalsys.FS]. The link is made as asked;
// following it later is confined to the mount like every other path, and
// an absolute target is refused, as WASI path resolution requires.
func (r *rootFS) Symlink(oldPath, link string) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	if path.IsAbs(oldPath) {
		return experimentalsys.EPERM
	}
	return errno(r.root.Symlink(oldPath, name(link)))
}

// Readlink implements [experimentalsys.FS].
func (r *rootFS) Readlink(p string) (string, experimentalsys.Errno) {
	s, err := r.root.Readlink(name(p))
	if err != nil {
		return "", errno(err)
	}
	return filepath.ToSlash(s), 0
}

// Utimens implements [experimentalsys.FS].
func (r *rootFS) Utimens(p string, atim, mtim int64) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	n := name(p)
	if atim == experimentalsys.UTIME_OMIT || mtim == experimentalsys.UTIME_OMIT {
		st, e := r.Stat(p)
		if e != 0 {
			return e
		}
		if atim == experimentalsys.UTIME_OMIT {
			atim = st.Atim
		}
		if mtim == experimentalsys.UTIME_OMIT {
			mtim = st.Mtim
		}
	}
	return errno(r.root.Chtimes(n, time.Unix(0, atim), time.Unix(0, mtim)))
}

// A rootFile is a file opened through a [rootFS]: wazero's adapted file,
// with what the adapter lacks for a writable file.
type rootFile struct {
	experimentalsys.File
	f      *os.File
	append bool
}

// IsAppend implements [experimentalsys.File].
func (f *rootFile) IsAppend() bool { return f.append }

// Truncate implements [experimentalsys.File].
func (f *rootFile) Truncate(size int64) experimentalsys.Errno {
	if size < 0 {
		return experimentalsys.EINVAL
	}
	return errno(f.f.Truncate(size))
}

// Sync implements [experimentalsys.File].
func (f *rootFile) Sync() experimentalsys.Errno { return errno(f.f.Sync()) }

// Datasync implements [experimentalsys.File].
func (f *rootFile) Datasync() experimentalsys.Errno { return errno(f.f.Sync()) }
