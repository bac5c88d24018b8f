// Command yolop-extension-echo-goplugin is the reference echo extension
// ([yolop.dev/core/examples/echo/echoext]) served over go-plugin instead
// of stdio: the same SDK server, one different call in main. Its manifest
// (plugin.json beside this file) names capabilityServer.transport
// "go-plugin", so a yolop host starts it through go-plugin's handshake,
// with AutoMTLS, and with the executable's SHA-256 checked against the
// approval before it runs.
//
// Build it into the package's bin/ and load it in place:
//
//	go build -o transport/goplugin/examples/echo/bin/yolop-extension-echo-goplugin ./transport/goplugin/examples/echo
//	yolop session --ext transport/goplugin/examples/echo
//	yolop ext doctor transport/goplugin/examples/echo
//
// Run by hand, outside a host, it says it is a plugin and exits 1.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/examples/echo/echoext"
	"yolop.dev/transport/goplugin/plugin"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	log := hclog.New(&hclog.LoggerOptions{Name: "echo", Output: os.Stderr, Level: hclog.LevelFromString(os.Getenv("ECHO_LOG"))})
	if err := plugin.Serve(ctx, echoext.New(log), plugin.Options{}); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "yolop-extension-echo-goplugin:", err)
		os.Exit(1)
	}
}
