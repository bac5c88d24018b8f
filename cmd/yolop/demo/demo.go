// Package demo embeds the echo extension's package manifest, so `yolop
// demo` runs on embedded defaults with no files on disk. A test keeps the
// copy identical to core/examples/echo/plugin.json.
package demo

import _ "embed"

// EchoManifest is core/examples/echo/plugin.json.
//
//go:embed plugin.json
var EchoManifest []byte

// Script is what the demo types into the session.
var Script = []string{
	"/tools",
	`/call echo {"text":"hello from a capability server"}`,
	`/call count {"n":5,"delay_ms":40}`,
	`/call echo {"text":"this is forbidden"}`,
	"/echo:greet yolop",
	"/prompt",
	"/status",
}
