package cratesio

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pelletier/go-toml/v2"

	"yolop.dev/internal/atomicfile"
	"yolop.dev/packaging"
)

// PackOptions configure [Pack]. The zero value packs the package as it is
// into the current directory when it has no Go server, and otherwise also
// cross-compiles its server for this host.
//
// Error messages name the `yolop ext pack` flag that sets a field
// (--targets, --go-main, -o), since that is where a person fixes it.
type PackOptions struct {
	// OutDir receives the .crate and the artifact archives; it is created
	// if missing. Empty means the current directory.
	OutDir string
	// Targets says which prebuilt server binaries to build: "host", "none",
	// or a comma-separated list of GOOS/GOARCH pairs ("linux/arm64") or
	// target triples ("x86_64-unknown-linux-musl"). Empty means "host"
	// when the package has a Go server and "none" otherwise. Any value but
	// "none" needs a Go server and the go command on PATH.
	Targets string
	// GoMain is the Go main package of the server: a directory (relative
	// to the current directory), or a package path that go build resolves
	// from the package directory. Empty means detect: the package
	// directory itself, then its server/ subdirectory, when it holds
	// non-test files of package main; neither means no Go server.
	GoMain string
	// Log receives one progress line per server build; nil discards them.
	Log io.Writer
}

// A PackedArtifact is one prebuilt server archive written by [Pack].
type PackedArtifact struct {
	// Target is the Rust target triple the binary runs on.
	Target string
	// File is the archive's path, <OutDir>/<name>-<Target>.tar.gz.
	File string
	// SHA256 is the archive's lowercase hex digest, as pinned in the crate.
	SHA256 string
}

// A PackResult reports what [Pack] wrote.
type PackResult struct {
	// Crate and Version identify the crate: yolop-extension-<name> and the
	// manifest's version.
	Crate, Version string
	// File is the .crate's path, <OutDir>/<Crate>-<Version>.crate.
	File string
	// SHA256 is the .crate's lowercase hex digest: the cksum its index
	// line will carry.
	SHA256 string
	// Artifacts lists the prebuilt server archives, in target order; nil
	// when none were built.
	Artifacts []PackedArtifact
}

// Pack writes the deterministic .crate of the extension package in dir
// (its plugin.json or Cargo.toml, validated by [packaging.Load]) as
// <OutDir>/yolop-extension-<name>-<version>.crate: the package as
// [WriteCrate] writes it, so the same input gives the same bytes.
//
// For a package with a Go server (see [PackOptions.GoMain]) and targets
// other than "none", Pack first cross-compiles the server once per target
// (GOOS, GOARCH, CGO_ENABLED=0, -trimpath, -buildvcs=false) into a
// deterministic <name>-<triple>.tar.gz holding the single binary, named
// after capabilityServer.command, in OutDir. Each archive's file name (a
// URL relative to the crate's download URL, so it resolves next to the
// crate in the index) and SHA-256 are recorded in the packed crate's
// Cargo.toml under [package.metadata.yolop.artifacts.<triple>] before the
// crate is written, so the registry checksum of the crate pins the
// binaries too. An existing Cargo.toml is merged (its [package] name and
// version must match the crate); otherwise a minimal one is generated. A
// server binary in dir/bin/ is build output and is left out of the crate:
// the artifacts provide it on install. dir itself is never modified.
//
// Without artifacts the package is packed as it is, with no Cargo.toml
// added.
func Pack(ctx context.Context, dir string, o PackOptions) (*PackResult, error) {
	m, err := packaging.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("pack: %w", err)
	}
	crate := ExtensionCratePrefix + m.Name
	if err := ValidateName(crate); err != nil {
		return nil, fmt.Errorf("pack %s: %w", m.Dir, err)
	}
	goMain, err := goMainOf(m.Dir, o.GoMain)
	if err != nil {
		return nil, fmt.Errorf("pack %s: --go-main: %w", m.Dir, err)
	}
	spec := o.Targets
	if spec == "" {
		spec = "none"
		if goMain != "" {
			spec = "host"
		}
	}
	var targets []goTarget
	if spec != "none" {
		if goMain == "" {
			return nil, fmt.Errorf("pack %s: --targets %s needs a Go server: the package has no main package in its directory or in server/; name it with --go-main, or pass --targets none", m.Dir, spec)
		}
		if targets, err = parseTargets(spec); err != nil {
			return nil, fmt.Errorf("pack %s: %w", m.Dir, err)
		}
	}
	bin, ok := m.ServerBinary()
	if len(targets) > 0 && !ok {
		return nil, fmt.Errorf("pack %s: the manifest's capabilityServer.command must be a bare command name (or bin/<name>) for prebuilt artifacts to be installed as bin/<name>", m.File)
	}
	if len(targets) > 0 && filepath.Base(m.File) != "plugin.json" {
		return nil, fmt.Errorf("pack %s: prebuilt artifacts are recorded with relative URLs in Cargo.toml's [package.metadata.yolop.artifacts], which the manifest schema (https:// URLs only) would refuse when Cargo.toml is the manifest; add a plugin.json, or pass --targets none", m.File)
	}
	outDir := o.OutDir
	if outDir == "" {
		outDir = "."
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("pack %s: creating the output directory (-o): %w", m.Dir, err)
	}
	tmp, err := os.MkdirTemp("", "yolop-pack-*")
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", m.Dir, err)
	}
	defer os.RemoveAll(tmp)
	tree := filepath.Join(tmp, "pkg")
	if err := packaging.CopyTree(m.Dir, tree); err != nil {
		return nil, fmt.Errorf("pack: %w", err)
	}
	res := &PackResult{Crate: crate, Version: m.Version}
	if len(targets) > 0 {
		// A locally built server in bin/ is build output: the artifacts
		// provide it on install.
		os.Remove(filepath.Join(tree, "bin", bin))
		os.Remove(filepath.Join(tree, "bin", bin+".exe"))
		os.Remove(filepath.Join(tree, "bin")) // only if now empty
		arts := map[string]artifactEntry{}
		for _, t := range targets {
			pa, err := buildArtifact(ctx, m, goMain, bin, t, tmp, outDir, o.Log)
			if err != nil {
				return nil, err
			}
			res.Artifacts = append(res.Artifacts, pa)
			arts[t.triple] = artifactEntry{URL: filepath.Base(pa.File), SHA256: pa.SHA256}
		}
		if err := writeCargoToml(tree, crate, m, arts); err != nil {
			return nil, fmt.Errorf("pack %s: %w", m.Dir, err)
		}
	}
	res.File = filepath.Join(outDir, CrateFileName(crate, m.Version))
	err = atomicfile.WriteFunc(res.File, 0o644, func(w io.Writer) error {
		return WriteCrate(w, crate, m.Version, tree)
	})
	if err != nil {
		return nil, fmt.Errorf("pack %s: writing %s: %w", m.Dir, res.File, err)
	}
	if res.SHA256, err = sha256File(res.File); err != nil {
		return nil, fmt.Errorf("pack %s: %w", m.Dir, err)
	}
	return res, nil
}

