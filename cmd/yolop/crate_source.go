package main

import (
	"context"
	"fmt"

	"yolop.dev/packaging"
)

// crateInstall describes how to fetch a crates.io (or sparse registry)
// source into a staging directory.
type crateInstall struct {
	// Registry is "sparse+URL"; empty means crates.io.
	Registry string
	// Build allows `cargo install` when no prebuilt artifact matches.
	Build bool
}

// fetchCrate returns the packaging Fetch func for a crate source.
func (a *app) fetchCrate(src packaging.Source, o crateInstall) func(ctx context.Context, dir string) (packaging.FetchResult, error) {
	return func(ctx context.Context, dir string) (packaging.FetchResult, error) {
		return packaging.FetchResult{}, fmt.Errorf("installing %s: crates.io and sparse-registry sources are not wired yet", src)
	}
}
