package cratesio

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/gofrs/flock"
	"github.com/klauspost/compress/gzip"
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

// publishLockName is the file [Publish] locks in the index directory, so
// two publishers cannot lose each other's index line.
const publishLockName = ".publish.lock"

// PublishOptions configure [Publish]. The zero value publishes a crate
// with no artifacts, whatever name and version it holds, into an index
// whose new config.json gets the relative dl.
//
// Error messages name the `yolop registry publish` flag that sets a field
// (--artifact, --dl-base), since that is where a person fixes it.
type PublishOptions struct {
	// Name and Version are what the crate must hold. Empty means read them
	// from the crate's top-level "name-version/" directory; when set they
	// must agree with it.
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
	// the crate, under crates/<name>/<version>/<file name>. Every artifact
	// the crate's metadata pins by a plain file name must be among them,
	// with the pinned SHA-256. Nil means none, which is right for a crate
	// that pins no artifact or hosts them elsewhere.
	Artifacts []string
	// Features is written to the index line; nil means {}.
	Features map[string][]string
}

// A PublishResult reports what [Publish] added to an index.
type PublishResult struct {
	// Name and Version identify the published crate.
	Name, Version string
	// Checksum is the crate's lowercase hex SHA-256, its index cksum.
	Checksum string
	// Artifacts are the file names published next to the crate, in the
	// order given.
	Artifacts []string
	// Warnings are findings that did not stop the publish: an artifact
	// the crate's metadata names by a URL hosted elsewhere, or a given
	// artifact file it does not name (installs will not use it).
	Warnings []string
}

