package packaging

import "errors"

// Manifest errors. Every error returned by [Load] wraps [ErrInvalidManifest]
// (or [ErrNoManifest]) and, where it applies, one of the more specific
// sentinels below.
var (
	// ErrNoManifest means the directory has neither plugin.json nor a
	// Cargo.toml with [package.metadata.yolop].
	ErrNoManifest = errors.New("no extension manifest")
	// ErrInvalidManifest means the manifest failed schema or semantic checks.
	ErrInvalidManifest = errors.New("invalid extension manifest")
	// ErrManifestTooLarge means a manifest or a file it references exceeds
	// the size cap.
	ErrManifestTooLarge = errors.New("manifest too large")
	// ErrUnsupportedProtocol means protocol_version has a major this host
	// does not speak.
	ErrUnsupportedProtocol = errors.New("unsupported protocol_version major")
	// ErrEscapesPackage means a path in the manifest (server command, $ref,
	// prompt file) leaves the package directory.
	ErrEscapesPackage = errors.New("path escapes the package directory")
	// ErrDuplicateName means two tools, hooks, commands or MCP servers share
	// a name.
	ErrDuplicateName = errors.New("duplicate name")
)

// Source errors.
var (
	// ErrInvalidSource means an install source string could not be parsed or
	// uses a refused form (a URL starting with '-', ext::, plain http, ...).
	ErrInvalidSource = errors.New("invalid extension source")
)

// Lock and store errors.
var (
	// ErrLockCorrupt means extensions.lock could not be parsed, has an
	// unknown version, duplicate entries or inconsistent hashes. It is never
	// reset silently.
	ErrLockCorrupt = errors.New("extensions.lock is corrupt")
	// ErrNotInstalled means no extension of that name is in the lock.
	ErrNotInstalled = errors.New("extension not installed")
	// ErrTampered means an installed package's files no longer match the
	// content hash recorded when it was approved.
	ErrTampered = errors.New("installed package does not match its approved content hash")
	// ErrUnsafeTree means a directory to be copied or hashed holds a
	// symlink leaving the tree or a special file.
	ErrUnsafeTree = errors.New("unsafe file in package tree")
	// ErrNotApproved is returned by an [InstallOptions.Approve] callback
	// (or wrapped by one) when the user declines.
	ErrNotApproved = errors.New("install not approved")
)

// Approval errors found when a package is about to run.
var (
	// ErrManifestChanged means a path source's live manifest widens the
	// manifest that was approved (a new tool, hook, MCP server, opt-in, a
	// changed command, args, env or a grown prompt): the extension stays
	// off until `yolop ext update <name>` approves the change.
	ErrManifestChanged = errors.New("manifest changed — needs approval")
)
