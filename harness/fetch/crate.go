package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/harness/settings"
	"yolop.dev/internal/atomicfile"
	"yolop.dev/packaging"
	"yolop.dev/registry/cratesio"
)

// A Progress shows one download: Update with the bytes received and the
// expected total (-1 when unknown), Finish when it ends, done or not.
type Progress interface {
	Update(done, total int64)
	Finish()
}

// Crate fetches crate sources from crates.io or any sparse registry: it
// resolves the version in the index, downloads the .crate, verifies its
// SHA-256 against the index and unpacks it into the staging directory.
// After consent it provisions the server binary in the spec's order: (a)
// the prebuilt artifact the crate's metadata names for this host, verified
// against its pinned digest; (b) with Request.Build and cargo on PATH,
// `cargo install --locked` of the unpacked source; (c) otherwise nothing,
// with a note naming the missing binary. Nothing is downloaded beyond the
// crate, and nothing from it runs, before consent.
//
// The zero value fetches from crates.io with no cache, no progress display,
// notes to the logger, and the default transfer limits.
type Crate struct {
	// ConfigDir is the yolop config directory: index responses are cached
	// under ConfigDir/cache/registry and the [registry] transfer limits are
	// read from its settings.toml. Empty means no cache and the default
	// limits.
	ConfigDir string
	// Logger receives the registry client's log. Nil means none.
	Logger hclog.Logger
	// UserAgent is sent with every request. Empty means "yolop".
	UserAgent string
	// Progress, if set, returns the display of one download described by
	// label; it may return nil for none.
	Progress func(label string) Progress
	// Notes receives what the user should read (which prebuilt binary was
	// verified, why none was installed, cargo's output). Nil means the
	// logger at info level.
	Notes io.Writer
}

func (c Crate) notes() io.Writer {
	if c.Notes != nil {
		return c.Notes
	}
	log := c.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return log.StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Info})
}

func (c Crate) progress(label string) Progress {
	if c.Progress == nil {
		return nopProgress{}
	}
	if p := c.Progress(label); p != nil {
		return p
	}
	return nopProgress{}
}

type nopProgress struct{}

func (nopProgress) Update(int64, int64) {}
func (nopProgress) Finish()             {}

// Client returns the registry client an install would use for registry
// ("sparse+URL", "" for crates.io): the cache under the config directory
// and the [registry] limits of settings.toml. A config directory with
// neither settings.toml nor extensions.lock has nothing to keep a cache
// for yet (a first install, whose store may have just created the
// directory): the client then neither caches nor reads settings, so a
// first install that fails leaves nothing behind.
func (c Crate) Client(ctx context.Context, registry string) (*cratesio.Client, error) {
	fresh := false
	if c.ConfigDir != "" {
		fresh = true
		for _, name := range []string{"settings.toml", "extensions.lock"} {
			if _, err := os.Stat(filepath.Join(c.ConfigDir, name)); !errors.Is(err, fs.ErrNotExist) {
				fresh = false
			}
		}
	}
	return c.client(ctx, registry, fresh)
}

