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

// diffBase is a manifest with something in every section Diff compares.
func diffBase() *Manifest {
	return &Manifest{Name: "demo", Version: "1.0.0", Description: "d", Yolop: &Facet{
		ProtocolVersion:  "1.0",
		CapabilityServer: &ServerCommand{Command: "srv", Args: []string{"-v"}, Env: map[string]string{"A": "1", "B": "2"}},
		Tools: []Tool{
			{Name: "a", Description: "does a", InputSchema: json.RawMessage(`{"type":"object"}`), Approval: "ask", Risk: "low", Narration: "n"},
			{Name: "b", NeverDefer: true, Streaming: true},
		},
		Hooks:      []Hook{{Event: "pre_tool_use", Matcher: "a", TimeoutMS: 100}, {Event: "post_tool_use", Matcher: "b"}},
		MCPServers: []MCPServer{{Name: "m", Type: "stdio", Command: "mcp", Env: map[string]string{"K": "v"}}, {Name: "w", Type: "http", URL: "https://a"}},
		Prompt:     &Prompt{Text: "short", Dynamic: true, MaxBytes: 100},
		Commands:   []Command{{Name: "go"}, {Name: "stop"}},
		Skills:     true,
		Status:     true,
		ConfigSchema: json.RawMessage(`{"type":"object","properties":{
			"plain":{"type":"string"},
			"tok":{"type":"string","secret":true}}}`),
		Artifacts: map[string]Artifact{"x86_64-unknown-linux-gnu": {URL: "a", SHA256: "1"}, "aarch64-apple-darwin": {URL: "b", SHA256: "2"}},
	}}
}

