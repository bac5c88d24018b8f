// Command echo is the reference echo extension
// ([yolop.dev/core/examples/echo/echoext]) as a WebAssembly guest for the
// wasm transport: the same SDK server as the stdio and go-plugin examples,
// built with GOOS=wasip1 GOARCH=wasm. Its manifest (plugin.json beside
// this file) names capabilityServer.transport "wasm" and the module
// echo.wasm, so a yolop host runs it in-process in the sandbox of
// docs/wasm.md: no file system (the manifest grants none), no network, no
// host environment, 256 MiB of memory.
//
// Build it into the package and load it in place:
//
//	GOOS=wasip1 GOARCH=wasm go build -o transport/wasm/examples/echo/echo.wasm ./transport/wasm/examples/echo
//	yolop ext doctor transport/wasm/examples/echo
//	yolop session --ext transport/wasm/examples/echo
//
// One module serves every platform: `yolop ext pack` ships it as it is.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/examples/echo/echoext"
)

func main() {
	// The host ends a guest by closing its stdin (or by killing the
	// instance): there are no signals in wasip1, so none is awaited.
	log := hclog.New(&hclog.LoggerOptions{Name: "echo", Output: os.Stderr, Level: hclog.LevelFromString(os.Getenv("ECHO_LOG"))})
	if err := echoext.New(log).Serve(context.Background()); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "echo:", err)
		os.Exit(1)
	}
}
