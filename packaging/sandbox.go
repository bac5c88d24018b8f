package packaging

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// A Sandbox is the manifest's yolop.sandbox block: what a native (stdio or
// go-plugin) capability server may do beyond the baseline that lets its own
// program start. It is part of the approved grant: shown in the consent
// summary, pinned in the lock with the manifest, and an update that widens
// it asks again (see [Diff]). A package without the block gets
// [DefaultSandbox].
type Sandbox struct {
	// FS lists the files and directories the server may read ("ro") or
	// read and write ("rw"): an absolute path, or one starting with
	// ${workspace}, ${package}, ${cache} or ${home}.
	FS []SandboxPath `json:"fs,omitempty"`
	// Net lists the TCP ports the server may connect to and listen on.
	Net *SandboxNet `json:"net,omitempty"`
	// Exec lets the server run programs other than its own executable
	// and interpreter.
	Exec bool `json:"exec,omitempty"`
}

// A SandboxPath is one path a sandboxed server may use.
type SandboxPath struct {
	Path string `json:"path"`
	// Access is "ro" (the default when empty) or "rw".
	Access string `json:"access,omitempty"`
}

// Write reports whether the path is writable.
func (p SandboxPath) Write() bool { return p.Access == "rw" }

// SandboxNet is the network part of a sandbox: TCP ports 1–65535.
type SandboxNet struct {
	Connect []int `json:"connect,omitempty"`
	Bind    []int `json:"bind,omitempty"`
}

// Sandbox path placeholders beyond [WorkspaceVar] and [PackageVar].
const (
	// CacheVar is a per-extension cache directory yolop creates.
	CacheVar = "${cache}"
	// HomeVar is the user's home directory.
	HomeVar = "${home}"
)

// sandboxVars are the placeholders a sandbox path may start with.
var sandboxVars = []string{WorkspaceVar, PackageVar, CacheVar, HomeVar}

// DefaultSystemPaths are the system directories the default sandbox lets a
// server read: programs, shared libraries and the system configuration
// (a missing one is skipped when the rules are applied).
var DefaultSystemPaths = []string{"/usr", "/lib", "/lib64", "/bin", "/etc"}

// DefaultSandbox is the sandbox of a native server whose manifest has no
// yolop.sandbox block: the workspace read-write, its own package
// read-only, its cache directory read-write, the system directories
// ([DefaultSystemPaths]) read-only, no network, no other programs.
func DefaultSandbox() *Sandbox {
	s := &Sandbox{FS: []SandboxPath{
		{Path: WorkspaceVar, Access: "rw"},
		{Path: PackageVar, Access: "ro"},
		{Path: CacheVar, Access: "rw"},
	}}
	for _, p := range DefaultSystemPaths {
		s.FS = append(s.FS, SandboxPath{Path: p, Access: "ro"})
	}
	return s
}

// EffectiveSandbox is the sandbox m's server runs under and where it comes
// from: the manifest's block ("manifest"), or [DefaultSandbox] ("default")
// for a native server without one. It is nil for a manifest with no
// native server (none, a WASM module, or a declarative package): those get
// no OS sandbox from the manifest.
func (m *Manifest) EffectiveSandbox() (*Sandbox, string) {
	if m == nil || m.Yolop == nil || m.Yolop.CapabilityServer == nil || m.Yolop.CapabilityServer.TransportName() == "wasm" {
		return nil, ""
	}
	if s := m.Yolop.Sandbox; s != nil {
		return s, "manifest"
	}
	return DefaultSandbox(), "default"
}

// checkSandbox checks the yolop.sandbox block: each path absolute or
// starting with a known placeholder, no '..', "/" never writable, a known
// access mode, ports in range; and a block only where a native server runs.
func (c *checker) checkSandbox(f *Facet) {
	s := f.Sandbox
	if s == nil {
		return
	}
	const field = "yolop.sandbox"
	if f.CapabilityServer == nil {
		c.errf(nil, field, "there is no capabilityServer to sandbox; remove the block")
	} else if f.CapabilityServer.TransportName() == "wasm" {
		c.errf(nil, field, "a wasm server is sandboxed by its runtime; declare its directories in capabilityServer.fs instead")
	}
	for i, p := range s.FS {
		c.checkSandboxPath(fmt.Sprintf("%s.fs[%d]", field, i), p)
	}
	if s.Net != nil {
		for name, ports := range map[string][]int{"connect": s.Net.Connect, "bind": s.Net.Bind} {
			for i, p := range ports {
				if p < 1 || p > 65535 {
					c.errf(nil, fmt.Sprintf("%s.net.%s[%d]", field, name, i), "%d is not a TCP port (1 to 65535)", p)
				}
			}
		}
	}
}

// CheckSandboxPath checks one sandbox path by the manifest's rules (an
// absolute path or one starting with a known placeholder, no '..', "/"
// never writable); the error names field.
func CheckSandboxPath(field string, p SandboxPath) error {
	c := &checker{}
	c.checkSandboxPath(field, p)
	if len(c.errs) > 0 {
		return errors.New(strings.Join(c.errs, "; "))
	}
	return nil
}

