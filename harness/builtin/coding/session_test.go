package coding_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"yolop.dev/core"
	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/harness"
	"yolop.dev/harness/builtin/coding"
)

// TestHooksApplyToBuiltins: in a harness session with the coding tools, a
// real extension's pre_tool_use hook (this test binary serving an SDK
// server over stdio) guards the built-in bash as it would an extension's
// tool: the call it blocks never runs, the one it allows does.
func TestHooksApplyToBuiltins(t *testing.T) {
	ctx := context.Background()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, coding.Options{})
	writeFile(t, f.path("keep.txt"), "keep\n")
	h, err := harness.Open(ctx, harness.Options{ConfigDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	guard := host.Grant{
		Name: "guard", Version: "1.0.0", ProtocolVersion: yep.ProtocolVersion,
		Server: core.ServerSpec{Name: "guard", Command: exe, Env: map[string]string{serverEnv: "guard"}},
		Hooks:  []host.HookGrant{{Event: yep.HookPreToolUse, Matcher: "bash", TimeoutMS: 60_000, OnError: yep.HookOnErrorBlock}},
	}
	s, warnings := h.NewSession(ctx, harness.SessionOptions{NoEnabled: true, CodingTools: true, WorkspaceRoot: f.root, Extra: []host.Grant{guard}})
	defer s.Close()
	if len(warnings) != 0 {
		t.Fatalf("warnings: %q", warnings)
	}
	if err := s.Start(ctx); err != nil { // the guard has hooks: it is eager
		t.Fatal(err)
	}
	var names []string
	for _, ti := range s.Tools() {
		if ti.Capability == "builtin:coding" {
			if ti.Deferred {
				t.Errorf("%s is deferred", ti.Name)
			}
			names = append(names, ti.Name)
		}
	}
	for _, want := range []string{"read_file", "write_file", "edit_file", "list_files", "grep", "bash"} {
		if !slices.Contains(names, want) {
			t.Fatalf("the session's coding tools %v lack %s", names, want)
		}
	}

	_, err = s.CallTool(ctx, "bash", "c1", json.RawMessage(`{"command":"rm keep.txt"}`), nil)
	var blocked *host.HookBlockedError
	if !errors.As(err, &blocked) || !strings.Contains(err.Error(), "guard: bash may not remove files") {
		t.Fatalf("the guarded bash returned %v, want the guard's block", err)
	}
	if got := readFile(t, f.path("keep.txt")); got != "keep\n" {
		t.Fatalf("the blocked command ran: keep.txt = %q", got)
	}
	var updates []string
	res, err := s.CallTool(ctx, "bash", "c2", json.RawMessage(`{"command":"cat keep.txt"}`), func(u yep.ToolUpdateParams) { updates = append(updates, u.Output) })
	if err != nil || res.IsError || res.Output != "keep\n" || !slices.Equal(updates, []string{"keep\n"}) {
		t.Fatalf("the allowed bash = %+v, %v, updates %q", res, err, updates)
	}
	// The session's arguments check applies too: the schema refuses an
	// unknown argument before any hook or tool sees it.
	if _, err := s.CallTool(ctx, "read_file", "c3", json.RawMessage(`{"path":"keep.txt","mode":"x"}`), nil); !errors.Is(err, host.ErrInvalidArgs) {
		t.Fatalf("read_file with an unknown argument returned %v, want ErrInvalidArgs", err)
	}
	// The workspace rule holds through the session, and follows /workspace.
	res, err = s.CallTool(ctx, "read_file", "c4", json.RawMessage(`{"path":"../outside/secret.txt"}`), nil)
	if err != nil || !res.IsError || !strings.Contains(res.Output, "outside the workspace") {
		t.Fatalf("an escape through the session = %+v, %v", res, err)
	}
	s.SetWorkspace(f.outside)
	res, err = s.CallTool(ctx, "read_file", "c5", json.RawMessage(`{"path":"secret.txt"}`), nil)
	if err != nil || res.Output != "top secret\n" {
		t.Fatalf("read_file after SetWorkspace = %+v, %v", res, err)
	}
}

// TestCodingToolsOff: a session without CodingTools has none of them.
func TestCodingToolsOff(t *testing.T) {
	ctx := context.Background()
	h, err := harness.Open(ctx, harness.Options{ConfigDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := h.NewSession(ctx, harness.SessionOptions{NoEnabled: true, WorkspaceRoot: t.TempDir()})
	defer s.Close()
	for _, ti := range s.Tools() {
		if ti.Capability == "builtin:coding" || ti.Name == "bash" {
			t.Fatalf("the session has %s from %s", ti.Name, ti.Capability)
		}
	}
}
