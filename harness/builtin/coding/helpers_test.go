package coding_test

import (
	"context"
	"encoding/json"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"
	"go.uber.org/goleak"

	"yolop.dev/core/host"
	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
	"yolop.dev/harness/builtin/coding"
)

// serverEnv names the SDK server this test binary serves instead of
// running the tests (see TestMain).
const serverEnv = "CODING_TEST_SERVER"

func TestMain(m *testing.M) {
	if name := os.Getenv(serverEnv); name != "" {
		os.Exit(serve(name))
	}
	goleak.VerifyTestMain(m)
}

// serve runs the SDK server called name over stdin and stdout.
func serve(name string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	s := sdk.NewServer(sdk.Info{Name: name, Version: "1.0.0"}, sdk.Options{Logger: hclog.New(&hclog.LoggerOptions{Output: os.Stderr, Level: hclog.Warn})})
	switch name {
	case "guard":
		// A guardrail: bash may not remove anything.
		s.OnHook(yep.HookPreToolUse, "bash", func(ctx context.Context, h *sdk.HookEvent) (yep.HookFireResult, error) {
			var a struct{ Command string }
			if err := json.Unmarshal(h.Args, &a); err != nil {
				return yep.HookFireResult{}, err
			}
			if strings.Contains(a.Command, "rm ") {
				return yep.HookFireResult{Decision: yep.DecisionBlock, Reason: "guard: bash may not remove files"}, nil
			}
			return yep.HookFireResult{Decision: yep.DecisionAllow}, nil
		}, sdk.HookOptions{OnError: yep.HookOnErrorBlock})
	default:
		return 2
	}
	if err := s.Serve(ctx); err != nil {
		return 1
	}
	return 0
}

// A fixture is a workspace root beside a directory outside it.
type fixture struct {
	root, outside string
	c             *coding.Coding
}

// newFixture makes a workspace and an outside directory holding secret.txt,
// and the capability over the workspace with o.
func newFixture(t *testing.T, o coding.Options) *fixture {
	t.Helper()
	base := t.TempDir()
	f := &fixture{root: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{f.root, f.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(f.outside, "secret.txt"), "top secret\n")
	if o.Root == nil {
		o.Root = func() string { return f.root }
	}
	f.c = coding.New(o)
	return f
}

// call calls tool with args (a JSON object) and fails the test on a
// protocol error.
func (f *fixture) call(t *testing.T, tool, args string) yep.ToolResult {
	t.Helper()
	res, err := f.c.CallTool(context.Background(), host.ToolCall{ID: "call-1", Name: tool, Args: json.RawMessage(args)}, nil)
	if err != nil {
		t.Fatalf("%s %s: %v", tool, args, err)
	}
	return res
}

// ok calls tool and fails the test on an is_error result.
func (f *fixture) ok(t *testing.T, tool, args string) yep.ToolResult {
	t.Helper()
	res := f.call(t, tool, args)
	if res.IsError {
		t.Fatalf("%s %s: is_error: %s", tool, args, res.Output)
	}
	return res
}

// fails calls tool and fails the test unless the result is an error whose
// text holds every one of want.
func (f *fixture) fails(t *testing.T, tool, args string, want ...string) yep.ToolResult {
	t.Helper()
	res := f.call(t, tool, args)
	if !res.IsError {
		t.Fatalf("%s %s succeeded: %s", tool, args, res.Output)
	}
	for _, w := range want {
		if !strings.Contains(res.Output, w) {
			t.Fatalf("%s %s: error %q lacks %q", tool, args, res.Output, w)
		}
	}
	return res
}

func (f *fixture) path(rel string) string { return filepath.Join(f.root, rel) }

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// args encodes v as a tool's arguments.
func args(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dataOf decodes a result's structured data.
func dataOf(t *testing.T, res yep.ToolResult) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(res.Data, &m); err != nil {
		t.Fatalf("data %s: %v", res.Data, err)
	}
	return m
}
