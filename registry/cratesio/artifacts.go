package cratesio

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// An ArtifactSpec is one target's prebuilt artifact in yolop's own
// metadata shape, read from Cargo.toml
//
//	[package.metadata.yolop.artifacts.x86_64-unknown-linux-gnu]
//	url = "https://example.org/{ name }-{ target }-v{ version }.tgz"
//	sha256 = "<64 hex digits>"
//
// or from plugin.json's "yolop": {"artifacts": {"<triple>": {...}}}.
type ArtifactSpec struct {
	// URL is a template (see [ArtifactMetadata.Select] for the variables).
	// A relative URL is resolved against the crate's download URL, so an
	// artifact published next to the crate can be named by file name alone.
	URL string `toml:"url" json:"url"`
	// SHA256 is the lowercase hex digest of the downloaded file. Required.
	SHA256 string `toml:"sha256" json:"sha256"`
	// Format is "tgz", "tar" or "bin". Empty means inferred from the URL
	// (.tgz/.tar.gz, .tar, anything else is a bare binary).
	Format string `toml:"format" json:"format,omitempty"`
	// Bin is the path of the binary inside an archive. Empty means the one
	// file named like the binary (or the only file).
	Bin string `toml:"bin" json:"bin,omitempty"`
}

// Binstall is cargo-binstall's [package.metadata.binstall] table (the keys
// this package uses). Per-target overrides are matched by exact target
// triple; cfg(...) overrides are ignored.
type Binstall struct {
	PkgURL    string                      `toml:"pkg-url"`
	BinDir    string                      `toml:"bin-dir"`
	PkgFmt    string                      `toml:"pkg-fmt"`
	Overrides map[string]BinstallOverride `toml:"overrides"`
}

// BinstallOverride is one [package.metadata.binstall.overrides.<target>].
type BinstallOverride struct {
	PkgURL string `toml:"pkg-url"`
	BinDir string `toml:"bin-dir"`
	PkgFmt string `toml:"pkg-fmt"`
}

// ArtifactMetadata is everything needed to pick a prebuilt artifact for a
// target: the template variables and both metadata shapes. Build it with
// [ParseArtifactMetadata] from a Cargo.toml, or fill Yolop from plugin.json.
type ArtifactMetadata struct {
	Name, Version, Repo string
	// Bin is the binary name; empty means Name.
	Bin      string
	Yolop    map[string]ArtifactSpec
	Binstall *Binstall
}

// ParseArtifactMetadata reads [package] name/version/repository, the first
// [[bin]] name, [package.metadata.yolop.artifacts] and
// [package.metadata.binstall] from a crate's Cargo.toml.
func ParseArtifactMetadata(cargoToml []byte) (ArtifactMetadata, error) {
	var doc struct {
		Package struct {
			Name       string `toml:"name"`
			Version    string `toml:"version"`
			Repository string `toml:"repository"`
			Metadata   struct {
				Yolop struct {
					Artifacts map[string]ArtifactSpec `toml:"artifacts"`
				} `toml:"yolop"`
				Binstall *Binstall `toml:"binstall"`
			} `toml:"metadata"`
		} `toml:"package"`
		Bin []struct {
			Name string `toml:"name"`
		} `toml:"bin"`
	}
	if err := toml.Unmarshal(cargoToml, &doc); err != nil {
		return ArtifactMetadata{}, fmt.Errorf("Cargo.toml: %w", err)
	}
	m := ArtifactMetadata{
		Name:     doc.Package.Name,
		Version:  doc.Package.Version,
		Repo:     doc.Package.Repository,
		Yolop:    doc.Package.Metadata.Yolop.Artifacts,
		Binstall: doc.Package.Metadata.Binstall,
	}
	if len(doc.Bin) > 0 {
		m.Bin = doc.Bin[0].Name
	}
	return m, nil
}

// An Artifact is a resolved prebuilt artifact, ready for
// [Client.ProvisionArtifact].
type Artifact struct {
	Target string
	URL    string // absolute
	SHA256 string // lowercase hex
	Format string // "tgz", "tar" or "bin"
	// BinPath is the binary's path inside an archive; empty means search.
	BinPath string
	// Bin is the file name installed under <pkgdir>/bin/.
	Bin string
	// MinisignKey, if set, is the pinned minisign public key the artifact
	// must be signed with: <URL>.minisig is fetched and verified before
	// anything is written (minisign.go).
	MinisignKey string
}

