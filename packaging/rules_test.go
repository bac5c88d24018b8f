package packaging

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/core/host"
)

// The mcp__ prefix names the tools of MCP servers (mcp__<server>__<tool>):
// an extension declaring one could take over calls meant for a server, so
// the manifest is refused at install.
func TestToolNameMCPPrefixIsReserved(t *testing.T) {
	for _, name := range []string{"mcp__docs__echo", "MCP__docs__echo", "mcp__"} {
		_, err := Load(pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
			f["tools"] = []any{obj{"name": "a"}, obj{"name": name}}
		})}))
		if !errors.Is(err, ErrInvalidManifest) {
			t.Fatalf("tool %q: err = %v, want ErrInvalidManifest", name, err)
		}
		for _, want := range []string{"yolop.tools[1].name", name, "reserved for MCP servers' tools"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("tool %q: error %q lacks %q", name, err, want)
			}
		}
	}
	// A name that merely contains "mcp" is fine.
	if _, err := Load(pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
		f["tools"] = []any{obj{"name": "mcp_status"}, obj{"name": "call_mcp__x"}}
	})})); err != nil {
		t.Errorf("mcp_status, call_mcp__x: %v", err)
	}
}

func hooks(n int) []any {
	var hs []any
	for i := range n {
		hs = append(hs, obj{"event": "pre_tool_use", "matcher": fmt.Sprintf("tool_%d", i)})
	}
	return hs
}

// The host serves at most host.MaxHookSubscriptions hooks per extension: a
// manifest with more is refused at install, not clamped at run time, and
// the consent summary shows the cap.
func TestHookSubscriptionsOverTheCapAreRefused(t *testing.T) {
	_, err := Load(pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { f["hooks"] = hooks(host.MaxHookSubscriptions + 1) })}))
	if !errors.Is(err, ErrInvalidManifest) {
		t.Fatalf("%d hooks: err = %v, want ErrInvalidManifest", host.MaxHookSubscriptions+1, err)
	}
	for _, want := range []string{"yolop.hooks", "17 subscriptions", "at most 16"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	m, err := Load(pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { f["hooks"] = hooks(host.MaxHookSubscriptions) })}))
	if err != nil {
		t.Fatalf("%d hooks: %v", host.MaxHookSubscriptions, err)
	}
	if s := Summary(m); !strings.Contains(s, "Hooks (16, at most 16 per extension):") {
		t.Errorf("summary does not show the cap:\n%s", s)
	}
}

// A path source whose live manifest changes engines.yolop no longer runs
// under the approved manifest: the change needs approval like any other.
func TestPathSourceEnginesChangeNeedsApproval(t *testing.T) {
	ctx := context.Background()
	s := NewStore(t.TempDir())
	m := manifest(nil)
	m["engines"] = obj{"yolop": ">=0.1"}
	src := pkg(t, map[string]any{"plugin.json": m})
	if _, err := s.Install(ctx, InstallOptions{Source: Source{Kind: SourcePath, Path: src}}); err != nil {
		t.Fatal(err)
	}
	m["engines"] = obj{"yolop": ">=99.0"}
	b, _ := json.Marshal(m)
	write(t, filepath.Join(src, "plugin.json"), string(b), 0o644)
	_, err := s.VerifyInstalled(ctx, "demo")
	if !errors.Is(err, ErrManifestChanged) {
		t.Fatalf("VerifyInstalled after engines.yolop was raised = %v, want ErrManifestChanged", err)
	}
	if !strings.Contains(err.Error(), `engines.yolop ">=0.1" → ">=99.0"`) {
		t.Errorf("error %q does not show the engines change", err)
	}
	if ch := Diff(&Manifest{Name: "demo", Engines: map[string]string{"yolop": ">=1"}}, &Manifest{Name: "demo"}); !ch.Widens() {
		t.Errorf("dropping engines.yolop: %+v, want a widening (the package may no longer say what it needs)", ch)
	}
}

// A path source whose manifest is [package.metadata.yolop] in Cargo.toml
// is reported as Cargo.toml when it widens, never as plugin.json.
func TestManifestChangedNamesTheManifestFile(t *testing.T) {
	ctx := context.Background()
	s := NewStore(t.TempDir())
	cargo := func(tools string) string {
		return "[package]\nname = \"yolop-extension-demo\"\nversion = \"1.0.0\"\n\n[package.metadata.yolop]\nprotocol_version = \"1.0\"\ncapabilityServer = { command = \"srv\" }\ntools = [" + tools + "]\n"
	}
	src := pkg(t, map[string]any{"Cargo.toml": cargo(`{ name = "a" }`)})
	if _, err := s.Install(ctx, InstallOptions{Source: Source{Kind: SourcePath, Path: src}}); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(src, "Cargo.toml"), cargo(`{ name = "a" }, { name = "rm_rf" }`), 0o644)
	_, err := s.VerifyInstalled(ctx, "demo")
	if !errors.Is(err, ErrManifestChanged) {
		t.Fatalf("VerifyInstalled = %v, want ErrManifestChanged", err)
	}
	if msg := err.Error(); !strings.Contains(msg, filepath.Join(src, "Cargo.toml")+" widens") || strings.Contains(msg, "plugin.json") {
		t.Errorf("error %q should name %s", msg, filepath.Join(src, "Cargo.toml"))
	}
}
