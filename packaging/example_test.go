package packaging_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"yolop.dev/packaging"
)

// Load reads a package's manifest without running anything; Summary renders
// what the user approves.
func ExampleSummary() {
	m, err := packaging.Load("testdata/lsp")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(packaging.Summary(m))
	// Output:
	// Extension lsp 0.1.0
	//   Semantic code intelligence from real language servers.
	//   Protocol: 1.0
	//   Requires: yolop >=0.1
	//   Server command: "yolop-extension-lsp"
	//   Sandbox (the default: the manifest declares none):
	//     read-only: ${package}, /usr, /lib, /lib64, /bin, /etc
	//     read-write: ${workspace}, ${cache}
	//     TCP connect: none; TCP listen: none
	//     run other programs: no (only its own program)
	//   Tools (7):
	//     - lsp_definition [never_defer: always in context]
	//     - lsp_references [never_defer: always in context]
	//     - lsp_hover [never_defer: always in context]
	//     - lsp_diagnostics [never_defer: always in context]
	//     - lsp_rename [never_defer: always in context, streaming]
	//     - lsp_symbols [never_defer: always in context]
	//     - lsp_code_actions [never_defer: always in context]
	//   Hooks: none
	//   MCP servers: none
	//   Prompt: 80 bytes of static system-prompt text
	//   Commands: none
	//   Skills: no
	//   Opt-ins: none
	//   Config:
	//     - servers (object)
	//     - request_timeout_ms (integer)
}

// Install a package from a directory into a store, as `yolop ext install`
// does for a git checkout, then verify it before use.
func ExampleStore_Install() {
	cfg, _ := os.MkdirTemp("", "yolop-config-")
	defer os.RemoveAll(cfg)
	store := packaging.NewStore(cfg)
	ctx := context.Background()

	src, _ := packaging.ParseSource("https://example.com/yolop/lsp@v0.1.0")
	res, err := store.Install(ctx, packaging.InstallOptions{
		Source: src,
		Fetch: func(ctx context.Context, dir string) (packaging.FetchResult, error) {
			return packaging.FetchResult{Commit: "4b825dc642cb6eb9a060e54bf8d69288fbee4904"}, packaging.CopyTree("testdata/lsp", dir)
		},
		Approve: func(next, prev *packaging.Manifest, c packaging.Change) error {
			fmt.Print(c) // a TTY front-end asks y/N here
			return nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	v, err := store.VerifyInstalled(ctx, res.Entry.Name)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("verified", v.Manifest.Name, v.Manifest.Version, "from", v.Entry.Source)
	// Output:
	// Widens the grant (needs your approval):
	//   + new extension lsp
	//   + server command "yolop-extension-lsp"
	//   + new tool lsp_definition (never_defer)
	//   + new tool lsp_references (never_defer)
	//   + new tool lsp_hover (never_defer)
	//   + new tool lsp_diagnostics (never_defer)
	//   + new tool lsp_rename (never_defer)
	//   + new tool lsp_symbols (never_defer)
	//   + new tool lsp_code_actions (never_defer)
	//   + new prompt text (80 bytes)
	//   new config field servers
	//   new config field request_timeout_ms
	// verified lsp 0.1.0 from https://example.com/yolop/lsp@v0.1.0
}
