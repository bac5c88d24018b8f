// Command yolop-sandbox is a small sandbox launcher for yolop and for
// hosts built on the harness. A host starts every confined server through
// a launcher, a binary that links package confine, which applies the
// Landlock rules to itself and execs the server. By default the launcher
// is the host's own binary re-executed, which first runs the
// initialisation of every package the host links; this binary links
// nothing else, so a confined server starts sooner.
//
// A host uses it when it lies beside the host's executable, or when
// YOLOP_SANDBOX_LAUNCHER names it. Build it from the same source as the
// host:
//
//	go build -o "$(dirname "$(command -v yolop)")" yolop.dev/transport/stdio/confine/cmd/yolop-sandbox
//
// It does nothing when run by hand.
package main

import (
	"fmt"
	"os"

	_ "yolop.dev/transport/stdio/confine" // its init is the launcher
)

func main() {
	fmt.Fprintln(os.Stderr, "yolop-sandbox is the sandbox launcher yolop starts confined servers through; it is not run by hand (see docs/security.md)")
	os.Exit(2)
}
