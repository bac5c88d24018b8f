// Package config resolves an extension's capability config for a session:
// it validates the config in settings.toml against the manifest's
// config_schema, splits secret fields (kept in the credential store,
// delivered only as the server's environment) from plain ones (sent in
// initialize.config, with the schema default of each unset one), injects
// the `env:` fields, expands ${VAR} in the server spec, asks for missing
// fields when an extension is enabled (one transaction: all saved or
// none), pushes
// live changes to a running server, and scrubs every stored secret value
// out of text that leaves the host side.
//
// The pieces:
//
//   - [Resolver] turns a manifest plus settings plus secrets into a
//     [host.Grant] ([Resolver.Grant]), reports set/unset per field
//     ([Resolver.FieldStatus]), runs setup on enable ([Resolver.Setup]) and
//     pushes a changed config to a live extension ([Resolver.Push]).
//   - [Kinds] is the extensible registry of field kinds setup asks by:
//     secret (masked, to the credential store), enum (a selector), text
//     (free text, validated).
//   - [Scrubber] replaces each stored secret value with
//     "[redacted:<ext>.<field>]"; [host.ExtensionOptions].Scrub and the log
//     writer use it.
//   - [NewSecretTool] is the agent-facing set_extension_secret tool: the
//     agent triggers entry, the user types the value.
package config
