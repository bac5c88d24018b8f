// Package scaffold writes a new extension package that installs and passes
// the doctor before any of its logic is written, so authoring an extension
// comes down to filling in handlers. It is what `yolop ext new` and the
// built-in scaffold_extension tool run.
//
// [New] writes, for one of [Langs]:
//
//   - plugin.json declaring exactly the requested facets: tools (each with
//     an input schema and "example" arguments, so doctor calls it), hooks,
//     a static or dynamic prompt, slash commands, the status and ui_ask
//     opt-ins, a config schema and skills;
//   - a capability server whose only places to edit are its handle_*
//     functions (in Go, the SDK handlers): for Python and TypeScript one
//     dependency-free file under bin/ speaking raw YEP, for Rust a
//     serde_json-only crate that is the compiled twin of those, for Go a
//     module on yolop.dev/core/sdk;
//   - a README for the author, and skills/<name>/SKILL.md when asked.
//
// Go and Rust packages carry build steps ([Result.Build]) that put the
// server in bin/; [Result.RunBuild] runs them. The templates are embedded
// in the binary; a test scaffolds each language with several facet
// combinations, builds, installs and runs the doctor on it, and drives the
// servers through the conformance corpus in schema/yep/v1/conformance.
package scaffold
