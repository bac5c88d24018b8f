package packaging

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func withSandbox(sb obj) func(f obj) {
	return func(f obj) { f["sandbox"] = sb }
}

func TestSandboxRefusesBadRulesNamingTheField(t *testing.T) {
	cases := []struct {
		name string
		edit func(f obj)
		want string
	}{
		{"relative", withSandbox(obj{"fs": []any{obj{"path": "data", "access": "ro"}}}), `yolop.sandbox.fs[0].path: "data" is a relative path`},
		{"dotdot", withSandbox(obj{"fs": []any{obj{"path": "${package}/../x"}}}), `yolop.sandbox.fs[0].path: "${package}/../x" climbs out`},
		{"root rw", withSandbox(obj{"fs": []any{obj{"path": "/usr"}, obj{"path": "/", "access": "rw"}}}), `yolop.sandbox.fs[1].access: "/" is the whole file system`},
		{"unknown placeholder", withSandbox(obj{"fs": []any{obj{"path": "${tmp}/x"}}}), `yolop.sandbox.fs[0].path: "${tmp}/x" starts with an unknown placeholder`},
		{"glued placeholder", withSandbox(obj{"fs": []any{obj{"path": "${home}.ssh"}}}), `yolop.sandbox.fs[0].path: "${home}.ssh": put a '/' after the placeholder`},
		{"inner placeholder", withSandbox(obj{"fs": []any{obj{"path": "/x/${home}"}}}), `yolop.sandbox.fs[0].path: "/x/${home}": a placeholder may only start the path`},
		{"bad access", withSandbox(obj{"fs": []any{obj{"path": "/usr", "access": "rwx"}}}), "yolop.sandbox.fs[0].access"},
		{"port zero", withSandbox(obj{"net": obj{"connect": []any{0}}}), "yolop.sandbox.net.connect[0]"},
		{"port too big", withSandbox(obj{"net": obj{"bind": []any{70000}}}), "yolop.sandbox.net.bind[0]"},
		{"wasm", func(f obj) {
			f["capabilityServer"] = obj{"transport": "wasm", "module": "m.wasm"}
			f["sandbox"] = obj{"exec": true}
		}, "yolop.sandbox: a wasm server is sandboxed by its runtime"},
		{"no server", func(f obj) {
			delete(f, "capabilityServer")
			f["tools"] = []any{}
			f["sandbox"] = obj{"exec": true}
		}, "yolop.sandbox: there is no capabilityServer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(pkg(t, map[string]any{"plugin.json": manifest(c.edit), "m.wasm": "\x00asm\x01\x00\x00\x00"}))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestSandboxAcceptedAndSurvivesTheLock(t *testing.T) {
	m := loadJSON(t, withSandbox(obj{
		"fs":   []any{obj{"path": "${workspace}", "access": "rw"}, obj{"path": "${home}/go/pkg/mod"}, obj{"path": "/opt/tool", "access": "ro"}, obj{"path": "${cache}", "access": "rw"}},
		"net":  obj{"connect": []any{443}, "bind": []any{8080}},
		"exec": true,
	}))
	mj, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	e := LockEntry{Name: m.Name, Manifest: mj}
	back, err := e.ApprovedManifest()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(m.Yolop.Sandbox, back.Yolop.Sandbox); d != "" {
		t.Fatalf("the lock lost the sandbox (-loaded +approved):\n%s", d)
	}
	if d := Diff(m, back); !d.Empty() {
		t.Fatalf("diff of a manifest against its own lock = %v", d)
	}
	s, origin := back.EffectiveSandbox()
	if origin != "manifest" || !s.Exec || s.FS[1].Write() {
		t.Fatalf("effective = %+v %q", s, origin)
	}
}

func TestSandboxInCargoMetadata(t *testing.T) {
	dir := pkg(t, map[string]any{"Cargo.toml": `[package]
name = "crab"
version = "0.1.0"

[package.metadata.yolop]
protocol_version = "1.0"
capabilityServer = { command = "crab" }

[package.metadata.yolop.sandbox]
exec = true
fs = [{ path = "${home}/.cargo", access = "ro" }]
net = { connect = [443] }
`})
	m, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := m.Yolop.Sandbox
	if s == nil || !s.Exec || len(s.FS) != 1 || s.FS[0].Path != "${home}/.cargo" || s.Net == nil || !slices.Equal(s.Net.Connect, []int{443}) {
		t.Fatalf("sandbox from Cargo.toml = %+v", s)
	}
	dir = pkg(t, map[string]any{"Cargo.toml": `[package]
name = "crab"
version = "0.1.0"

[package.metadata.yolop]
protocol_version = "1.0"
capabilityServer = { command = "crab" }

[package.metadata.yolop.sandbox]
fs = [{ path = "cache", access = "rw" }]
`})
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "package.metadata.yolop.sandbox.fs[0].path") {
		t.Fatalf("a relative path in Cargo.toml: err = %v", err)
	}
}

func TestSandboxSummary(t *testing.T) {
	m := loadJSON(t, withSandbox(obj{
		"fs":  []any{obj{"path": "${workspace}", "access": "ro"}, obj{"path": "${cache}", "access": "rw"}},
		"net": obj{"connect": []any{443, 8443}},
	}))
	s := Summary(m)
	for _, want := range []string{
		"Sandbox (declared by the manifest):",
		"read-only: ${workspace}\n",
		"read-write: ${cache}\n",
		"TCP connect: 443, 8443; TCP listen: none",
		"run other programs: no",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	def := Summary(loadJSON(t, nil))
	for _, want := range []string{"Sandbox (the default: the manifest declares none):", "read-write: ${workspace}, ${cache}", "read-only: ${package}, /usr", "TCP connect: none; TCP listen: none"} {
		if !strings.Contains(def, want) {
			t.Errorf("default summary lacks %q:\n%s", want, def)
		}
	}
	wm, err := Load(pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
		f["capabilityServer"] = obj{"transport": "wasm", "module": "m.wasm"}
	}), "m.wasm": "\x00asm\x01\x00\x00\x00"}))
	if err != nil {
		t.Fatal(err)
	}
	wasm := Summary(wm)
	if strings.Contains(wasm, "Sandbox (") {
		t.Errorf("a wasm server gets no OS sandbox line:\n%s", wasm)
	}
}

