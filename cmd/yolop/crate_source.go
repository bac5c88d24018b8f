package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"yolop.dev/cmd/yolop/internal/builtin/extmgr"
	"yolop.dev/cmd/yolop/internal/settings"
	"yolop.dev/packaging"
	"yolop.dev/registry/cratesio"
)

// crateInstall describes how to fetch a crates.io (or sparse registry)
// source into a staging directory.
type crateInstall struct {
	// Registry is "sparse+URL"; empty means crates.io.
	Registry string
	// Build allows `cargo install` when no prebuilt artifact matches.
	Build bool
}

// registryCacheDir is where index responses are cached, per registry:
// <config>/cache/registry.
func registryCacheDir() (string, error) {
	dir, err := packaging.ConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "cache", "registry"), nil
}

// registryClient returns a sparse-index client for registry ("" means
// crates.io) that caches under the config directory and applies the
// [registry] transfer limits from settings.toml. With fresh (the config
// directory did not exist before this command) it neither caches nor reads
// settings: a first install that fails must leave no config directory
// behind, and there are no settings to read.
func (a *app) registryClient(ctx context.Context, registry string, fresh bool) (*cratesio.Client, error) {
	if registry != "" {
		if _, err := cratesio.ParseRegistry(registry); err != nil {
			return nil, fmt.Errorf("--registry %q: %w; give it as sparse+https://host/path/ (or sparse+http://127.0.0.1:PORT/ for a local index)", registry, err)
		}
	}
	cache, err := registryCacheDir()
	if err != nil {
		return nil, err
	}
	dir, err := packaging.ConfigDir()
	if err != nil {
		return nil, err
	}
	st := settings.New(dir)
	var limits settings.DownloadLimits
	if fresh {
		cache = ""
	} else if limits, err = st.DownloadLimits(ctx); err != nil {
		return nil, err
	}
	opts := cratesio.Options{
		Registry:  registry,
		CacheDir:  cache,
		Logger:    a.log.Named("registry"),
		UserAgent: "yolop/" + version,
		LimitNames: cratesio.LimitNames{
			LowSpeedLimit:   "[registry] low_speed_limit",
			LowSpeedTime:    "[registry] low_speed_time",
			DownloadTimeout: "[registry] download_timeout",
			Where:           st.Path(),
			Off:             "0",
		},
	}
	// In settings 0 turns a limit off; in cratesio.Options zero means the
	// default and a negative value turns it off.
	if l := limits.LowSpeedLimit; l != nil {
		opts.LowSpeedLimit = offIfZero(*l)
	}
	if d := limits.LowSpeedTime; d != nil {
		opts.LowSpeedTime = time.Duration(offIfZero(int64(*d)))
	}
	if d := limits.DownloadTimeout; d != nil {
		opts.DownloadTimeout = time.Duration(offIfZero(int64(*d)))
	}
	return cratesio.NewClient(opts), nil
}

// offIfZero maps a settings value, where 0 means off, to a cratesio
// option, where negative means off and 0 the default.
func offIfZero(v int64) int64 {
	if v == 0 {
		return -1
	}
	return v
}

