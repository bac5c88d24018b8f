package packaging

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSummary(t *testing.T) {
	m, err := Load("testdata/cargo")
	if err != nil {
		t.Fatal(err)
	}
	m.Yolop.MCPServers = []MCPServer{{Name: "docs", Type: "http", URL: "https://docs.example/mcp"}, {Name: "fs", Type: "stdio", Command: "npx", Args: []string{"fs-mcp"}, Env: map[string]string{"ROOT": "s3cr3t-mcp"}}}
	m.Yolop.CapabilityServer.Env = map[string]string{"API_BASE": "s3cr3t-server"}
	m.Yolop.Prompt = &Prompt{Text: "hello", Dynamic: true, MaxBytes: 4096}
	m.Yolop.Commands = []Command{{Name: "ping"}}
	m.Yolop.Tools[0].NeverDefer, m.Yolop.Tools[0].Streaming = true, true
	m.Yolop.Tools = append(m.Yolop.Tools, Tool{Name: "build", TimeoutMS: 5_400_000})
	s := Summary(m)
	for _, want := range []string{
		"Extension echo 0.2.0",
		`Server command: "yolop-extension-echo" "--stdio"`,
		"- echo [never_defer: always in context, streaming]",
		"- build [timeout 1h30m0s]",
		`pre_tool_use on "*" (on_error block, timeout 500 ms)  !! MATCHES EVERY TOOL CALL`,
		"- docs (http): https://docs.example/mcp",
		`- fs (stdio): "npx" "fs-mcp"`,
		"env: ROOT",
		"Prompt: 5 bytes static + DYNAMIC text from the server each turn (max 4096 bytes)",
		"Commands: echo:ping",
		"Skills: no",
		"Opt-ins: status (writes the status bar)",
		"- token (string) [SECRET: kept in the credential store, passed only as env, env ECHO_TOKEN, required]",
		"- mode (string)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "s3cr3t") || !strings.Contains(s, "env: API_BASE") {
		t.Errorf("summary must name env variables, never their values:\n%s", s)
	}
}