func TestSandboxDiff(t *testing.T) {
	base := obj{
		"fs":  []any{obj{"path": "${workspace}", "access": "ro"}, obj{"path": "/usr", "access": "ro"}},
		"net": obj{"connect": []any{443}},
	}
	old := loadJSON(t, withSandbox(base))
	cases := []struct {
		name   string
		edit   func(f obj)
		widen  []string
		narrow []string
	}{
		{"same", withSandbox(base), nil, nil},
		{"new path", withSandbox(obj{"fs": []any{obj{"path": "${workspace}", "access": "ro"}, obj{"path": "/usr", "access": "ro"}, obj{"path": "${home}/.ssh"}}, "net": obj{"connect": []any{443}}}),
			[]string{"sandbox: ${home}/.ssh (read-only)"}, nil},
		{"ro to rw", withSandbox(obj{"fs": []any{obj{"path": "${workspace}", "access": "rw"}, obj{"path": "/usr"}}, "net": obj{"connect": []any{443}}}),
			[]string{"sandbox: ${workspace} now writable"}, nil},
		{"new port and exec", withSandbox(obj{"fs": base["fs"], "net": obj{"connect": []any{443, 22}, "bind": []any{80}}, "exec": true}),
			[]string{"sandbox: may connect to TCP port 22", "sandbox: may listen on TCP port 80", "sandbox: may run other programs"}, nil},
		{"narrowing", withSandbox(obj{"fs": []any{obj{"path": "${workspace}", "access": "ro"}}}),
			nil, []string{"sandbox: /usr removed", "sandbox: may no longer connect to TCP port 443"}},
		{"block removed: the default is wider", func(f obj) {},
			[]string{"sandbox: ${cache} (read-write)", "sandbox: ${package} (read-only)", "sandbox: ${workspace} now writable", "sandbox: /bin (read-only)", "sandbox: /etc (read-only)", "sandbox: /lib (read-only)", "sandbox: /lib64 (read-only)"},
			[]string{"sandbox: may no longer connect to TCP port 443"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Diff(old, loadJSON(t, c.edit))
			if diff := cmp.Diff(c.widen, d.Widening); diff != "" {
				t.Errorf("widening (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.narrow, d.Narrowing); diff != "" {
				t.Errorf("narrowing (-want +got):\n%s", diff)
			}
		})
	}
	// A fresh install lists the sandbox it grants.
	fresh := Diff(nil, old)
	if !slices.Contains(fresh.Widening, "sandbox: may connect to TCP port 443") || !slices.Contains(fresh.Widening, "sandbox: ${workspace} (read-only)") {
		t.Errorf("fresh install widening = %v", fresh.Widening)
	}
	// A lock from before sandboxes compares against the default: a block
	// narrower than the default is no reason to ask again.
	if d := Diff(loadJSON(t, nil), loadJSON(t, withSandbox(obj{"fs": []any{obj{"path": "${workspace}", "access": "rw"}}}))); d.Widens() {
		t.Errorf("narrowing the default widened: %v", d.Widening)
	}
}