// fetchCrate returns the packaging Fetch and Provision funcs for a crate
// source. Fetch resolves the version in the sparse index, downloads the
// .crate (with a progress bar on a terminal), verifies its SHA-256 against
// the index and unpacks it into the staging directory. Provision runs only
// after the user approved the manifest, and puts the server binary in place
// in the spec's order: (a) the prebuilt artifact the crate's metadata names
// for this host, verified against its pinned digest; (b) with Build and
// cargo on PATH, `cargo install --locked` of the unpacked source; (c)
// otherwise nothing, with a note naming the missing binary. Nothing is
// downloaded beyond the crate, and nothing from it runs, before consent.
func (a *app) fetchCrate(src packaging.Source, o crateInstall) (extmgr.FetchFunc, extmgr.ProvisionFunc) {
	var (
		c   *cratesio.Client
		rel cratesio.Release
	)
	// Whether the config directory exists is decided now, before the
	// store creates it to take its lock.
	fresh := false
	if dir, err := packaging.ConfigDir(); err == nil {
		_, err := os.Stat(dir)
		fresh = errors.Is(err, fs.ErrNotExist)
	}
	fetch := func(ctx context.Context, dir string) (packaging.FetchResult, error) {
		registry := o.Registry
		if src.Registry != "" {
			// The source names its registry (sparse+URL#crate, as the
			// lock records it): that wins over --registry and settings.
			if o.Registry != "" && o.Registry != src.Registry {
				if r, err := cratesio.ParseRegistry(o.Registry); err != nil || "sparse+"+r.String() != src.Registry {
					fmt.Fprintf(a.stderr, "note: %s names its registry; using %s, not %s\n", src, src.Registry, o.Registry)
				}
			}
			registry = src.Registry
		}
		var err error
		if c, err = a.registryClient(ctx, registry, fresh); err != nil {
			return packaging.FetchResult{}, err
		}
		// Every result, failures included, names the registry, so the
		// store labels the source (and its error) with it.
		failed := packaging.FetchResult{Registry: c.Registry()}
		if rel, err = c.Resolve(ctx, src.Crate, src.Rev, ""); err != nil {
			return failed, err
		}
		// Fetch wants a destination that does not exist yet; the store
		// made dir empty for us under its lock, so hand over its name.
		if err := os.Remove(dir); err != nil {
			return failed, fmt.Errorf("crate %s %s: preparing the staging directory %s: %w", rel.Name, rel.Version, dir, err)
		}
		bar := a.progress(fmt.Sprintf("%s %s", rel.Name, rel.Version))
		err = c.Fetch(ctx, rel, dir, bar.update)
		bar.finish()
		if err != nil {
			return failed, err
		}
		return packaging.FetchResult{Version: rel.Version, CrateChecksum: rel.Checksum, Registry: rel.Registry}, nil
	}
	provision := func(ctx context.Context, dir string, m *packaging.Manifest) (packaging.FetchResult, error) {
		if c == nil {
			return packaging.FetchResult{}, fmt.Errorf("installing %s: provisioning before the crate was fetched", src)
		}
		digest, err := a.provision(ctx, c, rel, dir, m, o)
		return packaging.FetchResult{ArtifactDigest: digest}, err
	}
	return fetch, provision
}

