// Command yolop-extension-lsp is the lsp extension's capability server: it
// serves the seven lsp_* tools (definition, references, hover,
// diagnostics, rename, symbols, code actions) over YEP on stdin and stdout,
// backed by real language servers (gopls, rust-analyzer, pyright,
// typescript-language-server, or any configured in servers.<key>) that it
// starts lazily and keeps warm for the session.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is the server's version, set with -ldflags "-X main.version=…".
var version = "0.1.0"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	code := run(ctx, os.Args[1:], nil, nil, os.Stderr)
	stop()
	os.Exit(code)
}

// run serves one host connection over stdin and stdout (the process's own
// when nil) and returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	for _, a := range args {
		switch a {
		case "--version", "-version", "version":
			fmt.Fprintf(orStdout(stdout), "yolop-extension-lsp %s\n", version)
			return 0
		case "-h", "--help", "-help", "help":
			fmt.Fprintf(orStdout(stdout), "yolop-extension-lsp %s: the lsp extension's capability server.\nIt speaks YEP on stdin and stdout and is started by yolop; install it with the lsp package.\n", version)
			return 0
		default:
			fmt.Fprintf(stderr, "yolop-extension-lsp: unknown argument %q; it takes none (run --help)\n", a)
			return 2
		}
	}
	ext := newExtension(stderr)
	err := ext.serve(ctx, stdin, stdout)
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "yolop-extension-lsp: %v\n", err)
		return 1
	}
	return 0
}

func orStdout(w io.Writer) io.Writer {
	if w == nil {
		return os.Stdout
	}
	return w
}
