package config

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/packaging"
)

func secretTool(f *fixture, ask host.AskSink, scrub *Scrubber, saved *[]string) *SecretTool {
	return NewSecretTool(SecretToolOptions{
		Secrets: f.sec,
		Ask:     ask,
		Manifest: func(ctx context.Context, name string) (*packaging.Manifest, error) {
			if name != f.m.Name {
				return nil, errors.New("extension " + name + " is not installed")
			}
			return f.m, nil
		},
		Scrubber: scrub,
		OnSaved: func(ctx context.Context, m *packaging.Manifest) error {
			*saved = append(*saved, m.Name)
			return nil
		},
	})
}

func call(t *testing.T, c host.Capability, args string) yep.ToolResult {
	t.Helper()
	res, err := c.CallTool(context.Background(), host.ToolCall{ID: "1", Name: SecretToolName, Args: json.RawMessage(args)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestSetExtensionSecretRefusesAgentValueAndAsksTheUser(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ask := answers(token)
	scrub := NewScrubber()
	var saved []string
	tool := secretTool(f, ask, scrub, &saved)
	if tools := tool.Tools(); len(tools) != 1 || tools[0].Name != SecretToolName || strings.Contains(string(tools[0].InputSchema), `"value"`) {
		t.Fatalf("tools = %+v", tools)
	}

	// An agent-passed value is refused, never echoed, never stored, and
	// nobody is asked.
	for _, args := range []string{
		`{"extension":"cfgtest","field":"token","value":"tok-from-agent"}`,
		`{"extension":"cfgtest","field":"token","secret":"tok-from-agent"}`,
	} {
		res := call(t, tool, args)
		if !res.IsError || !strings.Contains(res.Output, "refused") || strings.Contains(res.Output, "tok-from-agent") {
			t.Errorf("agent value: %+v", res)
		}
	}
	if len(ask.asked) != 0 {
		t.Fatal("asked the user despite refusing")
	}
	if _, ok, _ := f.sec.Get(ctx, "cfgtest", "token"); ok {
		t.Fatal("an agent value was stored")
	}
	// Not a secret field, unknown field, unknown extension.
	for args, want := range map[string]string{
		`{"extension":"cfgtest","field":"mode"}`: "not a secret",
		`{"extension":"cfgtest","field":"nope"}`: "its secret fields: token",
		`{"extension":"absent","field":"token"}`: "not installed",
		`{"extension":"cfgtest"}`:                "needs extension and field",
	} {
		if res := call(t, tool, args); !res.IsError || !strings.Contains(res.Output, want) {
			t.Errorf("%s: %+v", args, res)
		}
	}
	// The real path: the user is asked with secret: true.
	res := call(t, tool, `{"extension":"cfgtest","field":"token"}`)
	if res.IsError || !strings.HasPrefix(res.Output, "(saved)") || strings.Contains(res.Output, token) {
		t.Fatalf("result = %+v", res)
	}
	if len(ask.asked) != 1 || !ask.asked[0].Secret {
		t.Fatalf("questions = %+v", ask.asked)
	}
	s, ok, _ := f.sec.Get(ctx, "cfgtest", "token")
	if !ok || s.Reveal() != token {
		t.Error("the answer was not stored")
	}
	if scrub.Scrub(token) != "[redacted:cfgtest.token]" {
		t.Error("the scrubber did not learn the new value")
	}
	if len(saved) != 1 {
		t.Errorf("OnSaved ran %d times", len(saved))
	}
	// Cancelled: nothing changes.
	res = call(t, tool, `{"extension":"cfgtest","field":"token"}`)
	if !res.IsError || !strings.Contains(res.Output, "cancelled") {
		t.Errorf("cancelled: %+v", res)
	}
	// No sink: the tool says how to set it from a terminal.
	res = call(t, secretTool(f, nil, nil, &saved), `{"extension":"cfgtest","field":"token"}`)
	if !res.IsError || !strings.Contains(res.Output, "yolop ext secret set cfgtest token") {
		t.Errorf("no sink: %+v", res)
	}
}
