// Package demo embeds what `yolop demo` runs on, so it needs no files on
// disk: the echo extension's package manifest (a test keeps the copy
// identical to core/examples/echo/plugin.json), the manifest of the
// extension that serves its model (yolop.dev/agent/scripted/scriptedext,
// the scripted model over the providers facet), the script of that model,
// and the lines it types into the session.
package demo

import _ "embed"

// EchoManifest is core/examples/echo/plugin.json.
//
//go:embed plugin.json
var EchoManifest []byte

// ScriptedManifest is the manifest of the extension serving the demo's
// model: the providers facet approves the script's model, and its command
// verify says whether the script played to its end.
//
//go:embed scripted.json
var ScriptedManifest []byte

// ModelScript is the scripted model's script (see yolop.dev/agent/scripted):
// its answers to the agent turns of [Script].
//
//go:embed model.json
var ModelScript []byte

// Script is what the demo types into the session: lines that are not
// commands are messages to the model.
var Script = []string{
	"/tools",
	`Reverse "yolop" and count to 3 at the same time, then echo "nothing is forbidden".`,
	"/echo:greet yolop",
	"What did the greeting say?",
	"/status",
}
