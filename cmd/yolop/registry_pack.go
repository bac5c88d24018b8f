package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"yolop.dev/internal/atomicfile"
	"yolop.dev/packaging"
	"yolop.dev/registry/cratesio"
)

// packMTime is the fixed modification time of every entry in an artifact
// archive (the one cratesio.WriteCrate uses for .crate entries).
var packMTime = time.Unix(1153704088, 0).UTC()

// packOptions configure [packExtension].
type packOptions struct {
	// Dir is the package directory (plugin.json or Cargo.toml).
	Dir string
	// OutDir receives the .crate and the artifact archives.
	OutDir string
	// Targets is "host", "none", or a comma-separated list of GOOS/GOARCH
	// pairs or Rust target triples. Empty means "host" when the package
	// has a Go server and "none" otherwise.
	Targets string
	// GoMain is the Go main package of the server: a directory, or a
	// package path resolved from Dir. Empty means detect: Dir itself, then
	// Dir/server, when it holds a main package.
	GoMain string
	// Log receives progress lines (one per build).
	Log io.Writer
}

// packedArtifact is one per-target archive written by pack.
type packedArtifact struct {
	Target string // Rust target triple
	File   string // path in OutDir
	SHA256 string
}

// packResult reports what pack wrote.
type packResult struct {
	Crate, Version string
	File           string // the .crate
	SHA256         string
	Artifacts      []packedArtifact
}

// goTarget is one cross-compilation target.
type goTarget struct{ goos, goarch, triple string }

// parseTargets turns --targets into Go platforms with their triples.
func parseTargets(spec string) ([]goTarget, error) {
	var out []goTarget
	for _, t := range strings.Split(spec, ",") {
		t = strings.TrimSpace(t)
		var g goTarget
		switch {
		case t == "":
			continue
		case t == "host":
			g.goos, g.goarch = runtime.GOOS, runtime.GOARCH
		case strings.Contains(t, "/"):
			g.goos, g.goarch, _ = strings.Cut(t, "/")
		default:
			var ok bool
			if g.goos, g.goarch, ok = cratesio.GoPlatform(t); !ok {
				return nil, fmt.Errorf("--targets: %q is neither GOOS/GOARCH (linux/amd64) nor a known target triple (x86_64-unknown-linux-gnu)", t)
			}
		}
		triple, ok := cratesio.TargetTriple(g.goos, g.goarch)
		if !ok {
			return nil, fmt.Errorf("--targets: %s/%s has no target triple yolop knows; use one of linux/amd64, linux/arm64, darwin/amd64, darwin/arm64, windows/amd64, …", g.goos, g.goarch)
		}
		if t != "host" && !strings.Contains(t, "/") {
			triple = t // keep a -musl triple as given
		}
		g.triple = triple
		if !slices.ContainsFunc(out, func(o goTarget) bool { return o.triple == g.triple }) {
			out = append(out, g)
		}
	}
	return out, nil
}

// hasMainPackage reports whether dir holds non-test Go files of package main.
func hasMainPackage(dir string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly)
		if err == nil && af.Name.Name == "main" {
			return true
		}
	}
	return false
}

// goMainOf resolves the Go main package to build ("" when there is none)
// and the directory go build runs in.
func goMainOf(dir, flag string) (string, error) {
	if flag != "" {
		if fi, err := os.Stat(flag); err == nil && fi.IsDir() {
			return filepath.Abs(flag)
		}
		return flag, nil // a package path, resolved from the package directory
	}
	if hasMainPackage(dir) {
		return ".", nil
	}
	if hasMainPackage(filepath.Join(dir, "server")) {
		return "./server", nil
	}
	return "", nil
}

