// Package demo embeds what `yolop demo` runs on, so it needs no files on
// disk: the echo extension's package manifest (a test keeps the copy
// identical to core/examples/echo/plugin.json), the script of the
// scripted model it talks to, and the lines it types into the session.
package demo

import _ "embed"

// EchoManifest is core/examples/echo/plugin.json.
//
//go:embed plugin.json
var EchoManifest []byte

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