// Publish adds crateFile to the static sparse index in indexDir, creating
// the directory if needed: config.json (only if absent), the index line
// (name, vers, deps, cksum, features, yanked, v) appended under the cargo
// index path, the crate at crates/<name>/<version>/download and the
// artifacts beside it.
//
// Before it writes anything, Publish checks that the crate unpacks under
// the installer's own rules ([Unpack]; [ErrUnsafeArchive] otherwise), and
// that every artifact the crate's metadata (Cargo.toml's
// [package.metadata.yolop.artifacts], then plugin.json's
// yolop.artifacts) names by a plain file name is among o.Artifacts with
// the pinned SHA-256, so no install can meet a 404 or a checksum mismatch.
// Publishing a version the index already has fails with
// [ErrAlreadyPublished] and changes nothing.
//
// Files are written crate and artifacts first, index line last, each
// atomically: a reader never sees a version whose files are missing.
// Concurrent publishers on one indexDir take turns on the file lock
// <indexDir>/.publish.lock; Publish waits for it until ctx is done.
func Publish(ctx context.Context, indexDir, crateFile string, o PublishOptions) (*PublishResult, error) {
	data, err := os.ReadFile(crateFile)
	if err != nil {
		return nil, fmt.Errorf("publishing %s: %w", crateFile, err)
	}
	meta, err := parseCrateMeta(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("publishing %s: %w", crateFile, err)
	}
	name, version := meta.Name, meta.Version
	if (o.Name != "" && o.Name != name) || (o.Version != "" && o.Version != version) {
		return nil, fmt.Errorf("publishing %s: the crate holds %s %s, not %s %s", crateFile, name, version, o.Name, o.Version)
	}
	warnings, err := checkPublishArtifacts(meta, o.Artifacts)
	if err != nil {
		return nil, fmt.Errorf("publishing %s: %w", crateFile, err)
	}
	// The crate must unpack cleanly with the installer's own rules.
	probe, err := os.MkdirTemp("", ".tmp-publish-*")
	if err != nil {
		return nil, fmt.Errorf("publishing %s %s: %w", name, version, err)
	}
	defer os.RemoveAll(probe)
	if err := Unpack(bytes.NewReader(data), int64(len(data)), filepath.Join(probe, "c"), UnpackOptions{Prefix: name + "-" + version + "/"}); err != nil {
		return nil, fmt.Errorf("publishing %s %s: the crate would not install: %w", name, version, err)
	}
	sum := sha256.Sum256(data)
	cksum := hex.EncodeToString(sum[:])

	if err := os.MkdirAll(indexDir, 0o755); err != nil {
		return nil, fmt.Errorf("publishing %s %s: creating the index directory: %w", name, version, err)
	}
	lk := flock.New(filepath.Join(indexDir, publishLockName))
	locked, err := lk.TryLockContext(ctx, 50*time.Millisecond)
	if err == nil && !locked {
		err = errors.New("not acquired")
	}
	if err != nil {
		return nil, fmt.Errorf("publishing %s %s: waiting for %s, which another publisher holds: %w", name, version, lk.Path(), err)
	}
	defer lk.Unlock()

	cfgPath := filepath.Join(indexDir, "config.json")
	if _, err := os.Stat(cfgPath); errors.Is(err, fs.ErrNotExist) {
		dl := "crates/{crate}/{version}/download"
		if o.DLBase != "" {
			dl = strings.TrimSuffix(o.DLBase, "/") + "/" + dl
		}
		b, _ := json.MarshalIndent(map[string]any{"dl": dl}, "", "  ")
		if err := writeFile(cfgPath, append(b, '\n')); err != nil {
			return nil, fmt.Errorf("publishing %s %s: writing %s: %w", name, version, cfgPath, err)
		}
	}
	idxPath := filepath.Join(indexDir, filepath.FromSlash(IndexPath(name)))
	existing, err := os.ReadFile(idxPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("publishing %s %s: %w", name, version, err)
	}
	if len(existing) > 0 {
		f, err := ParseIndexFile(name, existing)
		if err != nil {
			return nil, fmt.Errorf("publishing %s %s: %s: %w", name, version, idxPath, err)
		}
		if len(f.CaseVariants) > 0 {
			return nil, fmt.Errorf("publishing %s %s: the index already has the crate as %q; names are unique ignoring case", name, version, f.CaseVariants[0])
		}
		for _, e := range f.Entries {
			if e.Version().Equal(semver.MustParse(version)) {
				return nil, fmt.Errorf("%w: %s %s is already in %s; bump the version", ErrAlreadyPublished, name, version, indexDir)
			}
		}
		if !bytes.HasSuffix(existing, []byte("\n")) {
			existing = append(existing, '\n')
		}
	}
	features := o.Features
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
		return nil, err
	}
	// Files first, index line last: a reader never sees a version whose
	// crate is not there yet.
	res := &PublishResult{Name: name, Version: version, Checksum: cksum, Warnings: warnings}
	crateDir := filepath.Join(indexDir, "crates", name, version)
	if err := writeFile(filepath.Join(crateDir, "download"), data); err != nil {
		return nil, fmt.Errorf("publishing %s %s: %w", name, version, err)
	}
	for _, a := range o.Artifacts {
		b, err := os.ReadFile(a)
		if err != nil {
			return nil, fmt.Errorf("publishing %s %s: artifact: %w", name, version, err)
		}
		base := filepath.Base(a)
		if base == "download" || checkPath(base) != nil {
			return nil, fmt.Errorf("publishing %s %s: artifact file name %q is not allowed; rename the --artifact file", name, version, base)
		}
		if err := writeFile(filepath.Join(crateDir, base), b); err != nil {
			return nil, fmt.Errorf("publishing %s %s: %w", name, version, err)
		}
		res.Artifacts = append(res.Artifacts, base)
	}
	if err := writeFile(idxPath, append(append(existing, line...), '\n')); err != nil {
		return nil, fmt.Errorf("publishing %s %s: writing %s: %w", name, version, idxPath, err)
	}
	return res, nil
}

// crateMeta is what [Publish] reads from a .crate before adding it: its
// name and version and the prebuilt artifacts its metadata pins.
type crateMeta struct {
	Name, Version string
	// Artifacts maps a target triple to its pinned artifact, from
	// Cargo.toml's [package.metadata.yolop.artifacts] and plugin.json's
	// yolop.artifacts.
	Artifacts map[string]ArtifactSpec
}

// maxCrateMetaFile caps Cargo.toml and plugin.json read from a crate.
const maxCrateMetaFile = 1 << 20

