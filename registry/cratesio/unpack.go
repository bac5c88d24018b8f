package cratesio

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Extraction limits that are not configurable.
const (
	maxPathBytes = 4096
	maxPathDepth = 64
	// CargoOKMarker is cargo's completion marker; an archive entry with this
	// name is skipped, never written.
	CargoOKMarker = ".cargo-ok"
)

// UnpackOptions configures [Unpack]. Every zero value means the default.
type UnpackOptions struct {
	// Prefix is the directory every entry must sit under ("name-version/"
	// for a .crate); it is stripped. Empty means entries are taken as they
	// are.
	Prefix string
	// MaxTotalBytes caps the decompressed stream (tar headers included).
	// Zero means max(512 MiB, 20 × the compressed size), cargo's rule.
	MaxTotalBytes int64
	// MaxFiles caps the number of entries. Zero means 100,000.
	MaxFiles int
	// MaxFileBytes caps one file. Zero means MaxTotalBytes.
	MaxFileBytes int64
	// SkipGlobalHeaders skips PAX global headers (which `git archive`
	// writes) instead of refusing them. They are never extracted.
	SkipGlobalHeaders bool
}

// paxAllowed are the PAX records an entry may carry. Everything else
// (size, linkpath, sparse maps, xattrs, vendor keys) is refused: a PAX size
// disagreeing with the ustar size is how tar parsers were made to disagree
// about where files end (CVE-2026-33055).
var paxAllowed = map[string]bool{
	"path": true, "mtime": true, "atime": true, "ctime": true,
	"uid": true, "gid": true, "uname": true, "gname": true, "comment": true,
}

// windowsReserved are device names Windows refuses as a path component,
// with or without an extension.
var windowsReserved = map[string]bool{
	"con": true, "prn": true, "aux": true, "nul": true, "conin$": true, "conout$": true,
	"com0": true, "com1": true, "com2": true, "com3": true, "com4": true, "com5": true,
	"com6": true, "com7": true, "com8": true, "com9": true,
	"lpt0": true, "lpt1": true, "lpt2": true, "lpt3": true, "lpt4": true, "lpt5": true,
	"lpt6": true, "lpt7": true, "lpt8": true, "lpt9": true,
}

// Unpack extracts a gzip'd tar from src into destDir, which must not exist.
// compressedSize is the size of src in bytes (for the default size cap).
//
// Only regular files and directories are accepted: links, devices, FIFOs,
// sparse and contiguous files are errors, as are absolute paths, "..",
// backslashes, NUL, Windows device names, a .git component at any depth
// (in any case), paths over 4096 bytes or 64
// levels, duplicate names (also after case folding and NFC normalisation),
// PAX records outside a small allowlist, trailing data after the gzip
// stream and anything over the size and count caps. Setuid, setgid and
// sticky bits are dropped, the umask applies and no owner is taken from the
// archive. An entry named [CargoOKMarker] is skipped.
//
// Entries are written through an [os.Root] on a ".tmp-*" staging directory
// beside destDir, which is renamed to destDir only when the whole archive
// was good; on any error the staging directory is removed and nothing else
// exists.
func Unpack(src io.Reader, compressedSize int64, destDir string, opts UnpackOptions) error {
	return unpack(src, compressedSize, destDir, opts, true)
}