// packExtension writes the deterministic yolop-extension-<name>-<version>
// .crate of the package in o.Dir and, for a package with a Go server,
// one <name>-<triple>.tar.gz per target whose URL (relative: next to the
// crate in the index) and SHA-256 are recorded in the crate's Cargo.toml
// under [package.metadata.yolop.artifacts] before the crate is written, so
// the registry checksum of the crate pins the binaries too.
func packExtension(ctx context.Context, o packOptions) (*packResult, error) {
	m, err := packaging.Load(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("pack: %w", err)
	}
	crate := packaging.CratePrefix + m.Name
	if err := cratesio.ValidateName(crate); err != nil {
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
	bin := serverBinary(m)
	if len(targets) > 0 && bin == "" {
		return nil, fmt.Errorf("pack %s: the manifest's capabilityServer.command must be a bare command name (or bin/<name>) for prebuilt artifacts to be installed as bin/<name>", m.File)
	}
	if len(targets) > 0 && filepath.Base(m.File) != "plugin.json" {
		return nil, fmt.Errorf("pack %s: prebuilt artifacts are recorded with relative URLs in Cargo.toml's [package.metadata.yolop.artifacts], which the manifest schema (https:// URLs only) would refuse when Cargo.toml is the manifest; add a plugin.json, or pass --targets none", m.File)
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("pack: creating %s: %w", o.OutDir, err)
	}
	tmp, err := os.MkdirTemp("", "yolop-pack-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	tree := filepath.Join(tmp, "pkg")
	if err := packaging.CopyTree(m.Dir, tree); err != nil {
		return nil, fmt.Errorf("pack: %w", err)
	}
	res := &packResult{Crate: crate, Version: m.Version}
	if len(targets) > 0 {
		// A locally built server in bin/ is build output: the artifacts
		// provide it on install.
		os.Remove(filepath.Join(tree, "bin", bin))
		os.Remove(filepath.Join(tree, "bin", bin+".exe"))
		os.Remove(filepath.Join(tree, "bin")) // only if now empty
		arts := map[string]artifactEntry{}
		for _, t := range targets {
			pa, err := buildArtifact(ctx, m, goMain, bin, t, tmp, o)
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
	res.File = filepath.Join(o.OutDir, cratesio.CrateFileName(crate, m.Version))
	err = atomicfile.WriteFunc(res.File, 0o644, func(w io.Writer) error {
		return cratesio.WriteCrate(w, crate, m.Version, tree)
	})
	if err != nil {
		return nil, fmt.Errorf("pack %s: writing %s: %w", m.Dir, res.File, err)
	}
	if res.SHA256, err = sha256File(res.File); err != nil {
		return nil, err
	}
	return res, nil
}

// buildArtifact cross-compiles the Go server for t and writes the
// deterministic <name>-<triple>.tar.gz holding it into o.OutDir.
func buildArtifact(ctx context.Context, m *packaging.Manifest, goMain, bin string, t goTarget, tmp string, o packOptions) (packedArtifact, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return packedArtifact{}, fmt.Errorf("pack %s: cross-compiling the Go server needs the go command on PATH (%v); install Go or pass --targets none", m.Name, err)
	}
	name := bin
	if t.goos == "windows" {
		name += ".exe"
	}
	out := filepath.Join(tmp, "build", t.triple, name)
	// -trimpath and -buildvcs=false keep paths and the repository state
	// out of the binary, so the same source gives the same bytes.
	cmd := exec.CommandContext(ctx, goBin, "build", "-trimpath", "-buildvcs=false", "-o", out, goMain)
	cmd.Dir = m.Dir
	cmd.Env = append(os.Environ(), "GOOS="+t.goos, "GOARCH="+t.goarch, "CGO_ENABLED=0")
	if o.Log != nil {
		fmt.Fprintf(o.Log, "building %s for %s (GOOS=%s GOARCH=%s CGO_ENABLED=0)\n", bin, t.triple, t.goos, t.goarch)
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		return packedArtifact{}, fmt.Errorf("pack %s: go build %s for %s/%s failed: %v\n%s", m.Name, goMain, t.goos, t.goarch, err, bytes.TrimSpace(b))
	}
	pa := packedArtifact{Target: t.triple, File: filepath.Join(o.OutDir, m.Name+"-"+t.triple+".tar.gz")}
	err = atomicfile.WriteFunc(pa.File, 0o644, func(w io.Writer) error { return writeTarGz(w, out, name) })
	if err != nil {
		return packedArtifact{}, fmt.Errorf("pack %s: writing %s: %w", m.Name, pa.File, err)
	}
	if pa.SHA256, err = sha256File(pa.File); err != nil {
		return packedArtifact{}, err
	}
	return pa, nil
}

// writeTarGz writes a gzip'd tar holding the single executable file src
// as name, with a fixed mtime, owner 0 and mode 0755, and an empty gzip
// header: the same file gives the same bytes.
func writeTarGz(w io.Writer, src, name string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: fi.Size(), Mode: 0o755, ModTime: packMTime, Format: tar.FormatUSTAR}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := io.Copy(tw, f); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
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