// client returns a sparse-index client for registry ("" means crates.io)
// that caches under the config directory and applies the [registry]
// transfer limits from settings.toml. With fresh (the config directory did
// not exist before this install) it neither caches nor reads settings: a
// first install that fails must leave no config directory behind, and
// there are no settings to read.
func (c Crate) client(ctx context.Context, registry string, fresh bool) (*cratesio.Client, error) {
	if registry != "" {
		if _, err := cratesio.ParseRegistry(registry); err != nil {
			return nil, fmt.Errorf("--registry %q: %w; give it as sparse+https://host/path/ (or sparse+http://127.0.0.1:PORT/ for a local index)", registry, err)
		}
	}
	ua := c.UserAgent
	if ua == "" {
		ua = "yolop"
	}
	opts := cratesio.Options{
		Registry:  registry,
		UserAgent: ua,
		LimitNames: cratesio.LimitNames{
			LowSpeedLimit:   "[registry] low_speed_limit",
			LowSpeedTime:    "[registry] low_speed_time",
			DownloadTimeout: "[registry] download_timeout",
			Off:             "0",
		},
	}
	if c.Logger != nil {
		opts.Logger = c.Logger.Named("registry")
	}
	if c.ConfigDir == "" || fresh {
		return cratesio.NewClient(opts), nil
	}
	opts.CacheDir = filepath.Join(c.ConfigDir, "cache", "registry")
	st := settings.New(c.ConfigDir)
	opts.LimitNames.Where = st.Path()
	limits, err := st.DownloadLimits(ctx)
	if err != nil {
		return nil, err
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
	if r := limits.Retries; r != nil {
		opts.Retries = int(offIfZero(int64(*r)))
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

// Open implements [Fetcher].
func (c Crate) Open(src packaging.Source, req Request) (FetchFunc, ProvisionFunc, error) {
	if src.Kind != packaging.SourceCrate {
		return nil, nil, fmt.Errorf("installing %s: not a crate source", src)
	}
	var (
		cl  *cratesio.Client
		rel cratesio.Release
	)
	// Whether the config directory exists is decided now, before the
	// store creates it to take its lock.
	fresh := false
	if c.ConfigDir != "" {
		_, err := os.Stat(c.ConfigDir)
		fresh = errors.Is(err, fs.ErrNotExist)
	}
	fetch := func(ctx context.Context, dir string) (packaging.FetchResult, error) {
		registry := req.Registry
		if src.Registry != "" {
			// The source names its registry (sparse+URL#crate, as the
			// lock records it): that wins over --registry and settings.
			if req.Registry != "" && req.Registry != src.Registry {
				if r, err := cratesio.ParseRegistry(req.Registry); err != nil || "sparse+"+r.String() != src.Registry {
					fmt.Fprintf(c.notes(), "note: %s names its registry; using %s, not %s\n", src, src.Registry, req.Registry)
				}
			}
			registry = src.Registry
		}
		var err error
		if cl, err = c.client(ctx, registry, fresh); err != nil {
			return packaging.FetchResult{}, err
		}
		// Every result, failures included, names the registry, so the
		// store labels the source (and its error) with it.
		failed := packaging.FetchResult{Registry: cl.Registry()}
		locked := ""
		if req.Gate != nil {
			if locked, err = gateCrate(ctx, req.Gate, cl, src.Crate, src.Rev); err != nil {
				return failed, err
			}
		}
		if rel, err = cl.Resolve(ctx, src.Crate, src.Rev, locked); err != nil {
			return failed, err
		}
		// Fetch wants a destination that does not exist yet; the store
		// made dir empty for us under its lock, so hand over its name.
		if err := os.Remove(dir); err != nil {
			return failed, fmt.Errorf("crate %s %s: preparing the staging directory %s: %w", rel.Name, rel.Version, dir, err)
		}
		bar := c.progress(fmt.Sprintf("%s %s", rel.Name, rel.Version))
		err = cl.Fetch(ctx, rel, dir, bar.Update)
		bar.Finish()
		if err != nil {
			return failed, err
		}
		key, err := crateMinisignKey(dir) // pinned at approval (minisign.go)
		if err != nil {
			return failed, fmt.Errorf("crate %s %s: %w", rel.Name, rel.Version, err)
		}
		return packaging.FetchResult{Version: rel.Version, CrateChecksum: rel.Checksum, Registry: rel.Registry, MinisignKey: key}, nil
	}
	provision := func(ctx context.Context, dir string, m *packaging.Manifest) (packaging.FetchResult, error) {
		if cl == nil {
			return packaging.FetchResult{}, fmt.Errorf("installing %s: provisioning before the crate was fetched", src)
		}
		digest, err := c.provision(ctx, cl, rel, dir, m, req)
		return packaging.FetchResult{ArtifactDigest: digest}, err
	}
	return fetch, provision, nil
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
func (c Crate) provision(ctx context.Context, cl *cratesio.Client, rel cratesio.Release, dir string, m *packaging.Manifest, req Request) (string, error) {
	bin, ok := m.ServerBinary()
	if !ok {
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
		if art.MinisignKey, err = crateMinisignKey(dir); err != nil {
			return "", fmt.Errorf("extension %s: %w", m.Name, err)
		}
		bar := c.progress(fmt.Sprintf("%s for %s", bin, art.Target))
		digest, err := cl.ProvisionArtifact(ctx, art, dir, bar.Update)
		bar.Finish()
		if err != nil {
			return "", fmt.Errorf("extension %s: the prebuilt server binary could not be installed, so nothing was: %w", m.Name, err)
		}
		fmt.Fprintf(c.notes(), "verified the prebuilt server %s for %s from %s (sha256 %s, pinned by the crate's metadata)\n", bin, art.Target, art.URL, digest)
		if art.MinisignKey != "" {
			fmt.Fprintf(c.notes(), "verified its minisign signature with the pinned key %s\n", packaging.MinisignKeyID(art.MinisignKey))
		}
		return digest, nil
	}
	if !errors.Is(selErr, cratesio.ErrNoArtifact) {
		return "", fmt.Errorf("extension %s: %w", m.Name, selErr)
	}
	if req.Build {
		cargo, err := exec.LookPath("cargo")
		if err == nil {
			return "", c.cargoInstall(ctx, cargo, dir, bin, m.Name)
		}
		fmt.Fprintf(c.notes(), "note: --build was given but cargo is not on PATH, so %s was not built\n", bin)
	}
	fmt.Fprintf(c.notes(), "note: no prebuilt server binary was installed for %s: %v\n"+
		"  %s is installed package-only: its tools fail until the server binary %q is found.\n"+
		"  Install %s on PATH (the package's own bin/ is pinned by the approval: a file added there is refused as tampering),\n"+
		"  or re-install with --build (needs cargo) to build it from the crate source.\n",
		strings.Join(hosts, " / "), selErr, m.Name, bin, bin)
	return "", nil
}

// cargoInstall builds the unpacked crate with `cargo install --locked`
// into a temporary root (and target directory, so nothing lands in the
// package but the binary) and moves bin/<bin> into dir/bin.
func (c Crate) cargoInstall(ctx context.Context, cargo, dir, bin, name string) error {
	tmp, err := os.MkdirTemp("", "yolop-cargo-install-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "root")
	cmd := exec.CommandContext(ctx, cargo, "install", "--locked", "--root", root,
		"--target-dir", filepath.Join(tmp, "target"), "--path", dir, "--bin", bin)
	cmd.Stdout, cmd.Stderr = c.notes(), c.notes()
	fmt.Fprintf(c.notes(), "building %s with cargo install --locked (--build)\n", bin)
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

// copyFile copies src to dst (atomically) with mode perm.
func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return atomicfile.WriteFunc(dst, perm, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}