func loadJSON(t *testing.T, fn func(f obj)) *Manifest {
	t.Helper()
	m, err := Load(pkg(t, map[string]any{"plugin.json": manifest(fn)}))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestDiff(t *testing.T) {
	base := func(f obj) {
		f["tools"] = []any{obj{"name": "a", "description": "does a"}, obj{"name": "b", "never_defer": true}}
		f["hooks"] = []any{obj{"event": "pre_tool_use", "matcher": "a"}}
		f["mcpServers"] = []any{obj{"name": "m", "type": "stdio", "command": "mcp"}}
		f["prompt"] = "short"
		f["commands"] = []any{obj{"name": "go"}}
		f["status"] = true
	}
	old := loadJSON(t, base)
	cases := []struct {
		name   string
		edit   func(f obj)
		widen  []string
		narrow []string
	}{
		{"identical", func(f obj) {}, nil, nil},
		{"new tool", func(f obj) { f["tools"] = append(f["tools"].([]any), obj{"name": "c"}) }, []string{"new tool c"}, nil},
		{"tool description", func(f obj) { f["tools"].([]any)[0].(obj)["description"] = "does evil" }, []string{"tool a: description changed"}, nil},
		{"new hook", func(f obj) {
			f["hooks"] = append(f["hooks"].([]any), obj{"event": "post_tool_use", "matcher": "*"})
		}, []string{`new hook post_tool_use "*" — MATCHES EVERY TOOL CALL`}, nil},
		{"server command", func(f obj) { f["capabilityServer"] = obj{"command": "srv", "args": []any{"--evil"}} }, []string{`server command changed: "srv" → "srv" "--evil"`}, nil},
		{"server env", func(f obj) { f["capabilityServer"] = obj{"command": "srv", "env": obj{"TOKEN": "x"}} }, []string{"server env TOKEN added"}, nil},
		{"MCP transport", func(f obj) {
			f["mcpServers"] = []any{obj{"name": "m", "type": "http", "url": "https://evil.example"}}
		}, []string{`MCP server m changed: stdio "mcp" → http https://evil.example`}, nil},
		{"new opt-in", func(f obj) { f["trace"] = true }, []string{"new opt-in trace"}, nil},
		{"bigger prompt", func(f obj) { f["prompt"] = "much longer text" }, []string{"prompt text grew 5 → 16 bytes"}, nil},
		{"dynamic prompt", func(f obj) { f["prompt"] = obj{"text": "short", "dynamic": true} }, []string{"prompt is now dynamic"}, nil},
		{"new command", func(f obj) { f["commands"] = []any{obj{"name": "go"}, obj{"name": "stop"}} }, []string{"new command demo:stop"}, nil},
		{"new secret field", func(f obj) {
			f["config_schema"] = obj{"type": "object", "properties": obj{"k": obj{"type": "string", "secret": true}}}
		}, []string{"new config field k (secret)"}, nil},
		{"tool timeout raised", func(f obj) { f["tools"].([]any)[1].(obj)["timeout_ms"] = 3_600_000 },
			[]string{"tool b: timeout raised 10m0s (host default) → 1h0m0s"}, nil},
		{"tool timeout lowered", func(f obj) { f["tools"].([]any)[1].(obj)["timeout_ms"] = 60_000 },
			nil, []string{"tool b: timeout lowered 10m0s (host default) → 1m0s"}},
		{"narrowing", func(f obj) {
			f["tools"] = []any{obj{"name": "a", "description": "does a"}, obj{"name": "b"}}
			f["hooks"] = []any{}
			f["mcpServers"] = []any{}
			f["status"] = false
		}, nil, []string{"tool b: no longer never_defer", `hook pre_tool_use "a" removed`, "MCP server m removed", "opt-in status dropped"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			next := loadJSON(t, func(f obj) { base(f); tc.edit(f) })
			c := Diff(old, next)
			if d := cmp.Diff(tc.widen, c.Widening); d != "" {
				t.Errorf("widening (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.narrow, c.Narrowing); d != "" {
				t.Errorf("narrowing (-want +got):\n%s", d)
			}
			if c.Widens() != (len(tc.widen) > 0) {
				t.Errorf("Widens = %v", c.Widens())
			}
			for _, w := range tc.widen {
				if !strings.Contains(c.String(), "+ "+w) {
					t.Errorf("rendered diff lacks %q:\n%s", w, c)
				}
			}
		})
	}
	// A fresh install widens by everything it brings.
	fresh := Diff(nil, old)
	if !fresh.Widens() || !slices.Contains(fresh.Widening, "new tool a") || !slices.Contains(fresh.Widening, "new opt-in status") {
		t.Errorf("fresh install diff = %+v", fresh)
	}
	// The approved manifest round-trips through the lock without inventing
	// changes.
	b, _ := json.Marshal(old)
	var back Manifest
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if c := Diff(old, &back); !c.Empty() {
		t.Errorf("manifest JSON round trip changed the contribution: %s", c)
	}
}

// TestDiffToolTimeout: a longer bound on a tool call widens the grant, a
// shorter one narrows it; absent means the host default.
func TestDiffToolTimeout(t *testing.T) {
	with := func(ms int) *Manifest {
		return loadJSON(t, func(f obj) {
			tl := obj{"name": "a"}
			if ms > 0 {
				tl["timeout_ms"] = ms
			}
			f["tools"] = []any{tl}
		})
	}
	for _, tc := range []struct {
		from, to      int
		widen, narrow []string
		notes         []string
	}{
		{60_000, 120_000, []string{"tool a: timeout raised 1m0s → 2m0s"}, nil, nil},
		{120_000, 60_000, nil, []string{"tool a: timeout lowered 2m0s → 1m0s"}, nil},
		{60_000, 0, []string{"tool a: timeout raised 1m0s → 10m0s (host default)"}, nil, nil},
		{3_600_000, 0, nil, []string{"tool a: timeout lowered 1h0m0s → 10m0s (host default)"}, nil},
		{0, 600_000, nil, nil, []string{"tool a: timeout 10m0s (host default) → 10m0s"}},
		{60_000, 60_000, nil, nil, nil},
	} {
		c := Diff(with(tc.from), with(tc.to))
		if d := cmp.Diff(tc.widen, c.Widening); d != "" {
			t.Errorf("%d → %d ms: widening (-want +got):\n%s", tc.from, tc.to, d)
		}
		if d := cmp.Diff(tc.narrow, c.Narrowing); d != "" {
			t.Errorf("%d → %d ms: narrowing (-want +got):\n%s", tc.from, tc.to, d)
		}
		if d := cmp.Diff(tc.notes, c.Notes); d != "" {
			t.Errorf("%d → %d ms: notes (-want +got):\n%s", tc.from, tc.to, d)
		}
	}
	if fresh := Diff(nil, with(7_200_000)); !slices.Contains(fresh.Widening, "new tool a (timeout 2h0m0s)") {
		t.Errorf("fresh install = %q, want the tool's timeout named", fresh.Widening)
	}
}
