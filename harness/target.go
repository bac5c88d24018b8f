package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"yolop.dev/core/host"
	"yolop.dev/packaging"
)

// BasePrompt is the host's own system prompt: the stable prefix of every
// turn's system prompt, which extension contributions never change.
const BasePrompt = "You are yolop, a coding agent. Use the tools you are given."

// IsPackageDir tells a package directory from an extension name: a name
// never holds a path separator, and an existing directory wins.
func IsPackageDir(arg string) bool {
	if strings.ContainsRune(arg, '/') || strings.ContainsRune(arg, filepath.Separator) || arg == "." || arg == ".." {
		return true
	}
	fi, err := os.Stat(arg)
	return err == nil && fi.IsDir()
}

// Target resolves what a check such as `yolop ext doctor` runs: a package
// directory (see [IsPackageDir]) loaded in place, or an installed
// extension verified against extensions.lock first, as a session does
// before it runs one, with the grant a session would run it with (see
// [Harness.InstalledGrant]). Errors name arg and what to pass instead.
func (h *Harness) Target(ctx context.Context, arg string) (*packaging.Manifest, host.Grant, error) {
	if IsPackageDir(arg) {
		m, g, _, err := InPlace(arg)
		if err != nil {
			return nil, host.Grant{}, fmt.Errorf("%s: %w", arg, err)
		}
		return m, g, nil
	}
	m, g, err := h.InstalledGrant(ctx, arg)
	if err != nil {
		return nil, host.Grant{}, fmt.Errorf("%w (to check a package directory, pass its path, e.g. ./%s)", err, arg)
	}
	return m, g, nil
}

// EmbeddedGrant is the grant of a package whose manifest a binary embeds
// and whose server the binary itself serves (yolop demo's echo): manifest,
// a plugin.json, is written to a new temporary package directory and
// loaded in place, and the server is pointed at command with args; an
// empty command is this binary (os.Executable). The returned cleanup
// removes the directory; call it when the session ends.
func EmbeddedGrant(manifest []byte, command string, args ...string) (host.Grant, func(), error) {
	if command == "" {
		exe, err := os.Executable()
		if err != nil {
			return host.Grant{}, nil, fmt.Errorf("embedded package: locating this binary, which serves it: %w", err)
		}
		command = exe
	}
	dir, err := os.MkdirTemp("", "yolop-embedded-")
	if err != nil {
		return host.Grant{}, nil, fmt.Errorf("embedded package: %w", err)
	}
	cleanup := func() { os.RemoveAll(dir) }
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), manifest, 0o644); err != nil {
		cleanup()
		return host.Grant{}, nil, fmt.Errorf("embedded package: %w", err)
	}
	_, g, _, err := InPlace(dir)
	if err != nil {
		cleanup()
		return host.Grant{}, nil, fmt.Errorf("reading the embedded manifest: %w", err)
	}
	g.Server.Command, g.Server.Args = command, args
	return g, cleanup, nil
}

// CacheDir is the directory under the default config directory (see
// [packaging.ConfigDir]) where yolop caches what it can rebuild, name
// being the kind (e.g. "wasm", compiled WASM modules); "" when there is no
// config directory. It is needed before a harness is opened: the
// transports a binary registers in Options.Transports use it.
func CacheDir(name string) string {
	dir, err := packaging.ConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "cache", name)
}
