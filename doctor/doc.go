// Package doctor grades an extension's capability server against the
// extension's manifest. It is the conformance doctor behind
// `yolop ext doctor`, and an extension's own go test can call it.
//
// [Run] loads the package in a directory (reading its manifest, never
// executing anything to do so), builds the grant a session would give it,
// and starts the server through the runtime's own transport
// (transport/stdio) and adapter ([host.Extension]), so the clamp,
// lifecycle and hook policy under test are the host's, not a
// re-implementation. [RunGrant] does the same with a manifest and grant
// the caller has built: a front-end uses it for an installed extension
// whose config and secrets it resolves.
//
// A wire tap interposed on the transport validates every line in both
// directions against the YEP schema (an embedded copy of
// schema/yep/v1/schema.json, [SchemaJSON]). The doctor grades
// protocol-version compatibility, the clamp, the input schema a typed Go
// tool derives from its types (handshake input_schema) against the
// manifest's (they must agree, annotations aside), the prompt facet, one round
// trip per tool with its example arguments, every other facet the
// manifest declares (each command run once with its example or none, the
// config pushed back as config/changed, each ui/ask the server sends
// during a tool call answered with a canned answer, each status/changed
// recorded), cancellation and a clean shutdown; then, for every hook
// subscription, it fires a synthetic event through a [host.Session],
// injects a hook timeout (holding the server's answer back past a short
// deadline) and a crash (SIGKILL while the hook is in flight), fires once
// more after the respawn, and records what the host did with each call.
// A [Report] holds a [Pass], [Warn] or [Fail] per [Check]; [Report.OK] is
// false when any check failed.
//
// An extension's test beside its plugin.json fails on any failed check:
//
//	func TestDoctor(t *testing.T) {
//		rep, err := doctor.Run(t.Context(), ".", doctor.Options{})
//		if err != nil {
//			t.Fatal(err) // no valid manifest, or nothing to run
//		}
//		for _, c := range rep.Checks {
//			if c.Status == doctor.Fail {
//				t.Errorf("%s %s: %s", c.Group, c.Name, c.Detail)
//			}
//		}
//	}
//
// The server must be built where the manifest's capabilityServer.command
// finds it (the package's bin/ first) before the test runs.
package doctor
