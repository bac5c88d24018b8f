// Package pysdk embeds the Python SDK's runtime files (pyproject.toml and
// the yolop_sdk package), so `yolop ext new --lang python --sdk` can vendor
// the SDK into a new package, which then installs and runs with no network.
// The SDK itself is Python: see README.md.
package pysdk

import "embed"

// Files holds pyproject.toml and yolop_sdk/*.py, rooted at sdk/python.
//
//go:embed pyproject.toml yolop_sdk/*.py
var Files embed.FS
