// Package git installs an extension package from a git URL at a revision.
//
// [Fetch] validates the URL ([ValidateURL]), resolves the revision against
// the remote's advertised references, fetches only the objects it needs into
// a bare repository inside a private staging directory, and exports the
// commit's tree into a fresh destination through its own writer, which
// accepts only regular files (mode 0644 or 0755) and directories. [ResolveOnly]
// performs the same resolution without exporting, and [CheckPinned] verifies
// that a commit recorded earlier still exists upstream.
//
// # Safety policy
//
//   - The git command-line tool is never run for https or ssh URLs: the
//     transport is go-git's. file:// URLs (accepted only with
//     [Options.AllowFile], for tests) use go-git's file transport, which
//     spawns the system git-upload-pack.
//   - No hooks, filters, LFS or fsmonitor ever run: go-git implements none of
//     them, and no worktree is ever checked out; the tree is exported from
//     the object store by this package.
//   - Submodules are never fetched. A gitlink entry is skipped and reported
//     in [Result.SkippedSubmodules].
//   - Symlinks are refused, wherever they point. This is the same policy as
//     the crate extractor (crates.io refuses symlinks too) and keeps the
//     package's content hash and "command escapes the package" checks simple.
//   - Tree entries named .git (any case, NTFS/HFS variants such as git~1,
//     ".git.", ".git " or with HFS-ignorable code points), entries containing
//     "..", "/", a backslash, a colon, NUL or another control byte, Windows
//     device names, and names that collide after case folding are refused.
//   - File count and total size are capped ([Options.MaxFiles],
//     [Options.MaxTotalBytes]), and so is the object store while fetching
//     ([Options.MaxFetchBytes]).
//   - Remote reference names never become local file names: everything
//     fetched lands under refs/yolop/ names chosen here.
//   - Everything is written under a ".tmp-*" directory beside the destination
//     and renamed into place only on success; on any error nothing is left
//     behind and an existing empty destination is left as it was.
package git