// unpack is Unpack for a gzip'd (gzipped) or plain tar.
func unpack(src io.Reader, compressedSize int64, destDir string, opts UnpackOptions, gzipped bool) error {
	if _, err := os.Lstat(destDir); err == nil {
		return fmt.Errorf("unpacking into %s: it already exists; unpack into a fresh directory", destDir)
	}
	parent := filepath.Dir(destDir)
	staging, err := os.MkdirTemp(parent, ".tmp-*")
	if err != nil {
		return fmt.Errorf("unpacking into %s: %w", destDir, err)
	}
	defer os.RemoveAll(staging) // empty after a successful rename
	// The tree is built in staging/tree (created 0755 so the umask applies,
	// unlike MkdirTemp's 0700) and only that is renamed to destDir.
	tree := filepath.Join(staging, "tree")
	if err := os.Mkdir(tree, 0o755); err != nil {
		return fmt.Errorf("unpacking into %s: %w", destDir, err)
	}
	root, err := os.OpenRoot(tree)
	if err != nil {
		return fmt.Errorf("unpacking into %s: %w", destDir, err)
	}
	err = extract(src, compressedSize, root, opts, gzipped)
	if cerr := root.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tree, destDir); err != nil {
		return fmt.Errorf("unpacking into %s: moving the staged tree into place: %w", destDir, err)
	}
	syncDir(parent)
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// capReader fails once more than limit bytes have been read.
type capReader struct {
	r     io.Reader
	n     int64
	limit int64
}

func (c *capReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.limit {
		return n, fmt.Errorf("%w: the archive decompresses to more than %d bytes (a gzip bomb?)", ErrTooLarge, c.limit)
	}
	return n, err
}

func unsafeErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsafeArchive, fmt.Sprintf(format, args...))
}

const (
	kindImplicitDir = iota + 1
	kindDir
	kindFile
)

type seenEntry struct {
	name string
	kind int
}

