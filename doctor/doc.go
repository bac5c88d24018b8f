// Package doctor is the behavioural conformance harness behind
// `yolop ext doctor`: it runs an extension's capability server exactly as
// the runtime does and grades it against its manifest.
//
// [Run] starts the server through the runtime's own transport and
// [host.Extension] (so the clamp, lifecycle and hook policy under test are
// the host's, not a re-implementation), with a wire tap interposed on the
// transport that validates every line in both directions against the YEP
// schema (an embedded copy of schema/yep/v1/schema.json, [SchemaJSON]).
// It grades protocol-version compatibility, the D4 clamp, the prompt facet,
// one round trip per tool with example arguments, cancellation and a clean
// shutdown; then, for every hook subscription, it fires a synthetic event
// through a [host.Session], injects a hook timeout (holding the server's
// answer back past a short deadline) and a crash (SIGKILL while the hook is
// in flight), fires once more after the respawn, and reports what the host
// did with each call. A [Report] lists a pass, warn or fail per check.
package doctor
