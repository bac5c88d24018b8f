package config

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"yolop.dev/core"
	"yolop.dev/harness/settings"
	"yolop.dev/packaging"
	"yolop.dev/packaging/hostgrant"
	"yolop.dev/transport/stdio/confine"
)

// A SandboxStore holds the user's [sandbox] table; the settings package's
// File implements it. A [Resolver] whose Settings is not one applies no
// sandbox settings.
type SandboxStore interface {
	Sandbox(ctx context.Context) (settings.Sandbox, error)
}

// An UnsandboxedError refuses to start an extension whose sandbox this
// machine cannot enforce in full while [sandbox] refuse_unsandboxed is set.
type UnsandboxedError struct {
	Ext    string
	Status string
}

func (e *UnsandboxedError) Error() string {
	return fmt.Sprintf("extension %s is not started: its sandbox would be %s, and settings.toml [sandbox] refuse_unsandboxed is set (set [sandbox.extensions.%s] mode = \"off\" to run it anyway)", e.Ext, e.Status, e.Ext)
}

// ApplySandbox applies the user's [sandbox] settings to the server spec of
// m's grant: [sandbox.extensions.<name>] mode = "off" drops the sandbox;
// its fs, connect, bind and exec add to the manifest's (or the default)
// rules, with origin "settings"; refuse_unsandboxed makes the rules
// required and refuses, with an [*UnsandboxedError], a sandbox this
// machine cannot enforce in full. A server without a sandbox (WASM, or
// none) is left alone. settingsPath names the file in errors.
func ApplySandbox(m *packaging.Manifest, spec *core.ServerSpec, s settings.Sandbox, settingsPath string) error {
	if spec.Sandbox == nil {
		return nil
	}
	o, has := s.Extensions[m.Name]
	if has && o.Off() {
		spec.Sandbox = nil
		return nil
	}
	if has {
		c := *spec.Sandbox
		c.Paths = slices.Clone(c.Paths)
		var add []packaging.SandboxPath
		for i, p := range o.FS {
			sp := packaging.SandboxPath{Path: p.Path, Access: p.Access}
			if err := packaging.CheckSandboxPath(fmt.Sprintf("sandbox.extensions.%s.fs[%d]", m.Name, i), sp); err != nil {
				return fmt.Errorf("%w %s: %v", settings.ErrMalformed, settingsPath, err)
			}
			add = append(add, sp)
		}
		c.Paths = append(c.Paths, hostgrant.ResolveSandboxPaths(m, add)...)
		c.Connect = union(c.Connect, o.Connect)
		c.Bind = union(c.Bind, o.Bind)
		if o.Exec != nil {
			c.Exec = *o.Exec
		}
		c.Origin = "settings"
		spec.Sandbox = &c
	}
	if s.RefuseUnsandboxed {
		spec.Sandbox.Required = true
		if r := confine.Check(spec.Sandbox); !r.Full() {
			return &UnsandboxedError{Ext: m.Name, Status: r.String()}
		}
	}
	return nil
}

func union(ports []uint16, more []int) []uint16 {
	out := slices.Clone(ports)
	for _, p := range more {
		if p >= 1 && p <= 65535 && !slices.Contains(out, uint16(p)) {
			out = append(out, uint16(p))
		}
	}
	slices.Sort(out)
	return out
}

// applySandboxSettings reads the [sandbox] table when r's settings hold one
// and applies it to g's server.
func (r *Resolver) applySandboxSettings(ctx context.Context, m *packaging.Manifest, spec *core.ServerSpec) error {
	st, ok := r.Settings.(SandboxStore)
	if !ok || spec.Sandbox == nil {
		return nil
	}
	s, err := st.Sandbox(ctx)
	if err != nil {
		return err
	}
	return ApplySandbox(m, spec, s, r.settingsPath())
}

// SandboxState is the one-line sandbox state of a native server about to
// run (or running) with spec, as ext info, /status and the consent summary
// say it: what this machine enforces of the rules ([confine.Check]) and
// where the rules come from, e.g. "sandboxed (Landlock ABI 7); rules from
// the manifest" or "unsandboxed (kernel has no Landlock); rules from the
// default". "" for a server that is not native (WASM, or none).
func SandboxState(spec core.ServerSpec) string {
	if spec.Module != "" || spec.Transport == core.TransportWASM || (spec.Command == "" && spec.Sandbox == nil) {
		return ""
	}
	if spec.Sandbox == nil {
		return "unsandboxed (turned off in the user's settings)"
	}
	origin := spec.Sandbox.Origin
	switch origin {
	case "manifest", "default":
		origin = "the " + origin
	case "settings":
		origin = "the manifest or default, widened by the user's settings"
	}
	if origin == "" {
		return confine.Check(spec.Sandbox).String()
	}
	return confine.Check(spec.Sandbox).String() + "; rules from " + origin
}

// SandboxStatus is [SandboxState] for m's server under the user's [sandbox]
// settings s, or why it would not start: "not started: … and [sandbox]
// refuse_unsandboxed is set". "" when m has no native server.
func SandboxStatus(m *packaging.Manifest, s settings.Sandbox, settingsPath string) string {
	if sb, _ := m.EffectiveSandbox(); sb == nil {
		return ""
	}
	g, err := hostgrant.FromManifest(m)
	if err != nil {
		return ""
	}
	if err := ApplySandbox(m, &g.Server, s, settingsPath); err != nil {
		var ue *UnsandboxedError
		if errors.As(err, &ue) {
			return "not started: " + ue.Status + ", and [sandbox] refuse_unsandboxed is set"
		}
		return "unknown: " + err.Error()
	}
	return SandboxState(g.Server)
}
