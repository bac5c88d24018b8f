package main

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"yolop.dev/harness/manager"
)

// extraCommands lists the subcommands beyond session and demo: ext and
// registry.
func (a *app) extraCommands() []*cobra.Command {
	return []*cobra.Command{a.extCmd(), a.registryCmd(), a.benchCmd(), a.serveLabCmd(), a.modelCmd(), a.runCmd()}
}

// printJSON prints v to stdout as indented JSON (the --json output).
func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// allowFileGitEnv, set to 1, lets `yolop ext install` fetch file:// git
// URLs. It exists for tests (real repositories in a temp dir); users
// install a local directory as a path source instead.
const allowFileGitEnv = "YOLOP_ALLOW_FILE_GIT"

// manager returns the extension manager over the config directory: the
// one code path behind the ext verbs, the session's enabled extensions and
// the built-in extensions capability.
func (a *app) manager() (*manager.Manager, error) {
	h, err := a.harness()
	if err != nil {
		return nil, err
	}
	return h.Manager(), nil
}