// TestDiffEverySection pins each section of the contribution diff: what
// widens, narrows or is only noted, and in what order.
func TestDiffEverySection(t *testing.T) {
	for _, tc := range []struct {
		name      string
		edit      func(old, next *Manifest)
		want      Change
		freshOnly bool
	}{
		{name: "identity", edit: func(_, n *Manifest) {
			n.Name, n.Version, n.Description, n.Yolop.ProtocolVersion = "demo2", "1.1.0", "e", "1.1"
		}, want: Change{Notes: []string{"name demo → demo2", "version 1.0.0 → 1.1.0", "description changed", "protocol_version 1.0 → 1.1"}}},
		{name: "server removed", edit: func(_, n *Manifest) { n.Yolop.CapabilityServer = nil },
			want: Change{Narrowing: []string{"no capability server any more"}}},
		{name: "server added", edit: func(o, _ *Manifest) { o.Yolop.CapabilityServer = nil },
			want: Change{Widening: []string{`server command "srv" "-v"`, "server env A, B"}}},
		{name: "server args and env", edit: func(_, n *Manifest) {
			n.Yolop.CapabilityServer = &ServerCommand{Command: "srv", Args: []string{"-v", "-x"}, Env: map[string]string{"B": "3", "C": "4"}}
		}, want: Change{
			Widening:  []string{`server command changed: "srv" "-v" → "srv" "-v" "-x"`, "server env B changed", "server env C added"},
			Narrowing: []string{"server env A removed"},
		}},
		{name: "tool policy", edit: func(_, n *Manifest) {
			a := &n.Yolop.Tools[0]
			a.InputSchema = json.RawMessage(`{ "type": "object" }`) // only whitespace: no change
			a.NeverDefer, a.Streaming, a.Approval, a.Risk, a.Narration = true, true, "auto", "high", "m"
		}, want: Change{Widening: []string{"tool a: now never_defer", "tool a: now streaming", `tool a: approval hint "ask" → "auto"`, `tool a: risk hint "low" → "high"`, "tool a: narration changed"}}},
		{name: "tools added and removed", edit: func(_, n *Manifest) {
			a := n.Yolop.Tools[0]
			a.InputSchema = json.RawMessage(`{"type":"string"}`)
			n.Yolop.Tools = []Tool{a, {Name: "c", NeverDefer: true, TimeoutMS: 60_000}}
		}, want: Change{
			Widening:  []string{"tool a: input schema changed", "new tool c (never_defer, timeout 1m0s)"},
			Narrowing: []string{"tool b removed"},
		}},
		{name: "tool policy dropped", edit: func(_, n *Manifest) {
			n.Yolop.Tools[1].NeverDefer, n.Yolop.Tools[1].Streaming = false, false
		}, want: Change{Narrowing: []string{"tool b: no longer never_defer", "tool b: no longer streaming"}}},
		{name: "hooks", edit: func(_, n *Manifest) {
			n.Yolop.Hooks = []Hook{{Event: "pre_tool_use", Matcher: "a", TimeoutMS: 200, OnError: "block"}, {Event: "pre_tool_use", Matcher: "c"}, {Event: "post_tool_use", Matcher: "*"}}
		}, want: Change{
			Widening: []string{`hook pre_tool_use "a": on_error warn → block`, `hook pre_tool_use "a": timeout_ms 100 → 200`,
				`new hook pre_tool_use "c"`, `new hook post_tool_use "*" — MATCHES EVERY TOOL CALL`},
			Narrowing: []string{`hook post_tool_use "b" removed`},
		}},
		{name: "MCP servers", edit: func(_, n *Manifest) {
			n.Yolop.MCPServers = []MCPServer{{Name: "m", Type: "stdio", Command: "mcp", Env: map[string]string{"J": "x"}}, {Name: "n", Type: "http", URL: "https://n"}}
		}, want: Change{
			Widening:  []string{"MCP server m env J added", "new MCP server n (http https://n)"},
			Narrowing: []string{"MCP server m env K removed", "MCP server w removed"},
		}},
		{name: "prompt removed", edit: func(_, n *Manifest) { n.Yolop.Prompt = nil },
			want: Change{Narrowing: []string{"prompt removed"}}},
		{name: "prompt narrowed", edit: func(_, n *Manifest) { n.Yolop.Prompt = &Prompt{Text: "short", MaxBytes: 50} },
			want: Change{Narrowing: []string{"prompt is no longer dynamic", "prompt max_bytes 100 bytes → 50 bytes"}}},
		{name: "prompt widened", edit: func(_, n *Manifest) { n.Yolop.Prompt = &Prompt{Text: "other", Dynamic: true} },
			want: Change{Widening: []string{"prompt text changed (5 → 5 bytes)", "prompt max_bytes 100 bytes → host default"}}},
		{name: "prompt added", edit: func(o, n *Manifest) { o.Yolop.Prompt, n.Yolop.Prompt = nil, &Prompt{Text: "static"} },
			want: Change{Widening: []string{"new prompt text (6 bytes)"}}},
		{name: "commands", edit: func(_, n *Manifest) { n.Yolop.Commands = []Command{{Name: "go"}, {Name: "run"}} },
			want: Change{Widening: []string{"new command demo:run"}, Narrowing: []string{"command stop removed"}}},
		{name: "opt-ins", edit: func(_, n *Manifest) {
			n.Yolop.Skills, n.Yolop.Status, n.Yolop.UIAsk, n.Yolop.Trace = false, false, true, true
		}, want: Change{Widening: []string{"new opt-in ui_ask", "new opt-in trace"}, Narrowing: []string{"opt-in skills dropped", "opt-in status dropped"}}},
		{name: "config fields", edit: func(_, n *Manifest) {
			n.Yolop.ConfigSchema = json.RawMessage(`{"type":"object","properties":{
				"tok":{"type":"string"},
				"key":{"type":"string","secret":true,"env":"KEY"},
				"mode":{"type":"string"}}}`)
		}, want: Change{
			Widening: []string{"config field tok: now plain", "new config field key (secret, env KEY)"},
			Notes:    []string{"new config field mode", "config field plain removed"},
		}},
		{name: "config schema without fields", edit: func(o, n *Manifest) {
			o.Yolop.ConfigSchema = json.RawMessage(`{"type":"object"}`)
			n.Yolop.ConfigSchema = json.RawMessage(`{"type":"object","additionalProperties":false}`)
		}, want: Change{Notes: []string{"config schema changed"}}},
		{name: "artifacts", edit: func(_, n *Manifest) {
			n.Yolop.Artifacts = map[string]Artifact{"x86_64-unknown-linux-gnu": {URL: "a", SHA256: "3"}, "x86_64-pc-windows-msvc": {URL: "c", SHA256: "4"}}
		}, want: Change{
			Widening:  []string{"new prebuilt binary for x86_64-pc-windows-msvc", "prebuilt binary for x86_64-unknown-linux-gnu changed"},
			Narrowing: []string{"prebuilt binary for aarch64-apple-darwin removed"},
		}},
		{name: "fresh install", freshOnly: true, want: Change{
			Widening: []string{"new extension demo", `server command "srv" "-v"`, "server env A, B",
				"new tool a", "new tool b (never_defer)", `new hook pre_tool_use "a"`, `new hook post_tool_use "b"`,
				`new MCP server m (stdio "mcp")`, "new MCP server w (http https://a)",
				"new dynamic prompt (5 bytes static, max 100 bytes per turn)", "new command demo:go", "new command demo:stop",
				"new opt-in skills", "new opt-in status", "new config field tok (secret)",
				"new prebuilt binary for aarch64-apple-darwin", "new prebuilt binary for x86_64-unknown-linux-gnu"},
			Notes: []string{"new config field plain"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, next := diffBase(), diffBase()
			if tc.freshOnly {
				old = nil
			} else {
				tc.edit(old, next)
			}
			if d := cmp.Diff(tc.want, Diff(old, next)); d != "" {
				t.Errorf("Diff (-want +got):\n%s", d)
			}
		})
	}
}
