package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/core/host"
	"yolop.dev/harness"
	"yolop.dev/harness/manager"
	"yolop.dev/packaging"
)

// claudeFixtureWithSettings installs and enables packaging's
// testdata/claudecode/<name> in a config directory whose settings.toml is
// settings, after edit (if set) changed the package's copy, and starts a
// session.
func claudeFixtureWithSettings(t *testing.T, name, settings string, edit func(pkg string)) *harness.Session {
	t.Helper()
	pkg := filepath.Join(t.TempDir(), name)
	if err := packaging.CopyTree("../packaging/testdata/claudecode/"+name, pkg); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(pkg)
	}
	cfg := t.TempDir()
	if err := os.WriteFile(filepath.Join(cfg, "settings.toml"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := harness.Open(ctx, harness.Options{ConfigDir: cfg})
	if err != nil {
		t.Fatal(err)
	}
	accept := func(context.Context, manager.Proposal) error { return nil }
	if _, err := h.Manager().Install(ctx, manager.InstallRequest{Source: pkg, Consent: accept}); err != nil {
		t.Fatalf("installing %s: %v", name, err)
	}
	if _, err := h.Manager().Enable(ctx, name); err != nil {
		t.Fatalf("enabling it: %v", err)
	}
	return startSession(t, h)
}

// TestClaudePluginHookOnErrorIsTheUsers: the on_error of a Claude Code
// plugin's hooks is the user's [hooks] setting. A crashing PreToolUse hook
// blocks by default (TestClaudePluginCrashingHookFailsClosed) and under
// [hooks.plugins.<name>] on_error = "block" even when [hooks] says allow;
// under "allow" the call runs past a crash and past a timeout; an
// on_error the plugin's own hooks.json carries changes nothing.
func TestClaudePluginHookOnErrorIsTheUsers(t *testing.T) {
	ctx := context.Background()
	call := func(s *harness.Session) error {
		res, err := s.CallTool(ctx, "bash", "c1", json.RawMessage(`{"command":"echo ran"}`), nil)
		if err == nil && res.Output != "ran\n" {
			t.Errorf("bash answered %+v", res)
		}
		return err
	}
	blocked := func(err error) bool {
		var b *host.HookBlockedError
		return errors.As(err, &b) && strings.Contains(b.Reason, "on_error is block")
	}
	selfAllowing := func(pkg string) {
		p := filepath.Join(pkg, "hooks", "hooks.json")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b = []byte(strings.Replace(string(b), `"timeout": 5`, `"timeout": 5, "on_error": "allow", "onError": "allow"`, 1))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("allow lets a crash through", func(t *testing.T) {
		t.Parallel()
		s := claudeFixtureWithSettings(t, "broken-guard", "[hooks]\non_error = \"allow\"\n", nil)
		if err := call(s); err != nil {
			t.Errorf("under the user's allow: %v", err)
		}
	})
	t.Run("allow lets a timeout through", func(t *testing.T) {
		t.Parallel()
		s := claudeFixtureWithSettings(t, "slow-guard", "[hooks.plugins.slow-guard]\non_error = \"allow\"\n", nil)
		if err := call(s); err != nil {
			t.Errorf("under the plugin's allow: %v", err)
		}
	})
	t.Run("the plugin's block wins over the global allow", func(t *testing.T) {
		t.Parallel()
		s := claudeFixtureWithSettings(t, "broken-guard", "[hooks]\non_error = \"allow\"\n[hooks.plugins.broken-guard]\non_error = \"block\"\n", nil)
		if err := call(s); !blocked(err) {
			t.Errorf("= %v, want the call blocked", err)
		}
	})
	t.Run("a package cannot allow itself", func(t *testing.T) {
		t.Parallel()
		s := claudeFixtureWithSettings(t, "broken-guard", "", selfAllowing)
		if err := call(s); !blocked(err) {
			t.Errorf("= %v, want the call blocked", err)
		}
	})
}
