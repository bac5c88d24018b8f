package cratesio

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/klauspost/compress/gzip"
	"github.com/pelletier/go-toml/v2"
)

// crateMTime is the fixed modification time of every .crate entry written
// by WriteCrate (the value cargo uses for reproducible packages).
var crateMTime = time.Unix(1153704088, 0).UTC()

// WriteCrate writes srcDir as a deterministic .crate (a gzip'd tar) to w:
// every regular file under "name-version/", sorted by path, with a fixed
// mtime, uid/gid 0, no user or group names and mode 0755 (any exec bit)
// or 0644. ".git" (at any depth) is left out; a symlink is replaced by the
// file it points to and a symlink to a directory is an error, as with
// cargo package. The same input gives the same bytes.
func WriteCrate(w io.Writer, name, version, srcDir string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	if _, err := semver.StrictNewVersion(version); err != nil {
		return fmt.Errorf("packing %s: version %q is not SemVer 2.0: %v", name, version, err)
	}
	type file struct{ rel, abs string }
	var files []file
	err := filepath.WalkDir(srcDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(srcDir, p)
		if err != nil {
			return err
		}
		files = append(files, file{rel: filepath.ToSlash(rel), abs: p})
		return nil
	})
	if err != nil {
		return fmt.Errorf("packing %s %s from %s: %w", name, version, srcDir, err)
	}
	slices.SortFunc(files, func(a, b file) int { return strings.Compare(a.rel, b.rel) })
	gz, err := gzip.NewWriterLevel(w, gzip.DefaultCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	prefix := name + "-" + version + "/"
	for _, f := range files {
		if err := checkPath(f.rel); err != nil {
			return fmt.Errorf("packing %s: file %s cannot be published: %v", name, f.rel, err)
		}
		fi, err := os.Stat(f.abs) // follows symlinks
		if err != nil {
			return fmt.Errorf("packing %s: %w", name, err)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("packing %s: %s is not a regular file (a symlink to a directory or a device); remove it or replace it with a file", name, f.rel)
		}
		mode := int64(0o644)
		if fi.Mode().Perm()&0o111 != 0 {
			mode = 0o755
		}
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     prefix + f.rel,
			Size:     fi.Size(),
			Mode:     mode,
			ModTime:  crateMTime,
			Format:   tar.FormatUnknown,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("packing %s: %s: %w", name, f.rel, err)
		}
		src, err := os.Open(f.abs)
		if err != nil {
			return fmt.Errorf("packing %s: %w", name, err)
		}
		n, err := io.Copy(tw, src)
		src.Close()
		if err == nil && n != fi.Size() {
			err = fmt.Errorf("the file changed size while being packed")
		}
		if err != nil {
			return fmt.Errorf("packing %s: %s: %w", name, f.rel, err)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// PublishMeta describes a crate being added to a static index.
type PublishMeta struct {
	// Name and Version of the crate. Empty means read from the crate's
	// top-level "name-version/" directory; when set they must agree with it.
	Name, Version string
	// DLBase, when set, is the absolute URL the index will be served from
	// (e.g. "https://example.org/registry"); config.json then gets the
	// cargo-compatible absolute dl "<DLBase>/crates/{crate}/{version}/download".
	// Empty writes the relative dl "crates/{crate}/{version}/download",
	// which this package's client resolves against the index URL and
	// [ServeIndex] rewrites to an absolute URL per request. Only used when
	// config.json does not exist yet.
	DLBase string
	// Artifacts are files (prebuilt binaries or archives) copied next to
	// the crate, under crates/<name>/<version>/<file name>.
	Artifacts []string
	// Features is written to the index line; nil means {}.
	Features map[string][]string
}

// Publish adds crateFile to the static sparse index in indexDir:
// config.json (only if absent), the index line (name, vers, deps, cksum,
// features, yanked, v) appended under the cargo index path, the crate at
// crates/<name>/<version>/download and any artifacts beside it. Publishing
// a version the index already has fails with [ErrAlreadyPublished]. The
// crate must pass the same checks as an install ([Unpack]). Every file is
// written atomically, but two publishers on one indexDir must be
// serialised by the caller (a file lock), or one index line may be lost.
func Publish(indexDir, crateFile string, meta PublishMeta) error {
	data, err := os.ReadFile(crateFile)
	if err != nil {
		return fmt.Errorf("publishing %s: %w", crateFile, err)
	}
	name, version, err := crateIdentity(data)
	if err != nil {
		return fmt.Errorf("publishing %s: %w", crateFile, err)
	}
	if (meta.Name != "" && meta.Name != name) || (meta.Version != "" && meta.Version != version) {
		return fmt.Errorf("publishing %s: the crate holds %s %s, not %s %s", crateFile, name, version, meta.Name, meta.Version)
	}
	// The crate must unpack cleanly with the installer's own rules.
	probe, err := os.MkdirTemp("", ".tmp-publish-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(probe)
	if err := Unpack(bytes.NewReader(data), int64(len(data)), filepath.Join(probe, "c"), UnpackOptions{Prefix: name + "-" + version + "/"}); err != nil {
		return fmt.Errorf("publishing %s %s: the crate would not install: %w", name, version, err)
	}
	sum := sha256.Sum256(data)
	cksum := hex.EncodeToString(sum[:])

	if err := os.MkdirAll(indexDir, 0o755); err != nil {
		return err
	}
	cfgPath := filepath.Join(indexDir, "config.json")
	if _, err := os.Stat(cfgPath); errors.Is(err, fs.ErrNotExist) {
		dl := "crates/{crate}/{version}/download"
		if meta.DLBase != "" {
			dl = strings.TrimSuffix(meta.DLBase, "/") + "/" + dl
		}
		b, _ := json.MarshalIndent(map[string]any{"dl": dl}, "", "  ")
		if err := writeFile(cfgPath, append(b, '\n')); err != nil {
			return fmt.Errorf("publishing %s %s: writing %s: %w", name, version, cfgPath, err)
		}
	}
	idxPath := filepath.Join(indexDir, filepath.FromSlash(IndexPath(name)))
	existing, err := os.ReadFile(idxPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if len(existing) > 0 {
		f, err := ParseIndexFile(name, existing)
		if err != nil {
			return fmt.Errorf("publishing %s %s: %s: %w", name, version, idxPath, err)
		}
		if len(f.CaseVariants) > 0 {
			return fmt.Errorf("publishing %s %s: the index already has the crate as %q; names are unique ignoring case", name, version, f.CaseVariants[0])
		}
		for _, e := range f.Entries {
			if e.Version().Equal(semver.MustParse(version)) {
				return fmt.Errorf("%w: %s %s is already in %s; bump the version", ErrAlreadyPublished, name, version, indexDir)
			}
		}
		if !bytes.HasSuffix(existing, []byte("\n")) {
			existing = append(existing, '\n')
		}
	}
	features := meta.Features
	if features == nil {
		features = map[string][]string{}
	}
	line, err := json.Marshal(struct {
		Name     string              `json:"name"`
		Vers     string              `json:"vers"`
		Deps     []Dependency        `json:"deps"`
		Cksum    string              `json:"cksum"`
		Features map[string][]string `json:"features"`
		Yanked   bool                `json:"yanked"`
		V        int                 `json:"v"`
	}{name, version, []Dependency{}, cksum, features, false, 1})
	if err != nil {
		return err
	}
	// Files first, index line last: a reader never sees a version whose
	// crate is not there yet.
	crateDir := filepath.Join(indexDir, "crates", name, version)
	if err := writeFile(filepath.Join(crateDir, "download"), data); err != nil {
		return fmt.Errorf("publishing %s %s: %w", name, version, err)
	}
	for _, a := range meta.Artifacts {
		b, err := os.ReadFile(a)
		if err != nil {
			return fmt.Errorf("publishing %s %s: artifact: %w", name, version, err)
		}
		base := filepath.Base(a)
		if base == "download" || checkPath(base) != nil {
			return fmt.Errorf("publishing %s %s: artifact file name %q is not allowed", name, version, base)
		}
		if err := writeFile(filepath.Join(crateDir, base), b); err != nil {
			return fmt.Errorf("publishing %s %s: %w", name, version, err)
		}
	}
	if err := writeFile(idxPath, append(append(existing, line...), '\n')); err != nil {
		return fmt.Errorf("publishing %s %s: writing %s: %w", name, version, idxPath, err)
	}
	return nil
}

// crateIdentity reads the name and version from a crate's top-level
// "name-version/" directory, cross-checked with [package] in its Cargo.toml
// when there is one.
func crateIdentity(data []byte) (name, version string, err error) {
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return "", "", fmt.Errorf("not a .crate (gzip): %v", err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	var top string
	var cargo []byte
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", "", fmt.Errorf("not a .crate (tar): %v", err)
		}
		first, rest, _ := strings.Cut(hdr.Name, "/")
		if top == "" {
			top = first
		} else if first != top {
			return "", "", fmt.Errorf("entries under both %q and %q", top, first)
		}
		if rest == "Cargo.toml" && hdr.Typeflag == tar.TypeReg {
			cargo, err = readCapped(tr, 1<<20, "Cargo.toml")
			if err != nil {
				return "", "", err
			}
		}
	}
	if top == "" {
		return "", "", fmt.Errorf("the crate is empty")
	}
	name, version, ok := splitNameVersion(top)
	if !ok {
		return "", "", fmt.Errorf("top-level directory %q is not <name>-<version>", top)
	}
	if cargo != nil {
		var ct struct {
			Package struct{ Name, Version string } `toml:"package"`
		}
		if err := toml.Unmarshal(cargo, &ct); err != nil {
			return "", "", fmt.Errorf("Cargo.toml: %v", err)
		}
		if (ct.Package.Name != "" && ct.Package.Name != name) || (ct.Package.Version != "" && ct.Package.Version != version) {
			return "", "", fmt.Errorf("Cargo.toml says %s %s but the crate directory is %s", ct.Package.Name, ct.Package.Version, top)
		}
	}
	return name, version, nil
}

// splitNameVersion splits "name-version"; names cannot hold a dot, so at
// most one split yields a valid name and a SemVer version.
func splitNameVersion(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] != '-' {
			continue
		}
		if ValidateName(s[:i]) != nil {
			continue
		}
		if _, err := semver.StrictNewVersion(s[i+1:]); err == nil {
			return s[:i], s[i+1:], true
		}
	}
	return "", "", false
}

// ServeIndex returns an http.Handler serving a static index directory
// written by [Publish], for `yolop registry serve`. Files are served with
// http.ServeContent, so ETag/If-None-Match and Last-Modified/
// If-Modified-Since give 304s. A relative dl in config.json is rewritten
// to an absolute URL on the request's host, so cargo (which needs an
// absolute dl) can use the served index too. Paths are opened through an
// [os.Root]: nothing outside dir is reachable. Only GET and HEAD are
// allowed.
func ServeIndex(dir string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		rel := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		if rel == "" || !fs.ValidPath(rel) {
			http.NotFound(w, r)
			return
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			http.Error(w, "index directory unavailable", http.StatusInternalServerError)
			return
		}
		defer root.Close()
		f, err := root.Open(rel)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			http.NotFound(w, r)
			return
		}
		var content io.ReadSeeker = f
		etag := fmt.Sprintf(`"%x-%x"`, fi.Size(), fi.ModTime().UnixNano())
		if rel == "config.json" {
			b, err := readCapped(f, 1<<20, "config.json")
			if err != nil {
				http.Error(w, "config.json unreadable", http.StatusInternalServerError)
				return
			}
			b = rewriteDL(b, r)
			sum := sha256.Sum256(b)
			etag = `"` + hex.EncodeToString(sum[:8]) + `"`
			content = bytes.NewReader(b)
			w.Header().Set("Content-Type", "application/json")
		} else if path.Base(rel) == "download" {
			w.Header().Set("Content-Type", "application/gzip")
		}
		w.Header().Set("ETag", etag)
		http.ServeContent(w, r, path.Base(rel), fi.ModTime(), content)
	})
}

// rewriteDL makes a relative dl absolute for the host the request came to.
func rewriteDL(b []byte, r *http.Request) []byte {
	var raw map[string]any
	if json.Unmarshal(b, &raw) != nil {
		return b
	}
	dl, ok := raw["dl"].(string)
	if !ok || strings.Contains(dl, "://") {
		return b
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if strings.HasPrefix(dl, "/") {
		raw["dl"] = scheme + "://" + r.Host + dl
	} else {
		raw["dl"] = scheme + "://" + r.Host + "/" + strings.TrimPrefix(dl, "./")
	}
	out, err := json.MarshalIndent(raw, "", "  ")
	if err != nil {
		return b
	}
	return append(out, '\n')
}
