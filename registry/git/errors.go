package git

import "errors"

// Errors about the source URL.
var (
	// ErrURLRejected reports a URL that is malformed or uses a scheme or form
	// this package refuses (ext::, a leading "-", embedded passwords, ...).
	ErrURLRejected = errors.New("git URL rejected")
)

// Errors about the revision.
var (
	// ErrRevNotFound reports a branch, tag or commit the remote does not have.
	ErrRevNotFound = errors.New("git revision not found")
	// ErrAmbiguousRev reports a revision that could name more than one
	// object: a short SHA, or a name that is both a branch and a tag.
	ErrAmbiguousRev = errors.New("git revision is ambiguous")
	// ErrInvalidRev reports a revision that is not a valid ref name or hash.
	ErrInvalidRev = errors.New("git revision is invalid")
	// ErrPinnedCommitMissing reports a pinned commit that is no longer
	// reachable upstream, typically after a force-push.
	ErrPinnedCommitMissing = errors.New("pinned git commit is missing upstream")
)

// Errors about the fetched tree and the destination.
var (
	// ErrUnsafeTree reports a tree entry the exporter refuses to write.
	ErrUnsafeTree = errors.New("git tree contains an unsafe entry")
	// ErrTooLarge reports a tree that exceeds the file-count or size cap.
	ErrTooLarge = errors.New("git tree exceeds the size limits")
	// ErrDestNotEmpty reports a destination that exists and is not an empty
	// directory.
	ErrDestNotEmpty = errors.New("destination is not empty")
)