// serverBinary returns the file name the manifest's capability server runs
// as a bare command (or as bin/<name>), or "" when the package has no
// server or runs it by another relative path (nothing to provision).
func serverBinary(m *packaging.Manifest) string {
	if m.Yolop == nil || m.Yolop.CapabilityServer == nil {
		return ""
	}
	cmd := m.Yolop.CapabilityServer.Command
	if rest, ok := strings.CutPrefix(cmd, "bin/"); ok {
		cmd = rest
	}
	if cmd == "" || strings.ContainsAny(cmd, `/\`) {
		return ""
	}
	return cmd
}

// artifactMetadata merges the two places a crate names prebuilt
// artifacts: Cargo.toml's [package.metadata.yolop.artifacts] and
// [package.metadata.binstall], and plugin.json's yolop.artifacts (which
// fill targets the Cargo.toml table does not name).
func artifactMetadata(dir string, rel cratesio.Release, m *packaging.Manifest, bin string) (cratesio.ArtifactMetadata, error) {
	meta := cratesio.ArtifactMetadata{Name: rel.Name, Version: rel.Version}
	b, err := os.ReadFile(filepath.Join(dir, "Cargo.toml"))
	switch {
	case err == nil:
		if meta, err = cratesio.ParseArtifactMetadata(b); err != nil {
			return meta, fmt.Errorf("crate %s %s: reading artifact metadata: %w", rel.Name, rel.Version, err)
		}
		meta.Name, meta.Version = rel.Name, rel.Version
	case !errors.Is(err, fs.ErrNotExist):
		return meta, fmt.Errorf("crate %s %s: %w", rel.Name, rel.Version, err)
	}
	meta.Bin = bin
	if m.Yolop != nil && len(m.Yolop.Artifacts) > 0 {
		if meta.Yolop == nil {
			meta.Yolop = map[string]cratesio.ArtifactSpec{}
		}
		for t, art := range m.Yolop.Artifacts {
			if _, ok := meta.Yolop[t]; !ok {
				meta.Yolop[t] = cratesio.ArtifactSpec{URL: art.URL, SHA256: art.SHA256}
			}
		}
	}
	return meta, nil
}

// provision puts the server binary into dir/bin in the spec's order and
// returns the artifact digest for the lock ("" when none was installed).
func (a *app) provision(ctx context.Context, c *cratesio.Client, rel cratesio.Release, dir string, m *packaging.Manifest, o crateInstall) (string, error) {
	bin := serverBinary(m)
	if bin == "" {
		return "", nil // no server, or one started by a path inside the package
	}
	if fi, err := os.Stat(filepath.Join(dir, "bin", bin)); err == nil && fi.Mode().IsRegular() {
		return "", nil // the crate ships it
	}
	meta, err := artifactMetadata(dir, rel, m, bin)
	if err != nil {
		return "", err
	}
	hosts := cratesio.HostTargets()
	art, selErr := meta.Select(rel.DownloadURL, hosts...)
	if selErr == nil {
		bar := a.progress(fmt.Sprintf("%s for %s", bin, art.Target))
		digest, err := c.ProvisionArtifact(ctx, art, dir, bar.update)
		bar.finish()
		if err != nil {
			return "", fmt.Errorf("extension %s: the prebuilt server binary could not be installed, so nothing was: %w", m.Name, err)
		}
		fmt.Fprintf(a.stderr, "verified the prebuilt server %s for %s from %s (sha256 %s, pinned by the crate's metadata)\n", bin, art.Target, art.URL, digest)
		return digest, nil
	}
	if !errors.Is(selErr, cratesio.ErrNoArtifact) {
		return "", fmt.Errorf("extension %s: %w", m.Name, selErr)
	}
	if o.Build {
		cargo, err := exec.LookPath("cargo")
		if err == nil {
			return "", a.cargoInstall(ctx, cargo, dir, bin, m.Name)
		}
		fmt.Fprintf(a.stderr, "note: --build was given but cargo is not on PATH, so %s was not built\n", bin)
	}
	fmt.Fprintf(a.stderr, "note: no prebuilt server binary was installed for %s: %v\n"+
		"  %s is installed package-only: its tools fail until the server binary %q is found.\n"+
		"  Install %s on PATH (the package's own bin/ is pinned by the approval: a file added there is refused as tampering),\n"+
		"  or re-install with --build (needs cargo) to build it from the crate source.\n",
		strings.Join(hosts, " / "), selErr, m.Name, bin, bin)
	return "", nil
}

// cargoInstall builds the unpacked crate with `cargo install --locked`
// into a temporary root (and target directory, so nothing lands in the
// package but the binary) and moves bin/<bin> into dir/bin.
func (a *app) cargoInstall(ctx context.Context, cargo, dir, bin, name string) error {
	tmp, err := os.MkdirTemp("", "yolop-cargo-install-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "root")
	cmd := exec.CommandContext(ctx, cargo, "install", "--locked", "--root", root,
		"--target-dir", filepath.Join(tmp, "target"), "--path", dir, "--bin", bin)
	cmd.Stdout, cmd.Stderr = a.stderr, a.stderr
	fmt.Fprintf(a.stderr, "building %s with cargo install --locked (--build)\n", bin)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("extension %s: `cargo install --locked --path <crate>` failed (%w); install without --build to get the package only, then put %s on PATH", name, err, bin)
	}
	built := filepath.Join(root, "bin", bin)
	if _, err := os.Stat(built); err != nil {
		return fmt.Errorf("extension %s: cargo install succeeded but did not produce bin/%s: %w", name, bin, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		return err
	}
	if err := copyFile(built, filepath.Join(dir, "bin", bin), 0o755); err != nil {
		return fmt.Errorf("extension %s: installing the built binary: %w", name, err)
	}
	return nil
}