func extract(src io.Reader, compressedSize int64, root *os.Root, opts UnpackOptions, gzipped bool) error {
	total := opts.MaxTotalBytes
	if total <= 0 {
		total = max(512<<20, 20*compressedSize)
	}
	maxFiles := opts.MaxFiles
	if maxFiles <= 0 {
		maxFiles = 100_000
	}
	maxFile := opts.MaxFileBytes
	if maxFile <= 0 {
		maxFile = total
	}
	stream := src
	if gzipped {
		gz, err := gzip.NewReader(src)
		if err != nil {
			return fmt.Errorf("%w: not a gzip stream: %v", ErrUnsafeArchive, err)
		}
		defer gz.Close()
		ar := newAsyncReader(gz, 256<<10, 4)
		defer ar.Close()
		stream = ar
	}
	cr := &capReader{r: stream, limit: total}
	var pool *writers
	if n := numWriters(); n > 0 {
		pool = newWriters(n)
		// Runs after dirs.close (deferred later, so run earlier), which
		// drains the pool before it closes any handle.
		defer pool.close()
	}
	dirs := &dirCache{root: root, roots: map[string]*dirHandle{}, pool: pool}
	defer dirs.close()
	tr := tar.NewReader(cr)
	fold := cases.Fold()
	seen := map[string]seenEntry{}
	buf := make([]byte, 256<<10)
	count := 0
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return wrapStreamErr(err)
		}
		count++
		if count > maxFiles {
			return unsafeErr("more than %d entries", maxFiles)
		}
		name := hdr.Name
		switch hdr.Typeflag {
		case tar.TypeReg, tar.TypeDir:
		case tar.TypeXGlobalHeader:
			if opts.SkipGlobalHeaders {
				continue
			}
			return unsafeErr("a PAX global header (entry %q) is not allowed", truncate(name, 200))
		default:
			return unsafeErr("entry %q has type %s; only regular files and directories are allowed", truncate(name, 200), typeName(hdr.Typeflag))
		}
		for k := range hdr.PAXRecords {
			if !paxAllowed[k] {
				return unsafeErr("entry %q carries the PAX record %q, which is not allowed", truncate(name, 200), k)
			}
		}
		isDir := hdr.Typeflag == tar.TypeDir
		rel := name
		if opts.Prefix != "" {
			switch {
			case strings.HasPrefix(name, opts.Prefix):
				rel = name[len(opts.Prefix):]
			case isDir && name == strings.TrimSuffix(opts.Prefix, "/"):
				rel = ""
			default:
				return unsafeErr("invalid tarball: it contains a file at %q which isn't under %q", truncate(name, 200), opts.Prefix)
			}
		}
		if isDir {
			rel = strings.TrimSuffix(rel, "/")
		}
		if rel == "" {
			if isDir {
				continue
			}
			return unsafeErr("entry %q has an empty path", truncate(name, 200))
		}
		if err := checkPath(rel); err != nil {
			return unsafeErr("entry %q: %v", truncate(name, 200), err)
		}
		if rel == CargoOKMarker {
			continue
		}
		// Duplicate and case-fold collisions, for the entry and its parents.
		parts := strings.Split(rel, "/")
		for i := 1; i < len(parts); i++ {
			dir := strings.Join(parts[:i], "/")
			k := fold.String(norm.NFC.String(dir))
			if s, ok := seen[k]; ok {
				if s.kind == kindFile {
					return unsafeErr("entry %q is under %q, which is a file", truncate(name, 200), s.name)
				}
				if s.name != dir {
					return unsafeErr("entries %q and %q differ only in case or Unicode normalisation", s.name, dir)
				}
				continue
			}
			seen[k] = seenEntry{name: dir, kind: kindImplicitDir}
		}
		k := fold.String(norm.NFC.String(rel))
		if s, ok := seen[k]; ok {
			if s.name != rel {
				return unsafeErr("entries %q and %q differ only in case or Unicode normalisation", s.name, rel)
			}
			if !(isDir && s.kind == kindImplicitDir) {
				return unsafeErr("entry %q appears twice", rel)
			}
		}
		if isDir {
			seen[k] = seenEntry{name: rel, kind: kindDir}
			if _, err := dirs.get(rel); err != nil {
				return fmt.Errorf("creating directory %s: %w", rel, err)
			}
			continue
		}
		seen[k] = seenEntry{name: rel, kind: kindFile}
		if hdr.Size > maxFile {
			return fmt.Errorf("%w: entry %q is %d bytes, over the %d-byte per-file limit", ErrTooLarge, rel, hdr.Size, maxFile)
		}
		parentRoot, err := dirs.get(path.Dir(rel))
		if err != nil {
			return fmt.Errorf("creating directory %s: %w", path.Dir(rel), err)
		}
		perm := fs.FileMode(hdr.Mode)&0o777 | 0o400
		if pool != nil && hdr.Size <= maxParallelFile {
			if err := pool.Err(); err != nil {
				return err
			}
			data := pool.buffer(int(hdr.Size))
			if _, err := io.ReadFull(tr, data); err != nil {
				return wrapStreamErr(err)
			}
			pool.submit(path.Dir(rel), writeJob{dir: parentRoot, name: path.Base(rel), rel: rel, perm: perm, data: data})
			continue
		}
		if hdr.Size <= int64(len(buf)) {
			// Small file: read it whole, then create and write it in one go.
			data := buf[:hdr.Size]
			if _, err := io.ReadFull(tr, data); err != nil {
				return wrapStreamErr(err)
			}
			if err := createFile(parentRoot, path.Base(rel), perm, data); err != nil {
				return fmt.Errorf("writing %s: %w", rel, err)
			}
			continue
		}
		f, err := parentRoot.root.OpenFile(path.Base(rel), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err != nil {
			return fmt.Errorf("creating %s: %w", rel, err)
		}
		_, err = io.CopyBuffer(f, struct{ io.Reader }{tr}, buf)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				return fmt.Errorf("writing %s: %w", rel, err)
			}
			return wrapStreamErr(err)
		}
	}
	// Read to the end of the gzip stream: this checks the CRC and rejects
	// trailing data after the gzip member (cargo's flate2 would ignore it).
	if _, err := io.CopyBuffer(io.Discard, cr, buf); err != nil {
		return wrapStreamErr(err)
	}
	if pool != nil {
		return pool.drain()
	}
	return nil
}

// dirCache creates directories once and keeps a handle open on each, so
// a file is created with one openat relative to its directory instead of
// a walk from the top. Every handle is opened through the tree's
// [os.Root], so it is confined to the tree.
type dirCache struct {
	root  *os.Root
	top   *dirHandle
	roots map[string]*dirHandle
	// pool, if set, may hold handles in queued jobs: it is drained before
	// any handle is closed.
	pool *writers
}

