package core

import "embed"

// Source is this module's own source as the binary was built from it:
// go.mod, go.sum and the .go files of every package (tests included, no
// testdata). `yolop ext new --lang go` writes it, without the tests, into
// a package scaffolded outside a yolop checkout (lib/yolop-core) and
// replaces yolop.dev/core with it, so the package builds with Go and the
// module proxy alone while the SDK is unpublished. The linker drops an
// unreferenced embed: binaries that never read Source carry none of it.
//
// A new package directory goes on the list below; a test fails until it
// does.
//
//go:embed go.mod go.sum *.go
//go:embed examples/configured/*.go examples/echo/*.go examples/echo/echoext/*.go
//go:embed examples/guardrail/*.go examples/guardrail/guardrailext/*.go
//go:embed host/*.go jsonrpc/*.go sdk/*.go skill/*.go tap/*.go yep/*.go
//go:embed internal/json/*.go internal/leakcheck/*.go internal/ratelimit/*.go internal/testdeadline/*.go
//go:embed internal/testservers/*.go internal/testservers/ndjsonloop/*.go
//go:embed transporttest/*.go transporttest/conformance/*.go
var Source embed.FS
