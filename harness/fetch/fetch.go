// Package fetch holds the fetchers that stage an extension package for
// each kind of install source: a [Git] repository at a revision and a
// [Crate] from crates.io or any sparse registry. A path source needs none:
// it is referenced in place.
//
// A fetcher never runs anything it fetched. It fills a staging directory
// the store gives it; the store reads the manifest there, asks for consent,
// and only then runs the fetcher's provisioning step (a prebuilt server
// binary) and commits.
package fetch

import (
	"context"
	"fmt"

	"yolop.dev/packaging"
	"yolop.dev/registry/git"
)

// A FetchFunc fills an empty staging directory with a package.
type FetchFunc = func(ctx context.Context, dir string) (packaging.FetchResult, error)

// A ProvisionFunc completes a staged package after the user approved it
// (e.g. a prebuilt server binary); see packaging.InstallOptions.Provision.
type ProvisionFunc = func(ctx context.Context, dir string, m *packaging.Manifest) (packaging.FetchResult, error)

// A Request is what one install asks of a fetcher beyond its source.
type Request struct {
	// Registry is the sparse registry ("sparse+URL") of a crate source;
	// empty means crates.io. A source that names its registry wins.
	Registry string
	// Build allows `cargo install` when a crate has no prebuilt server
	// binary for this platform.
	Build bool
	// Warn receives non-fatal findings (a skipped git submodule). Nil
	// drops them.
	Warn func(string)
	// Gate, if set, sees the versions or commit the fetch found and may
	// pick an older one or hold the update back (the update cooldown).
	Gate Gate
}

// A Fetcher stages packages of one source kind. Open prepares one install
// of src: fetch fills the staging directory; provision, nil when there is
// nothing to provision, runs after consent.
type Fetcher interface {
	Open(src packaging.Source, req Request) (fetch FetchFunc, provision ProvisionFunc, err error)
}

// Git fetches git sources with go-git: the resolved commit is pinned, no
// hooks run, submodules are never fetched, no work tree is checked out.
type Git struct {
	// AllowFile accepts file:// URLs. Tests only; false refuses them.
	AllowFile bool
	// OpenPGPKeys supplies the public keys that verify OpenPGP-signed
	// commits and tags; nil means [GPGKeys] (signer.go).
	OpenPGPKeys git.OpenPGPKeys
}

// Open implements [Fetcher].
func (g Git) Open(src packaging.Source, req Request) (FetchFunc, ProvisionFunc, error) {
	if src.Kind != packaging.SourceGit {
		return nil, nil, fmt.Errorf("installing %s: not a git source", src)
	}
	opts := git.Options{AllowFile: g.AllowFile, OpenPGPKeys: g.openPGPKeys()}
	return func(ctx context.Context, dir string) (packaging.FetchResult, error) {
		rev, err := gateGit(ctx, req.Gate, src, opts)
		if err != nil {
			return packaging.FetchResult{}, err
		}
		r, err := git.Fetch(ctx, src.URL, rev, dir, opts)
		if err != nil {
			return packaging.FetchResult{}, err
		}
		if req.Warn != nil {
			for _, s := range r.SkippedSubmodules {
				req.Warn(fmt.Sprintf("git submodule %s was not fetched (submodules never are)", s))
			}
		}
		signer, err := signerOf(ctx, src, r, opts)
		if err != nil {
			return packaging.FetchResult{}, err
		}
		return packaging.FetchResult{Commit: r.Commit, Signer: signer}, nil
	}, nil, nil
}

// gateGit resolves src's ref and shows the commit to the gate; it returns
// the revision to fetch: the resolved commit (so what the gate saw is what
// is installed), or the one the gate picked. Without a gate it is src.Rev.
func gateGit(ctx context.Context, g Gate, src packaging.Source, opts git.Options) (string, error) {
	if g == nil {
		return src.Rev, nil
	}
	r, err := git.ResolveOnly(ctx, src.URL, src.Rev, opts)
	if err != nil {
		return "", err
	}
	pick, err := g.Git(ctx, src.URL, src.Rev, r.Commit)
	if err != nil || pick != "" {
		return pick, err
	}
	return r.Commit, nil
}