func (c *checker) checkSandboxPath(field string, p SandboxPath) {
	if p.Access != "" && p.Access != "ro" && p.Access != "rw" {
		c.errf(nil, field+".access", "%q is not an access mode; want \"ro\" (the default) or \"rw\"", p.Access)
	}
	path := p.Path
	rest := path
	known := false
	for _, v := range sandboxVars {
		if r, ok := strings.CutPrefix(path, v); ok {
			rest, known = r, true
			break
		}
	}
	switch {
	case path == "":
		c.errf(nil, field+".path", "is empty")
		return
	case strings.ContainsRune(path, 0):
		c.errf(nil, field+".path", "contains a NUL byte")
		return
	case !known && strings.HasPrefix(path, "$"):
		c.errf(nil, field+".path", "%q starts with an unknown placeholder; want %s, %s, %s or %s", path, WorkspaceVar, PackageVar, CacheVar, HomeVar)
		return
	case !known && !strings.HasPrefix(path, "/"):
		c.errf(nil, field+".path", "%q is a relative path; give an absolute path or start it with %s, %s, %s or %s", path, WorkspaceVar, PackageVar, CacheVar, HomeVar)
		return
	case known && rest != "" && !strings.HasPrefix(rest, "/"):
		c.errf(nil, field+".path", "%q: put a '/' after the placeholder", path)
		return
	case strings.Contains(rest, "${"):
		c.errf(nil, field+".path", "%q: a placeholder may only start the path", path)
		return
	case slices.Contains(strings.Split(rest, "/"), ".."):
		c.errf(ErrEscapesPackage, field+".path", "%q climbs out through '..'", path)
		return
	}
	if p.Write() && !known && strings.Trim(path, "/") == "" {
		c.errf(nil, field+".access", "%q is the whole file system; it cannot be writable", path)
	}
}

// sandboxLines renders a sandbox for the consent summary and status, one
// line per part, each starting with indent.
func sandboxLines(s *Sandbox, indent string) []string {
	var ro, rw []string
	for _, p := range s.FS {
		if p.Write() {
			rw = append(rw, p.Path)
		} else {
			ro = append(ro, p.Path)
		}
	}
	list := func(xs []string) string {
		if len(xs) == 0 {
			return "nothing"
		}
		return strings.Join(xs, ", ")
	}
	ports := func(ps []int) string {
		if len(ps) == 0 {
			return "none"
		}
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = strconv.Itoa(p)
		}
		return strings.Join(out, ", ")
	}
	var connect, bind []int
	if s.Net != nil {
		connect, bind = s.Net.Connect, s.Net.Bind
	}
	exec := "no (only its own program)"
	if s.Exec {
		exec = "yes"
	}
	return []string{
		indent + "read-only: " + list(ro),
		indent + "read-write: " + list(rw),
		indent + "TCP connect: " + ports(connect) + "; TCP listen: " + ports(bind),
		indent + "run other programs: " + exec,
	}
}

// SandboxSummary is the sandbox part of the consent summary and status for
// m: where the rules come from and what they allow, or "" when m has no
// native server.
func SandboxSummary(m *Manifest) string {
	s, origin := m.EffectiveSandbox()
	if s == nil {
		return ""
	}
	var b strings.Builder
	if origin == "default" {
		b.WriteString("  Sandbox (the default: the manifest declares none):\n")
	} else {
		b.WriteString("  Sandbox (declared by the manifest):\n")
	}
	for _, l := range sandboxLines(s, "    ") {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// nativeSandbox compares the effective sandboxes of two manifests: a new
// path, a path that became writable, a new port, or exec turned on widens;
// the opposites narrow. A removed block compares the default against what
// was approved. A new server under the default sandbox adds no lines: its
// command already widens and the summary shows the default.
func (d *differ) nativeSandbox(old, next *Manifest) {
	os, oo := old.EffectiveSandbox()
	ns, no := next.EffectiveSandbox()
	if ns == nil {
		return
	}
	if os == nil {
		if no == "default" {
			// A new native server: its command line widens already and
			// the summary shows the default it gets.
			return
		}
		os = &Sandbox{}
	}
	if oo != no && oo != "" {
		switch no {
		case "default":
			d.note("sandbox block removed: the default sandbox applies")
		default:
			d.note("sandbox block added: it replaces the default sandbox")
		}
	}
	op := map[string]bool{}
	for _, p := range os.FS {
		op[p.Path] = op[p.Path] || p.Write()
	}
	np := map[string]bool{}
	for _, p := range ns.FS {
		np[p.Path] = np[p.Path] || p.Write()
	}
	for _, k := range slices.Sorted(maps.Keys(np)) {
		w, had := op[k]
		switch {
		case !had:
			d.wide("sandbox: %s (%s)", k, accessText(np[k]))
		case !w && np[k]:
			d.wide("sandbox: %s now writable", k)
		case w && !np[k]:
			d.narrow("sandbox: %s now read-only", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(op)) {
		if _, has := np[k]; !has {
			d.narrow("sandbox: %s removed", k)
		}
	}
	var oc, ob, nc, nb []int
	if os.Net != nil {
		oc, ob = os.Net.Connect, os.Net.Bind
	}
	if ns.Net != nil {
		nc, nb = ns.Net.Connect, ns.Net.Bind
	}
	d.ports("connect to", oc, nc)
	d.ports("listen on", ob, nb)
	switch {
	case !os.Exec && ns.Exec:
		d.wide("sandbox: may run other programs")
	case os.Exec && !ns.Exec:
		d.narrow("sandbox: may no longer run other programs")
	}
}

func (d *differ) ports(verb string, old, next []int) {
	for _, p := range next {
		if !slices.Contains(old, p) {
			d.wide("sandbox: may %s TCP port %d", verb, p)
		}
	}
	for _, p := range old {
		if !slices.Contains(next, p) {
			d.narrow("sandbox: may no longer %s TCP port %d", verb, p)
		}
	}
}

func accessText(w bool) string {
	if w {
		return "read-write"
	}
	return "read-only"
}
