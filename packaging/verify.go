package packaging

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// A Verifier re-checks an installed package against what was approved, cheaply
// enough to run before every spawn of its capability server (the lesson of
// go-plugin's SecureConfig: verify what you are about to execute, not what
// was there when the session started).
//
// For a stored package (git or crate source) it re-lists the package
// directory, every file of it (.git ones included), and compares it with
// the approved [FileListing]; a file is re-hashed only when its stat
// identity (device, inode, size, mode, mtime and ctime where the platform
// has them) changed since it was last hashed, so an unchanged package
// costs one directory walk and one lstat per file.
//
// For a path source (the author's dev loop: code may change freely) it
// re-reads the live manifest, with the content digests of its skills, and
// diffs it with the approved one: identical or narrower passes, anything
// wider (a new or changed skill included) fails with [ErrManifestChanged].
//
// A Verifier is safe for concurrent use.
type Verifier struct {
	name     string
	dir      string
	path     bool
	files    FileListing // approved listing (stored packages)
	approved *Manifest   // approved manifest (path sources)

	mu    sync.Mutex
	cache map[string]cachedHash // by slash path
}

type cachedHash struct {
	key statKey
	sum string
}

// NewVerifier returns a verifier for the package that e pins, installed in
// dir (the store copy, or the source directory of a path source).
func NewVerifier(e *LockEntry, dir string) (*Verifier, error) {
	v := &Verifier{name: e.Name, dir: dir, path: e.Kind == SourcePath, files: e.Files, cache: map[string]cachedHash{}}
	if v.path {
		m, err := e.ApprovedManifest()
		if err != nil {
			return nil, err
		}
		v.approved = m
	}
	return v, nil
}

// Check verifies the package now. A stored package whose files differ from
// the approved listing fails with [ErrTampered], naming the files; a path
// source whose manifest widens the approved one fails with
// [ErrManifestChanged], carrying the contribution diff.
func (v *Verifier) Check() error {
	if v.path {
		_, err := v.checkManifest()
		return err
	}
	actual, err := v.list()
	if err != nil {
		return fmt.Errorf("extension %s: %w", v.name, err)
	}
	if d := DiffListings(v.files, actual); !d.Empty() {
		return fmt.Errorf("extension %s: %w (%s in %s); it will not run until you re-approve it with `yolop ext update %s`", v.name, ErrTampered, d, v.dir, v.name)
	}
	return nil
}

// checkManifest loads the live manifest of a path source and diffs it with
// the approved one. It returns the live manifest when it widens nothing.
func (v *Verifier) checkManifest() (*Manifest, error) {
	live, err := Load(v.dir)
	if err != nil {
		return nil, fmt.Errorf("extension %s: %w", v.name, err)
	}
	approved := v.approved
	if approved.SkillsUnpinned() {
		// Approved before skills were pinned: they are approved at the
		// next update (VerifyInstalled warns until then).
		a := *approved
		a.Skills, a.SkillPins = live.Skills, live.SkillPins
		approved = &a
	}
	if ch := Diff(approved, live); ch.Widens() {
		return nil, &ManifestChangedError{Name: v.name, Dir: v.dir, File: live.File, Change: ch}
	}
	return live, nil
}

// A ManifestChangedError reports a path source whose live manifest widens
// the approved one. It matches [ErrManifestChanged].
type ManifestChangedError struct {
	Name string
	Dir  string
	// File is the manifest file read: Dir/plugin.json or Dir/Cargo.toml.
	// Empty means Dir/plugin.json.
	File   string
	Change Change
}

func (e *ManifestChangedError) Error() string {
	file := e.File
	if file == "" {
		file = filepath.Join(e.Dir, "plugin.json")
	}
	return fmt.Sprintf("extension %s: %v: %s widens what was approved; it stays off until you run `yolop ext update %s`.\n%s",
		e.Name, ErrManifestChanged, file, e.Name, strings.TrimRight(e.Change.String(), "\n"))
}

// Unwrap returns [ErrManifestChanged].
func (e *ManifestChangedError) Unwrap() error { return ErrManifestChanged }

// list is the listing of a stored package (every file, .git ones
// included) with hashes reused for files whose stat identity is
// unchanged since they were last hashed.
func (v *Verifier) list() (FileListing, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out FileListing
	seen := make(map[string]bool, len(v.cache))
	err := filepath.WalkDir(v.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == v.dir {
			return nil
		}
		rel, err := filepath.Rel(v.dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
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
			mode := ModeFile
			if info.Mode().Perm()&0o111 != 0 {
				mode = ModeExec
			}
			seen[rel] = true
			key := keyOf(info)
			c, ok := v.cache[rel]
			if !ok || !key.valid || c.key != key {
				sum, err := hashFile(p)
				if err != nil {
					return err
				}
				// Cache only when the file did not change while it was
				// hashed; otherwise hash it again next time.
				if after, err := os.Lstat(p); err == nil && keyOf(after) == key {
					v.cache[rel] = cachedHash{key: key, sum: sum}
				} else {
					delete(v.cache, rel)
				}
				c.sum = sum
			}
			out = append(out, FileEntry{Path: rel, Mode: mode, SHA256: c.sum})
		default:
			return fmt.Errorf("%w: %s is a %v, not a file, directory or symlink", ErrUnsafeTree, rel, t)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing package %s: %w", v.dir, err)
	}
	for p := range v.cache {
		if !seen[p] {
			delete(v.cache, p)
		}
	}
	slices.SortFunc(out, func(a, b FileEntry) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}