// artifactEntry is one [package.metadata.yolop.artifacts.<triple>] table.
type artifactEntry struct {
	URL    string `toml:"url"`
	SHA256 string `toml:"sha256"`
}

// writeCargoToml records the artifacts in tree/Cargo.toml: merged into
// an existing one (whose [package] name and version must match the
// crate), else a generated one.
func writeCargoToml(tree, crate string, m *packaging.Manifest, arts map[string]artifactEntry) error {
	p := filepath.Join(tree, "Cargo.toml")
	doc := map[string]any{}
	b, err := os.ReadFile(p)
	switch {
	case err == nil:
		if err := toml.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("Cargo.toml: %w", err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	pkg, _ := doc["package"].(map[string]any)
	if pkg == nil {
		pkg = map[string]any{}
		doc["package"] = pkg
	}
	if n, ok := pkg["name"].(string); ok && n != crate {
		return fmt.Errorf("Cargo.toml names the crate %q, but extension %s is published as %q (the naming convention); rename it", n, m.Name, crate)
	}
	if v, ok := pkg["version"].(string); ok && v != m.Version {
		return fmt.Errorf("Cargo.toml has version %s but plugin.json %s; make them agree", v, m.Version)
	}
	pkg["name"], pkg["version"] = crate, m.Version
	if _, ok := pkg["description"]; !ok && m.Description != "" {
		pkg["description"] = m.Description
	}
	if _, ok := pkg["keywords"]; !ok {
		pkg["keywords"] = []string{"yolop-extension"}
	}
	meta, _ := pkg["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		pkg["metadata"] = meta
	}
	y, _ := meta["yolop"].(map[string]any)
	if y == nil {
		y = map[string]any{}
		meta["yolop"] = y
	}
	y["artifacts"] = arts
	out, err := toml.Marshal(doc)
	if err != nil {
		return err
	}
	header := "# Written by `yolop ext pack`: the prebuilt server binaries, pinned by\n# SHA-256; relative URLs resolve against this crate's download URL.\n"
	return os.WriteFile(p, append([]byte(header), out...), 0o644)
}

// sha256File returns the lowercase hex SHA-256 of the file at p.
func sha256File(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hashing %s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
