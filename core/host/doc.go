// Package host runs capability servers on behalf of a yolop session.
//
// A [Capability] is one unit of functionality: tools, system-prompt text,
// hooks, slash commands, MCP servers, skills and a config schema. An
// [Extension] is the generic adapter that implements Capability for one
// installed extension: it answers the static seams from the handshake
// cache, clamped by the approved manifest ([Grant]), and proxies tool calls,
// hook firings, dynamic prompts and commands over YEP to a server process
// started through a [core.Transport].
//
// A [Session] assembles an ordered list of capabilities (built-ins first,
// then one adapter per enabled extension) and drives them turn by turn:
// tool calls with streamed updates and pre/post hooks, the system prompt
// with a byte-stable prefix, slash commands, reverse requests (ui/ask,
// status/changed, log), trace fan-out, attribution counters, workspace
// changes, reload and activation at turn boundaries.
//
// The security boundary is the clamp: the handshake may only narrow what
// the user approved in the manifest; anything wider is refused, logged and
// reported by [Extension.Refusals].
//
// Errors name the extension and the tool or command they concern, and
// match a sentinel with errors.Is ([ErrNoSuchTool], [ErrToolNotApproved],
// [ErrExtensionDegraded] and the others in errors.go). Their text never
// names a front-end's commands: a front-end that wants to tell the user
// what to type next matches the sentinel and adds its own hint.
package host
