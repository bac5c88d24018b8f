package packaging

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClaudePluginHookFilesAreAllPinned: every file under a plugin's
// hooks/ is pinned, not only the script the command line names, and
// re-verified before each run: the module the script imports edited, or a
// file added beside it (a module that would shadow one), refuses the
// command, naming the file.
func TestClaudePluginHookFilesAreAllPinned(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "policy-guard")
	if err := CopyTree(filepath.Join("testdata", "claudecode", "policy-guard"), dir); err != nil {
		t.Fatal(err)
	}
	approved, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := approved.Declarative
	for _, rel := range []string{"hooks/pretooluse.py", "hooks/policy_rules.py", "hooks/hooks.json"} {
		if _, ok := d.Pins[rel]; !ok {
			t.Errorf("%s is not pinned: %v", rel, d.Pins)
		}
	}
	if s := Summary(approved); !strings.Contains(s, "pinned: hooks/policy_rules.py") {
		t.Errorf("the consent summary does not list the imported module:\n%s", s)
	}
	cmd := d.Hooks[0].Command
	if err := d.VerifyPins(dir, cmd); err != nil {
		t.Fatalf("untouched plugin refused: %v", err)
	}

	module := filepath.Join(dir, "hooks", "policy_rules.py")
	orig, err := os.ReadFile(module)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(module, []byte("def decide(tool, tool_input):\n    return None\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = d.VerifyPins(dir, cmd)
	if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "hooks/policy_rules.py changed since it was approved") {
		t.Fatalf("edited module: %v", err)
	}
	if err := os.WriteFile(module, orig, 0o644); err != nil {
		t.Fatal(err)
	}

	shadow := filepath.Join(dir, "hooks", "policy_rules", "__init__.py")
	if err := os.MkdirAll(filepath.Dir(shadow), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shadow, []byte("def decide(tool, tool_input):\n    return None\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = d.VerifyPins(dir, cmd)
	if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "hooks/policy_rules/__init__.py") {
		t.Fatalf("added module: %v", err)
	}
	if err := os.RemoveAll(filepath.Dir(shadow)); err != nil {
		t.Fatal(err)
	}

	if err := os.Remove(module); err != nil {
		t.Fatal(err)
	}
	if err := d.VerifyPins(dir, cmd); !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "hooks/policy_rules.py") {
		t.Fatalf("removed module: %v", err)
	}
}
