// Package tssdk embeds the TypeScript SDK's runtime files (package.json,
// src/index.js and its .d.ts, and the generated metadata and wire types),
// so `yolop ext new --lang typescript --sdk` can vendor the SDK into a new
// package, which then installs and runs with no network. The SDK itself
// is JavaScript with TypeScript declarations: see README.md.
package tssdk

import "embed"

// Files holds package.json and the runtime files under src/, rooted at
// sdk/typescript: no tests, examples or generator.
//
//go:embed package.json src/index.js src/index.d.ts src/generated/meta.js src/generated/meta.d.ts src/generated/types.d.ts
var Files embed.FS
