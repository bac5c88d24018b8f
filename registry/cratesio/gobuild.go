package cratesio

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"yolop.dev/internal/atomicfile"
	"yolop.dev/packaging"
)

// This file is the build side of [Pack]: cross-compiling a Go capability
// server per target into a deterministic artifact archive.

// goTarget is one cross-compilation target.
type goTarget struct{ goos, goarch, triple string }

// parseTargets turns a [PackOptions.Targets] list into Go platforms with
// their triples, without duplicates.
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
			if g.goos, g.goarch, ok = GoPlatform(t); !ok {
				return nil, fmt.Errorf("--targets: %q is neither GOOS/GOARCH (linux/amd64) nor a known target triple (x86_64-unknown-linux-gnu)", t)
			}
		}
		triple, ok := TargetTriple(g.goos, g.goarch)
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

// goMainOf resolves the Go main package to build, as go build takes it
// from the package directory dir ("" when there is none), from
// [PackOptions.GoMain].
func goMainOf(dir, goMain string) (string, error) {
	if goMain != "" {
		if fi, err := os.Stat(goMain); err == nil && fi.IsDir() {
			return filepath.Abs(goMain)
		}
		return goMain, nil // a package path, resolved from the package directory
	}
	if hasMainPackage(dir) {
		return ".", nil
	}
	if hasMainPackage(filepath.Join(dir, "server")) {
		return "./server", nil
	}
	return "", nil
}

// buildArtifact cross-compiles the Go server for t under tmp and writes
// the deterministic <name>-<triple>.tar.gz holding it into outDir.
func buildArtifact(ctx context.Context, m *packaging.Manifest, goMain, bin string, t goTarget, tmp, outDir string, log io.Writer) (PackedArtifact, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return PackedArtifact{}, fmt.Errorf("pack %s: cross-compiling the Go server needs the go command on PATH (%v); install Go or pass --targets none", m.Name, err)
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
	if log != nil {
		fmt.Fprintf(log, "building %s for %s (GOOS=%s GOARCH=%s CGO_ENABLED=0)\n", bin, t.triple, t.goos, t.goarch)
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		return PackedArtifact{}, fmt.Errorf("pack %s: go build %s for %s/%s failed: %v\n%s", m.Name, goMain, t.goos, t.goarch, err, bytes.TrimSpace(b))
	}
	pa := PackedArtifact{Target: t.triple, File: filepath.Join(outDir, m.Name+"-"+t.triple+".tar.gz")}
	err = atomicfile.WriteFunc(pa.File, 0o644, func(w io.Writer) error { return writeTarGz(w, out, name) })
	if err != nil {
		return PackedArtifact{}, fmt.Errorf("pack %s: writing %s: %w", m.Name, pa.File, err)
	}
	if pa.SHA256, err = sha256File(pa.File); err != nil {
		return PackedArtifact{}, fmt.Errorf("pack %s: %w", m.Name, err)
	}
	return pa, nil
}

// writeTarGz writes a gzip'd tar holding the single executable file src
// as name, with a fixed mtime (crateMTime, as in a .crate), owner 0 and
// mode 0755, and an empty gzip header: the same file gives the same
// bytes.
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
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: fi.Size(), Mode: 0o755, ModTime: crateMTime, Format: tar.FormatUSTAR}
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