// parseCrateMeta reads a .crate's name and version from its top-level
// "name-version/" directory, cross-checked with [package] in its
// Cargo.toml when there is one, and the artifacts its metadata pins,
// without unpacking it. Every entry must be under that one directory.
func parseCrateMeta(r io.Reader) (*crateMeta, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("not a .crate (gzip): %w; write one with `yolop ext pack`", err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	var top string
	var cargo, plugin []byte
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not a .crate (tar): %w", err)
		}
		first, rest, _ := strings.Cut(hdr.Name, "/")
		if top == "" {
			top = first
		} else if first != top {
			return nil, fmt.Errorf("not a .crate: entries under both %q and %q", top, first)
		}
		if hdr.Typeflag != tar.TypeReg || (rest != "Cargo.toml" && rest != "plugin.json") {
			continue
		}
		b, err := readCapped(tr, maxCrateMetaFile, hdr.Name)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", hdr.Name, err)
		}
		if rest == "Cargo.toml" {
			cargo = b
		} else {
			plugin = b
		}
	}
	if top == "" {
		return nil, errors.New("the crate is empty")
	}
	name, version, ok := splitNameVersion(top)
	if !ok {
		return nil, fmt.Errorf("the crate's top-level directory %q is not <name>-<version>", top)
	}
	m := &crateMeta{Name: name, Version: version, Artifacts: map[string]ArtifactSpec{}}
	if cargo != nil {
		am, err := ParseArtifactMetadata(cargo)
		if err != nil {
			return nil, err
		}
		if (am.Name != "" && am.Name != name) || (am.Version != "" && am.Version != version) {
			return nil, fmt.Errorf("Cargo.toml says %s %s but the crate directory is %s", am.Name, am.Version, top)
		}
		for t, s := range am.Yolop {
			m.Artifacts[t] = s
		}
	}
	if plugin != nil {
		var doc struct {
			Yolop struct {
				Artifacts map[string]ArtifactSpec `json:"artifacts"`
			} `json:"yolop"`
		}
		if err := json.Unmarshal(plugin, &doc); err != nil {
			return nil, fmt.Errorf("plugin.json: %w", err)
		}
		for t, s := range doc.Yolop.Artifacts {
			if _, ok := m.Artifacts[t]; !ok {
				m.Artifacts[t] = s
			}
		}
	}
	return m, nil
}

// checkPublishArtifacts checks the artifact files against the crate's
// metadata before anything is published: every artifact named by a plain
// relative file name (published next to the crate) must be given and must
// have the pinned SHA-256. A given file the metadata does not name, or an
// artifact hosted elsewhere, is only a warning.
func checkPublishArtifacts(m *crateMeta, files []string) (warnings []string, err error) {
	byName := map[string]string{}
	for _, f := range files {
		base := filepath.Base(f)
		if prev, dup := byName[base]; dup {
			return nil, fmt.Errorf("--artifact %s and %s have the same file name; they would overwrite each other next to the crate", prev, f)
		}
		byName[base] = f
	}
	named := map[string]bool{}
	var errs []error
	for _, t := range slices.Sorted(maps.Keys(m.Artifacts)) {
		s := m.Artifacts[t]
		if s.URL == "" || strings.Contains(s.URL, "://") || strings.Contains(s.URL, "{") || strings.ContainsAny(s.URL, `/\?#`) {
			warnings = append(warnings, fmt.Sprintf("the %s artifact %q is not a file published next to the crate; make sure it is hosted there", t, s.URL))
			continue
		}
		named[s.URL] = true
		f, ok := byName[s.URL]
		if !ok {
			errs = append(errs, fmt.Errorf("the crate pins artifact %s for %s, but no --artifact %s was given; an install on %s would fail with a 404", s.URL, t, s.URL, t))
			continue
		}
		sum, err := sha256File(f)
		if err != nil {
			return nil, fmt.Errorf("--artifact %s: %w", f, err)
		}
		if sum != strings.ToLower(s.SHA256) {
			errs = append(errs, fmt.Errorf("--artifact %s has sha256 %s, but the crate pins %s for %s; re-run `yolop ext pack` so the crate and its artifacts come from the same build", f, sum, s.SHA256, t))
		}
	}
	for _, base := range slices.Sorted(maps.Keys(byName)) {
		if !named[base] && !named[strings.TrimSuffix(base, ".minisig")] { // a signature rides with its artifact (minisign.go)
			warnings = append(warnings, fmt.Sprintf("--artifact %s is not named in the crate's metadata; installs will not use it", byName[base]))
		}
	}
	return warnings, errors.Join(errs...)
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
