package cratesio

import "errors"

// Errors returned by this package, grouped by concern. Returned errors wrap
// one of these with context (registry, crate, version, file), so callers
// match with [errors.Is].
var (
	// ErrInvalidName reports a crate name that breaks the registry's name
	// rules; it is returned before any path or URL is built.
	ErrInvalidName = errors.New("invalid crate name")
	// ErrInvalidRegistry reports a registry URL that is not sparse+http(s)://….
	ErrInvalidRegistry = errors.New("invalid registry URL")
	// ErrConfig reports a missing or malformed config.json.
	ErrConfig = errors.New("invalid registry config.json")
	// ErrNotFound reports a crate the registry does not have (404, 410, 451).
	ErrNotFound = errors.New("crate not found")
	// ErrNoMatch reports that no version satisfies the requirement.
	ErrNoMatch = errors.New("no matching version")
	// ErrIndexCorrupt reports an index file that contradicts itself.
	ErrIndexCorrupt = errors.New("index corrupt")
	// ErrInvalidRequirement reports a version requirement that does not parse.
	ErrInvalidRequirement = errors.New("invalid version requirement")
	// ErrAuth reports a 401/403 from the registry.
	ErrAuth = errors.New("registry authentication failed")
	// ErrUnreachable reports a registry host the network cannot reach: a
	// name that does not resolve, a refused connection, no route. Its
	// message is "cannot reach <host>: <cause>"; it also matches [ErrHTTP].
	ErrUnreachable = errors.New("cannot reach the registry")
	// ErrHTTP reports an HTTP failure that survived the retries.
	ErrHTTP = errors.New("registry request failed")
	// ErrTooSlow reports a transfer aborted because it stayed below the
	// low-speed limit ([Options.LowSpeedLimit]) for a whole window.
	ErrTooSlow = errors.New("transfer below the low-speed limit")
	// ErrTimeout reports a request that did not finish, retries included,
	// within [Options.DownloadTimeout].
	ErrTimeout = errors.New("download timed out")
	// ErrTooLarge reports a response or archive over its size cap.
	ErrTooLarge = errors.New("size limit exceeded")
	// ErrChecksum reports a download whose SHA-256 differs from the expected one.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrUnsafeArchive reports an archive entry the extractor refuses.
	ErrUnsafeArchive = errors.New("unsafe archive")
	// ErrNoArtifact reports that a crate names no prebuilt artifact usable
	// for the requested target.
	ErrNoArtifact = errors.New("no prebuilt artifact")
	// ErrAlreadyPublished reports a version already present in an index.
	ErrAlreadyPublished = errors.New("version already published")
)
