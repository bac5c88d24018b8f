// Package packaging reads, validates, pins and installs yolop extension
// packages.
//
// A package is a directory holding a manifest — plugin.json with a `yolop`
// facet, or a Cargo.toml with [package.metadata.yolop] — plus whatever the
// capability server needs. [Load] reads and validates a manifest without
// executing anything: the manifest is the approval boundary (spec D4), so
// everything the host will later allow the server to do is visible in it.
//
// [Summary] renders the contribution summary shown before install and [Diff]
// compares an approved manifest with a new one, so an update that widens the
// grant asks again.
//
// A [Store] is the per-user package store under [ConfigDir]: one directory
// per installed extension plus extensions.lock, which pins each package's
// source and content hash ([HashDir]). Every change to the store is staged,
// journaled and renamed into place under a file lock, so a failed, killed or
// concurrent install leaves the previous package and lock exactly as they
// were. See README.md for the formats and the crash-consistency design.
package packaging
