// Package cratesio installs extensions from crates.io or any other Cargo
// sparse registry without a Rust toolchain, and publishes them to a static
// sparse index.
//
// A [Client] speaks the sparse-index protocol: it reads the registry's
// config.json, derives index paths exactly as cargo does, parses index
// lines, resolves a version requirement with cargo's semver rules
// ([ParseRequirement]), and caches index files under a cache directory with
// ETag/Last-Modified revalidation. [Client.Fetch] downloads a .crate,
// verifies its SHA-256 against the index cksum before decompressing, and
// unpacks it with the hardened extractor [Unpack] into a fresh directory:
// nothing is ever written outside that directory, and on any error nothing
// is left behind.
//
// Typical use from a CLI:
//
//	c := cratesio.NewClient(cratesio.Options{Registry: "sparse+http://127.0.0.1:1234/", CacheDir: dir, Logger: log})
//	rel, err := c.Resolve(ctx, "yolop-extension-echo", "^0.1", lockedVersion)
//	err = c.Fetch(ctx, rel, destDir, progress)
//
// Prebuilt binaries named in a crate's metadata (our own
// [package.metadata.yolop.artifacts] or cargo-binstall's
// [package.metadata.binstall]) are selected with [SelectArtifact] and
// installed with [Client.ProvisionArtifact].
//
// [ParseSource] turns an install source ("echo@0.1",
// "crates.io:yolop-extension-echo@=0.1.2") into a crate name and
// requirement, and [SweepStaging] removes the ".tmp-*" directories an
// interrupted install left behind.
//
// The publishing side packs an extension package into a deterministic
// .crate, cross-compiling its Go server into pinned prebuilt artifacts
// ([Pack], over [WriteCrate]), adds crates to a static index directory
// ([Publish]) and serves that directory ([ServeIndex], [ListenIndex]).
//
//	res, err := cratesio.Pack(ctx, "core/examples/echo", cratesio.PackOptions{OutDir: "dist"})
//	pub, err := cratesio.Publish(ctx, "index", res.File, cratesio.PublishOptions{Artifacts: files})
//	srv, err := cratesio.ListenIndex("index", "127.0.0.1:0") // srv.Registry() is the sparse+http:// URL
//	err = srv.Serve(ctx)                                     // until ctx is done
package cratesio
