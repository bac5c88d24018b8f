package settings

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	gotoml "github.com/pelletier/go-toml/v2"
)

// SandboxKey is the user's [sandbox] table: what the OS sandbox of native
// extension servers may and may not do beyond what each manifest declared.
// Only the user's settings.toml is read for it, never a package or a
// workspace file:
//
//	[sandbox]
//	refuse_unsandboxed = true    # do not start an extension whose rules cannot be enforced
//
//	[sandbox.extensions.lsp]
//	mode = "off"                 # run it unsandboxed (the default is "on")
//	fs = [{ path = "${home}/.config/gopls", access = "ro" }]
//	connect = [443]              # more TCP ports it may connect to
//	bind = [8080]                # and listen on
//	exec = true                  # let it run other programs
const SandboxKey = "sandbox"

// Sandbox is the [sandbox] table. The zero value sets nothing.
type Sandbox struct {
	// RefuseUnsandboxed refuses to start a native extension whose sandbox
	// this machine cannot enforce in full, instead of starting it with
	// what can be enforced.
	RefuseUnsandboxed bool `toml:"refuse_unsandboxed"`
	// Extensions maps an extension name to the user's override of its
	// sandbox.
	Extensions map[string]SandboxOverride `toml:"extensions"`
}

// A SandboxOverride is [sandbox.extensions.<name>]: the user's own change
// to one extension's sandbox. It can turn the sandbox off or add to it;
// it never comes from a package.
type SandboxOverride struct {
	// Mode is "on" (the default when empty) or "off": no OS sandbox for
	// this extension.
	Mode string `toml:"mode"`
	// FS adds paths, spelled as in the manifest's yolop.sandbox.fs.
	FS []SandboxPath `toml:"fs"`
	// Connect and Bind add TCP ports.
	Connect []int `toml:"connect"`
	Bind    []int `toml:"bind"`
	// Exec, when set, says whether the extension may run other programs.
	Exec *bool `toml:"exec"`
}

// Off reports whether the override turns the sandbox off.
func (o SandboxOverride) Off() bool { return o.Mode == "off" }

// A SandboxPath is one path of an override.
type SandboxPath struct {
	Path string `toml:"path"`
	// Access is "ro" (the default when empty) or "rw".
	Access string `toml:"access"`
}

// Sandbox returns the [sandbox] table (the zero Sandbox when there is
// none). An unknown key, a mode other than "on" or "off", an access other
// than "ro" or "rw" and a port outside 1–65535 are errors naming the file
// and the key.
func (f *File) Sandbox(ctx context.Context) (Sandbox, error) {
	var s Sandbox
	err := f.read(ctx, func(d *doc) error {
		if !d.k.Exists(SandboxKey) {
			return nil
		}
		table, ok := d.k.Get(SandboxKey).(map[string]any)
		if !ok {
			return fmt.Errorf("%w %s: sandbox must be a table such as\n\n[sandbox]\nrefuse_unsandboxed = true\n\nfound %v", ErrMalformed, f.path, tomlValue(d.k.Get(SandboxKey)))
		}
		raw, err := gotoml.Marshal(table)
		if err != nil {
			return fmt.Errorf("%w %s: sandbox: %v", ErrMalformed, f.path, err)
		}
		dec := gotoml.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			var se *gotoml.StrictMissingError
			if errors.As(err, &se) {
				return fmt.Errorf("%w %s: [sandbox] has a key it does not know (the keys are refuse_unsandboxed and extensions.<name>.mode, fs, connect, bind, exec):\n%s", ErrMalformed, f.path, se.String())
			}
			return fmt.Errorf("%w %s: [sandbox]: %v", ErrMalformed, f.path, err)
		}
		for name, o := range s.Extensions {
			key := "sandbox.extensions." + name
			if o.Mode != "" && o.Mode != "on" && o.Mode != "off" {
				return fmt.Errorf("%w %s: %s.mode must be \"on\" or \"off\", found %q", ErrMalformed, f.path, key, o.Mode)
			}
			for i, p := range o.FS {
				if p.Path == "" {
					return fmt.Errorf("%w %s: %s.fs[%d].path is empty", ErrMalformed, f.path, key, i)
				}
				if p.Access != "" && p.Access != "ro" && p.Access != "rw" {
					return fmt.Errorf("%w %s: %s.fs[%d].access must be \"ro\" or \"rw\", found %q", ErrMalformed, f.path, key, i, p.Access)
				}
			}
			for what, ports := range map[string][]int{"connect": o.Connect, "bind": o.Bind} {
				if i := slices.IndexFunc(ports, func(p int) bool { return p < 1 || p > 65535 }); i >= 0 {
					return fmt.Errorf("%w %s: %s.%s[%d] is %d, not a TCP port (1 to 65535)", ErrMalformed, f.path, key, what, i, ports[i])
				}
			}
		}
		return nil
	})
	if err != nil {
		return Sandbox{}, err
	}
	return s, nil
}