// Select picks the artifact for the first of targets that has one. Our own
// [package.metadata.yolop.artifacts.<target>] wins; otherwise binstall's
// pkg-url (with the exact-target override applied key by key) is used, and
// its digest must still come from our table (an entry with only sha256),
// because the registry checksum does not cover binstall downloads.
//
// Templates may use { name }, { version }, { repo }, { target }, { bin },
// { binary-ext }, { archive-format } and { archive-suffix } (spaces inside
// the braces optional). A relative URL is resolved against baseURL (the
// crate's download URL).
func (m ArtifactMetadata) Select(baseURL string, targets ...string) (Artifact, error) {
	var firstErr error
	for _, t := range targets {
		a, ok, err := m.selectOne(baseURL, t)
		if err != nil {
			// Unusable for this target (say, no pinned digest): try the
			// next target, report this if none works.
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		if ok {
			return a, nil
		}
	}
	if firstErr != nil {
		return Artifact{}, firstErr
	}
	return Artifact{}, fmt.Errorf("%w: %s %s names no prebuilt artifact for %s; install the binary on PATH or build it", ErrNoArtifact, m.Name, m.Version, strings.Join(targets, " or "))
}

func (m ArtifactMetadata) selectOne(baseURL, target string) (Artifact, bool, error) {
	bin := m.Bin
	if bin == "" {
		bin = m.Name
	}
	a := Artifact{Target: target, Bin: bin}
	ours, haveOurs := m.Yolop[target]
	var tmpl, binDir string
	if haveOurs && ours.URL != "" {
		tmpl, a.Format, binDir = ours.URL, ours.Format, ours.Bin
	} else if m.Binstall != nil {
		b := *m.Binstall
		if o, ok := b.Overrides[target]; ok {
			b.PkgURL = cmp.Or(o.PkgURL, b.PkgURL)
			b.BinDir = cmp.Or(o.BinDir, b.BinDir)
			b.PkgFmt = cmp.Or(o.PkgFmt, b.PkgFmt)
		}
		if b.PkgURL == "" {
			return Artifact{}, false, nil
		}
		tmpl, a.Format, binDir = b.PkgURL, cmp.Or(b.PkgFmt, "tgz"), b.BinDir
		if binDir == "" {
			binDir = "{ name }-{ target }-v{ version }/{ bin }{ binary-ext }"
		}
	} else {
		return Artifact{}, false, nil
	}
	what := fmt.Sprintf("%s %s artifact for %s", m.Name, m.Version, target)
	if a.Format == "" {
		a.Format = formatFromURL(tmpl)
	}
	switch a.Format {
	case "tgz", "tar", "bin":
	case "tar.gz":
		a.Format = "tgz"
	default:
		return Artifact{}, false, fmt.Errorf("%w: %s: format %q is not supported (tgz, tar or bin)", ErrNoArtifact, what, a.Format)
	}
	vars := map[string]string{
		"name": m.Name, "version": m.Version, "repo": m.Repo, "target": target, "bin": bin,
		"binary-ext": binaryExt(target), "archive-format": a.Format, "format": a.Format,
		"archive-suffix": archiveSuffix(a.Format),
	}
	u, err := expandTemplate(tmpl, vars)
	if err != nil {
		return Artifact{}, false, fmt.Errorf("%w: %s: url: %v", ErrNoArtifact, what, err)
	}
	if a.URL, err = resolveArtifactURL(baseURL, u); err != nil {
		return Artifact{}, false, fmt.Errorf("%w: %s: %v", ErrNoArtifact, what, err)
	}
	if binDir != "" && a.Format != "bin" {
		if a.BinPath, err = expandTemplate(binDir, vars); err != nil {
			return Artifact{}, false, fmt.Errorf("%w: %s: bin path: %v", ErrNoArtifact, what, err)
		}
	}
	a.SHA256 = strings.ToLower(ours.SHA256)
	if a.SHA256 == "" {
		return Artifact{}, false, fmt.Errorf("%w: %s has no pinned sha256; add sha256 = \"<hex>\" under [package.metadata.yolop.artifacts.%s]", ErrNoArtifact, what, target)
	}
	if !isLowerHex64(a.SHA256) {
		return Artifact{}, false, fmt.Errorf("%w: %s: sha256 %q is not 64 hex digits", ErrNoArtifact, what, ours.SHA256)
	}
	return a, true, nil
}

func formatFromURL(u string) string {
	u, _, _ = strings.Cut(u, "?")
	switch {
	case strings.HasSuffix(u, ".tgz"), strings.HasSuffix(u, ".tar.gz"):
		return "tgz"
	case strings.HasSuffix(u, ".tar"):
		return "tar"
	}
	return "bin"
}

func archiveSuffix(format string) string {
	switch format {
	case "tgz":
		return ".tgz"
	case "tar":
		return ".tar"
	}
	return ""
}

func binaryExt(target string) string {
	if strings.Contains(target, "windows") {
		return ".exe"
	}
	return ""
}

var templateVar = regexp.MustCompile(`\{\s*([a-z-]+)\s*\}`)

// expandTemplate replaces { var } markers; an unknown variable is an error.
func expandTemplate(t string, vars map[string]string) (string, error) {
	var bad string
	out := templateVar.ReplaceAllStringFunc(t, func(m string) string {
		k := templateVar.FindStringSubmatch(m)[1]
		v, ok := vars[k]
		if !ok && bad == "" {
			bad = k
		}
		return v
	})
	if bad != "" {
		return "", fmt.Errorf("unknown template variable { %s } in %q", bad, t)
	}
	return out, nil
}

func resolveArtifactURL(baseURL, u string) (string, error) {
	ref, err := url.Parse(u)
	if err != nil {
		return "", fmt.Errorf("url %q: %v", u, err)
	}
	if !ref.IsAbs() {
		if baseURL == "" {
			return "", fmt.Errorf("relative url %q needs the crate's download URL", u)
		}
		b, err := url.Parse(baseURL)
		if err != nil {
			return "", fmt.Errorf("base url %q: %v", baseURL, err)
		}
		ref = b.ResolveReference(ref)
	}
	if ref.Scheme != "https" && ref.Scheme != "http" {
		return "", fmt.Errorf("url %q: only http and https are allowed", ref)
	}
	return ref.String(), nil
}

// TargetTriple maps a Go GOOS/GOARCH pair to the Rust target triple used to
// name artifacts (x86_64-unknown-linux-gnu, aarch64-apple-darwin, …).
func TargetTriple(goos, goarch string) (string, bool) {
	arch := map[string]string{
		"amd64": "x86_64", "arm64": "aarch64", "386": "i686", "riscv64": "riscv64gc",
		"ppc64le": "powerpc64le", "s390x": "s390x",
	}
	switch goos + "/" + goarch {
	case "linux/arm":
		return "armv7-unknown-linux-gnueabihf", true
	case "windows/amd64", "windows/arm64", "windows/386":
		return arch[goarch] + "-pc-windows-msvc", true
	case "darwin/amd64", "darwin/arm64":
		return arch[goarch] + "-apple-darwin", true
	case "freebsd/amd64", "freebsd/arm64":
		return arch[goarch] + "-unknown-freebsd", true
	}
	if a, ok := arch[goarch]; ok && goos == "linux" {
		return a + "-unknown-linux-gnu", true
	}
	return "", false
}

// GoPlatform is the inverse of [TargetTriple], for cross-compiling an
// artifact with GOOS/GOARCH. It accepts -gnu and -musl Linux triples.
func GoPlatform(triple string) (goos, goarch string, ok bool) {
	for _, os := range []string{"linux", "darwin", "windows", "freebsd"} {
		for _, arch := range []string{"amd64", "arm64", "386", "arm", "riscv64", "ppc64le", "s390x"} {
			t, ok := TargetTriple(os, arch)
			if !ok {
				continue
			}
			if t == triple || (os == "linux" && strings.TrimSuffix(t, "-gnu")+"-musl" == triple) {
				return os, arch, true
			}
		}
	}
	return "", "", false
}

// HostTargets returns the target triples whose binaries run on this host,
// preferred first (on Linux the -gnu triple, then -musl).
func HostTargets() []string {
	t, ok := TargetTriple(runtime.GOOS, runtime.GOARCH)
	if !ok {
		return nil
	}
	if strings.HasSuffix(t, "-linux-gnu") {
		return []string{t, strings.TrimSuffix(t, "-gnu") + "-musl"}
	}
	return []string{t}
}

// ProvisionArtifact downloads a, verifies its SHA-256 before touching
// anything, and installs the binary as <pkgDir>/bin/<a.Bin> with mode 0755
// (from a tgz/tar through [Unpack]'s checks, or as a bare binary). It
// returns the verified digest for the lock. pkgDir must exist; on a digest
// mismatch or any other error nothing is written there.
func (c *Client) ProvisionArtifact(ctx context.Context, a Artifact, pkgDir string, progress ProgressFunc) (string, error) {
	what := fmt.Sprintf("artifact %s for %s", a.URL, a.Target)
	if !isLowerHex64(a.SHA256) {
		return "", fmt.Errorf("%w: %s: sha256 %q is not 64 lowercase hex digits", ErrNoArtifact, what, a.SHA256)
	}
	if a.Bin == "" || strings.ContainsAny(a.Bin, `/\`) || checkPath(a.Bin) != nil {
		return "", fmt.Errorf("%w: %s: binary name %q is not a plain file name", ErrNoArtifact, what, a.Bin)
	}
	fi, err := os.Stat(pkgDir)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s: package directory %s does not exist", what, pkgDir)
	}
	f, size, sum, err := c.download(ctx, what, a.URL, false, pkgDir, progress)
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if !checksumEqual(sum, a.SHA256) {
		return "", fmt.Errorf("%w: %s: the crate metadata pins sha256 %s, the download is %s; nothing was installed", ErrChecksum, what, a.SHA256, sum)
	}
	if err := c.verifyArtifactSignature(ctx, a, f.Name(), pkgDir); err != nil {
		return "", err
	}
	staging, err := os.MkdirTemp(pkgDir, ".tmp-*")
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	defer os.RemoveAll(staging)
	var binFile string
	switch a.Format {
	case "bin":
		binFile = f.Name()
	case "tgz", "tar":
		tree := filepath.Join(staging, "x")
		if err := unpack(f, size, tree, c.opts.Unpack, a.Format == "tgz"); err != nil {
			return "", fmt.Errorf("%s: %w", what, err)
		}
		if binFile, err = findBinary(tree, a); err != nil {
			return "", fmt.Errorf("%w: %s: %v", ErrNoArtifact, what, err)
		}
	default:
		return "", fmt.Errorf("%w: %s: format %q is not supported", ErrNoArtifact, what, a.Format)
	}
	if err := os.Chmod(binFile, 0o755); err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	binDir := filepath.Join(pkgDir, "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	if err := os.Rename(binFile, filepath.Join(binDir, a.Bin)); err != nil {
		return "", fmt.Errorf("%s: installing into %s: %w", what, binDir, err)
	}
	syncDir(binDir)
	return sum, nil
}

// findBinary locates the binary in an unpacked artifact: BinPath if given,
// else the one regular file named Bin (or Bin+".exe"), else the only file.
func findBinary(tree string, a Artifact) (string, error) {
	if a.BinPath != "" {
		p := path.Clean(a.BinPath)
		if checkPath(p) != nil {
			return "", fmt.Errorf("bin path %q is not a local path", a.BinPath)
		}
		full := filepath.Join(tree, filepath.FromSlash(p))
		if fi, err := os.Lstat(full); err == nil && fi.Mode().IsRegular() {
			return full, nil
		}
	}
	var named, all []string
	_ = filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		all = append(all, p)
		if d.Name() == a.Bin || d.Name() == a.Bin+".exe" {
			named = append(named, p)
		}
		return nil
	})
	switch {
	case len(named) == 1:
		return named[0], nil
	case len(named) == 0 && len(all) == 1:
		return all[0], nil
	}
	return "", fmt.Errorf("cannot tell which file is the binary %q (%d files, %d with that name); set bin in the artifact metadata", a.Bin, len(all), len(named))
}