// A dirHandle is one directory of the tree: an [os.Root] for general use
// and an open directory file whose descriptor the Linux fast path uses.
type dirHandle struct {
	root *os.Root
	dir  *os.File
}

const maxCachedDirs = 256

func (d *dirCache) get(dir string) (*dirHandle, error) {
	if dir == "." || dir == "" {
		if d.top == nil {
			f, err := d.root.Open(".")
			if err != nil {
				return nil, err
			}
			d.top = &dirHandle{root: d.root, dir: f}
		}
		return d.top, nil
	}
	if h, ok := d.roots[dir]; ok {
		return h, nil
	}
	if err := d.root.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	r, err := d.root.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	f, err := r.Open(".")
	if err != nil {
		r.Close()
		return nil, err
	}
	h := &dirHandle{root: r, dir: f}
	if len(d.roots) >= maxCachedDirs {
		d.closeSubdirs()
	}
	d.roots[dir] = h
	return h, nil
}

func (h *dirHandle) close() {
	h.dir.Close()
	h.root.Close()
}

func (d *dirCache) closeSubdirs() {
	if d.pool != nil {
		_ = d.pool.drain() // its error is reported by the next submit or the end
	}
	for k, h := range d.roots {
		h.close()
		delete(d.roots, k)
	}
}

// close releases every handle.
func (d *dirCache) close() {
	d.closeSubdirs() // drains the pool first
	if d.top != nil {
		d.top.dir.Close() // d.top.root is the tree's root, closed by the caller
	}
}

func wrapStreamErr(err error) error {
	if errors.Is(err, ErrTooLarge) {
		return err
	}
	return fmt.Errorf("%w: corrupt archive: %v", ErrUnsafeArchive, err)
}

// checkPath validates a slash-separated relative path from an archive.
func checkPath(p string) error {
	if len(p) > maxPathBytes {
		return fmt.Errorf("the path is longer than %d bytes", maxPathBytes)
	}
	if !utf8.ValidString(p) {
		return fmt.Errorf("the path is not valid UTF-8")
	}
	if strings.HasPrefix(p, "/") {
		return fmt.Errorf("absolute path")
	}
	for _, r := range p {
		switch {
		case r == '\\':
			return fmt.Errorf("backslash in path")
		case r == ':':
			return fmt.Errorf("colon in path (drive letter or alternate data stream)")
		case r < 0x20 || r == 0x7f:
			return fmt.Errorf("control character %q in path", r)
		}
	}
	parts := strings.Split(p, "/")
	if len(parts) > maxPathDepth {
		return fmt.Errorf("the path is deeper than %d levels", maxPathDepth)
	}
	for _, c := range parts {
		switch c {
		case "":
			return fmt.Errorf("empty path component")
		case ".", "..":
			return fmt.Errorf("%q path component", c)
		}
		if strings.EqualFold(c, ".git") {
			return fmt.Errorf("component %q: a package may not ship a .git directory or file (the git fetcher refuses one too); the crate's author should republish it without .git", c)
		}
		if strings.HasSuffix(c, ".") || strings.HasSuffix(c, " ") {
			return fmt.Errorf("component %q ends with a dot or space (not portable to Windows)", c)
		}
		base, _, _ := strings.Cut(c, ".")
		if windowsReserved[strings.ToLower(strings.TrimRight(base, " "))] {
			return fmt.Errorf("component %q is a Windows device name", c)
		}
	}
	if !filepath.IsLocal(filepath.FromSlash(p)) {
		return fmt.Errorf("the path is not local")
	}
	return nil
}

func typeName(t byte) string {
	switch t {
	case tar.TypeLink:
		return "hard link"
	case tar.TypeSymlink:
		return "symlink"
	case tar.TypeChar:
		return "character device"
	case tar.TypeBlock:
		return "block device"
	case tar.TypeFifo:
		return "FIFO"
	case tar.TypeCont:
		return "contiguous file"
	case tar.TypeGNUSparse:
		return "GNU sparse file"
	}
	return fmt.Sprintf("%q", t)
}
