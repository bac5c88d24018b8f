// Package coding is the built-in capability "builtin:coding": the workspace
// tools a coding agent acts through — read_file, write_file, edit_file,
// list_files, grep and bash.
//
// Every path a tool takes is resolved inside the session's workspace root,
// read afresh on each call (a /workspace switch takes effect at once). A
// path that leaves the root is refused with an error naming the path and
// the root: one with ".." components that climb out, an absolute path
// elsewhere, and one whose symbolic links lead out — the longest existing
// prefix is resolved with [filepath.EvalSymlinks] and must stay under the
// root's own resolved path, so a symlinked file or directory pointing out
// is refused for reading and for writing alike, including write_file
// creating a file through a symlinked directory. The resolved path is then
// opened through an [os.Root] on the root, which refuses escapes by
// construction, so a link swapped in between the check and the use is
// refused too. Walks (list_files, grep) do not follow symbolic links.
//
// bash is the exception that cannot be confined: it runs `bash -c` with the
// workspace root as its working directory, in its own process group, with a
// timeout and an output cap; its output streams as tool/update lines and the
// whole group is killed on timeout, on cancellation and when the command
// returns, so nothing it started outlives the call. A guardrail on what bash
// may run is a pre_tool_use hook: the built-ins go through the session's
// hooks exactly as extension tools do.
package coding
