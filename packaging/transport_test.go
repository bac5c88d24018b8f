package packaging

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/core"
)

// wasmBytes is the smallest valid WebAssembly module: magic and version.
var wasmBytes = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

func wasmPkg(t *testing.T, server obj, files map[string]any) string {
	t.Helper()
	all := map[string]any{"plugin.json": manifest(func(f obj) { f["capabilityServer"] = server })}
	for k, v := range files {
		all[k] = v
	}
	return pkg(t, all)
}

func TestWASMServerValidation(t *testing.T) {
	good := obj{"transport": "wasm", "module": "server.wasm", "args": []any{"-v"},
		"fs": []any{obj{"path": "${workspace}", "mode": "ro"}, obj{"path": "${package}/data"}}, "max_memory_mb": 64}
	m, err := Load(wasmPkg(t, good, map[string]any{"server.wasm": wasmBytes}))
	if err != nil {
		t.Fatalf("a valid wasm server: %v", err)
	}
	if s := m.Yolop.CapabilityServer; s.TransportName() != "wasm" || s.Module != "server.wasm" || len(s.FS) != 2 || !s.FS[1].ReadOnly() {
		t.Fatalf("loaded %+v", s)
	}

	for _, tc := range []struct {
		name   string
		server obj
		files  map[string]any
		is     error
		want   string
	}{
		{"unknown transport", obj{"transport": "grpc", "command": "srv"}, nil, nil, "yolop.capabilityServer.transport"},
		{"wasm without a module", obj{"transport": "wasm"}, nil, nil, "yolop.capabilityServer.module: is empty"},
		{"wasm with a command", obj{"transport": "wasm", "module": "server.wasm", "command": "srv"}, map[string]any{"server.wasm": wasmBytes}, nil, "names its module instead"},
		{"module missing", obj{"transport": "wasm", "module": "server.wasm"}, nil, nil, `"server.wasm"`},
		{"module not wasm", obj{"transport": "wasm", "module": "server.wasm"}, map[string]any{"server.wasm": "#!/bin/sh\n"}, nil, "is not a WebAssembly module"},
		{"module truncated", obj{"transport": "wasm", "module": "server.wasm"}, map[string]any{"server.wasm": "\x00as"}, nil, "is not a WebAssembly module"},
		{"module outside", obj{"transport": "wasm", "module": "../x.wasm"}, nil, ErrEscapesPackage, "leaves the package"},
		{"module absolute", obj{"transport": "wasm", "module": "/tmp/x.wasm"}, nil, ErrEscapesPackage, "absolute path"},
		{"mount of a host path", obj{"transport": "wasm", "module": "s.wasm", "fs": []any{obj{"path": "/etc"}}}, map[string]any{"s.wasm": wasmBytes}, nil, "fs[0].path"},
		{"mount climbing out", obj{"transport": "wasm", "module": "s.wasm", "fs": []any{obj{"path": "${workspace}/../.."}}}, map[string]any{"s.wasm": wasmBytes}, ErrEscapesPackage, "climbs out"},
		{"bad mount mode", obj{"transport": "wasm", "module": "s.wasm", "fs": []any{obj{"path": "${workspace}", "mode": "x"}}}, map[string]any{"s.wasm": wasmBytes}, nil, "fs[0].mode"},
		{"memory cap too big", obj{"transport": "wasm", "module": "s.wasm", "max_memory_mb": 100000}, map[string]any{"s.wasm": wasmBytes}, nil, "max_memory_mb"},
		{"sandbox fields on stdio", obj{"command": "srv", "fs": []any{obj{"path": "${workspace}"}}}, nil, nil, `is only for transport "wasm"`},
		{"stdio without a command", obj{"transport": "stdio"}, nil, nil, "yolop.capabilityServer.command: is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(wasmPkg(t, tc.server, tc.files))
			if !errors.Is(err, ErrInvalidManifest) || (tc.is != nil && !errors.Is(err, tc.is)) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want ErrInvalidManifest %v containing %q", err, tc.is, tc.want)
			}
		})
	}
}

func TestTransportSummaryAndDiff(t *testing.T) {
	wasm, err := Load(wasmPkg(t, obj{"transport": "wasm", "module": "server.wasm", "fs": []any{obj{"path": "${workspace}"}}},
		map[string]any{"server.wasm": wasmBytes}))
	if err != nil {
		t.Fatal(err)
	}
	sum := Summary(wasm)
	for _, w := range []string{`WASM module "server.wasm" (sandboxed: no network, no filesystem unless granted)`, "filesystem: ${workspace} (read-only)", "memory cap: 256 MiB"} {
		if !strings.Contains(sum, w) {
			t.Errorf("summary lacks %q:\n%s", w, sum)
		}
	}
	plugin, err := Load(pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
		f["capabilityServer"] = obj{"transport": "go-plugin", "command": "srv"}
	})}))
	if err != nil {
		t.Fatal(err)
	}
	if s := Summary(plugin); !strings.Contains(s, `"srv" (over go-plugin)`) {
		t.Errorf("go-plugin summary:\n%s", s)
	}
	stdio, err := Load(pkg(t, map[string]any{"plugin.json": manifest(nil)}))
	if err != nil {
		t.Fatal(err)
	}

	widens := func(old, next *Manifest, want string) {
		t.Helper()
		ch := Diff(old, next)
		if !ch.Widens() || !strings.Contains(ch.String(), want) {
			t.Errorf("diff does not widen with %q:\n%s", want, ch)
		}
	}
	widens(stdio, plugin, "server transport changed: stdio → go-plugin")
	widens(plugin, wasm, "server transport changed: go-plugin → wasm")

	rw := *wasm
	f := *wasm.Yolop
	cs := *f.CapabilityServer
	cs.FS = []Mount{{Path: "${workspace}", Mode: "rw"}, {Path: "${package}"}}
	cs.MaxMemoryMB = 1024
	f.CapabilityServer, rw.Yolop = &cs, &f
	widens(wasm, &rw, "filesystem ${workspace}: now writable")
	widens(wasm, &rw, "filesystem ${package} (read-only) for the WASM guest")
	widens(wasm, &rw, "WASM memory cap 256 → 1024 MiB")
	back := Diff(&rw, wasm)
	if back.Widens() || !strings.Contains(back.String(), "now read-only") || !strings.Contains(back.String(), "1024 → 256") {
		t.Errorf("narrowing the sandbox:\n%s", back)
	}
	if ch := Diff(wasm, wasm); !ch.Empty() {
		t.Errorf("diff of a wasm manifest with itself:\n%s", ch)
	}
}

// hostgrant needs the spec the runtime starts: the transport, the module's
// absolute path, and mounts with ${package} resolved and ${workspace} left
// for each start. Tested here through core.ExpandMounts, the runtime's
// half.
func TestMountsResolveAtStart(t *testing.T) {
	mounts := []core.Mount{{Path: core.WorkspaceVar + string(filepath.Separator) + "src", ReadOnly: true}, {Path: "/pkg/data"}}
	got := core.ExpandMounts(mounts, "/home/u/proj")
	if len(got) != 2 || got[0].Path != "/home/u/proj"+string(filepath.Separator)+"src" || !got[0].ReadOnly || got[1].Path != "/pkg/data" {
		t.Fatalf("expanded %+v", got)
	}
	if got := core.ExpandMounts(mounts, ""); len(got) != 1 || got[0].Path != "/pkg/data" {
		t.Fatalf("without a workspace, the workspace mount must be dropped: %+v", got)
	}
}
