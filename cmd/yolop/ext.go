package main

import "github.com/spf13/cobra"

// extCmd groups the extension-management verbs.
func (a *app) extCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ext",
		Short: "Install, approve, enable and inspect extensions",
		Long: `Manage the extensions installed in the config directory
($YOLOP_CONFIG_DIR, else the user config dir + /yolop).

  new <name> --lang L  scaffold a package that installs and passes doctor
  install <source>   read the package, show what it contributes, ask, install
  list               installed extensions, their health, tools and config
  enable <name>      turn one on (a settings.toml [[capabilities]] entry)
  disable <name>     turn one off (it stays installed)
  update [name]      re-resolve the source; a widening change asks again
  remove <name>      uninstall and drop its settings entry
  doctor <name|path> spawn the server and grade it against the manifest
  replay <file> <dir|name>  play a recorded session's host side against a new build
  validate-wire <file>  check a transcript's messages against the YEP schema
  info <name|path|crate>  everything it contributes, its approval and health
  search <term>      find extensions in the registry and the added marketplaces
  marketplace        add, list or remove Claude Code plugin marketplaces
  config             get, set or unset plain config fields
  secret, pack       credential-store secrets; package a .crate

See docs/extensions.md for sources, consent, settings.toml and list output.`,
	}
	cmd.AddCommand(
		a.extNewCmd(), a.extInstallCmd(), a.extListCmd(), a.extEnableCmd(), a.extDisableCmd(),
		a.extUpdateCmd(), a.extRemoveCmd(),
		a.extDoctorCmd(), a.extReplayCmd(), a.extValidateWireCmd(), a.extPackCmd(), a.extSecretCmd(), a.extConfigCmd(), a.extSearchCmd(), a.extInfoCmd(),
		a.extMarketplaceCmd(),
	)
	return cmd
}
