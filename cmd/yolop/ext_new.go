package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"yolop.dev/harness/scaffold"
)

func (a *app) extNewCmd() *cobra.Command {
	var (
		o       scaffold.Options
		noBuild bool
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "new <name> --lang python|typescript|go|rust",
		Short: "Scaffold an extension package that installs and passes doctor as written",
		Long: `Write a new extension package in ./<name> (or --dir): plugin.json declaring
exactly the facets asked for (one tool, hello, when none is), a capability
server whose only places to edit are its handle_* functions, a README, and
skills/<name>/SKILL.md with --skills. As written it installs and passes
` + "`yolop ext doctor`" + `; authoring comes down to filling in the handlers.

  python       one stdlib-only file, bin/yolop-extension-<name> (python3);
               with --sdk, a server on the Python SDK, vendored in lib/yolop-sdk
  typescript   one dependency-free Node.js file under bin/ (// @ts-check JS:
               runs as is, type-checks with tsc --checkJs); with --sdk, a
               server on the TypeScript SDK, vendored in lib/yolop-sdk
  go           a module on yolop.dev/core/sdk, built into bin/ (inside a yolop
               checkout go.mod replaces the SDK with the checkout's core/;
               elsewhere with the SDK this binary carries, written to
               lib/yolop-core, so it builds with Go and the module proxy alone)
  rust         a serde_json-only crate, built into bin/ with cargo

Go and Rust packages are built right away (--no-build skips it; the steps
are printed either way). A Rust build on a machine that cannot reach
crates.io takes --cargo-registry /usr/share/cargo/registry (Debian's
librust-serde-json-dev).

--hooks takes pre_tool_use or post_tool_use, on tools named bash, or
event:glob for another matcher (pre_tool_use:git*).

Then:
  yolop ext install ./<name> --yes
  yolop ext doctor <name>
  yolop ext enable <name>

See docs/authoring.md.`,
		Example: `  yolop ext new demo --lang go
  yolop ext new demo --lang python --tools hello --sdk
  yolop ext new guard --lang go --hooks pre_tool_use --skills
  yolop ext new counter --lang typescript --status --commands reset`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			r, err := scaffold.New(o)
			if err != nil {
				return fmt.Errorf("ext new: %w", err)
			}
			if len(r.Build) > 0 && !noBuild {
				for _, s := range r.Build {
					fmt.Fprintf(a.stderr, "building: %s\n", s)
				}
				if err := r.RunBuild(cmd.Context(), a.stderr); err != nil {
					return fmt.Errorf("ext new: the package is written in %s, but %w", r.Dir, err)
				}
			}
			if asJSON {
				return a.printJSON(r)
			}
			fmt.Fprint(a.stdout, r.Text())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Lang, "lang", "", "the server's language: "+strings.Join(scaffold.Langs, ", "))
	f.StringVar(&o.Dir, "dir", "", "the package `dir` to create (default ./<name>); it must not exist")
	f.StringSliceVar(&o.Tools, "tools", nil, "tool `names`, comma-separated; each gets a schema, example arguments and a handler")
	f.StringSliceVar(&o.Hooks, "hooks", nil, "hook `events`: pre_tool_use, post_tool_use, optionally event:glob")
	f.BoolVar(&o.Prompt, "prompt", false, "a static system-prompt contribution")
	f.BoolVar(&o.DynamicPrompt, "dynamic-prompt", false, "a per-turn prompt contribution with a handler")
	f.StringSliceVar(&o.Commands, "commands", nil, "slash-command `names`, served as /<name>:<command>")
	f.BoolVar(&o.Status, "status", false, "opt into the status surface, with an emit_status helper")
	f.BoolVar(&o.Ask, "ask", false, "opt into ui/ask, with an ask helper")
	f.BoolVar(&o.Config, "config", false, "a config_schema with one example field, handled on config/changed")
	f.BoolVar(&o.Skills, "skills", false, "ship skills/<name>/SKILL.md, contributed read-only when enabled")
	f.BoolVar(&o.SDK, "sdk", false, "python, typescript: write the server on the yolop SDK, vendored into lib/yolop-sdk (the default is one dependency-free file)")
	f.StringVar(&o.CoreDir, "core", "", "go: build the SDK from this yolop checkout's core/ `dir` (default: the checkout the package is in, if any, else the SDK this binary carries, vendored into lib/yolop-core)")
	f.StringVar(&o.CargoRegistry, "cargo-registry", "", "rust: a `dir` of crate sources to use instead of crates.io (e.g. /usr/share/cargo/registry)")
	f.BoolVar(&noBuild, "no-build", false, "do not run the go or rust build steps")
	f.BoolVar(&asJSON, "json", false, "print the result (files, seams, build steps) as JSON")
	_ = cmd.MarkFlagRequired("lang")
	_ = cmd.RegisterFlagCompletionFunc("lang", cobra.FixedCompletions(scaffold.Langs, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}
