package repl_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"yolop.dev/harness/manager"
	"yolop.dev/harness/repl"
)

// TestArgsSummary: a tool's input schema renders as a compact argument
// form, properties in declared order, optional ones marked with ?.
func TestArgsSummary(t *testing.T) {
	for _, c := range []struct{ schema, want string }{
		{``, "{}"},
		{`{"type":"object"}`, "{}"},
		{`{"type":"object","properties":{}}`, "{}"},
		{`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`, "{text: string}"},
		// Declared order, not sorted; n is optional.
		{`{"type":"object","properties":{"path":{"type":"string"},"n":{"type":"integer"}},"required":["path"]}`, "{path: string, n?: integer}"},
		{`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}},"any":{}}}`, "{tags?: string[], any?: any}"},
		{`{"type":"object","properties":{"mode":{"type":"string","enum":["a","b"]},"on":{"const":true}},"required":["mode"]}`, `{mode: "a"|"b", on?: true}`},
		{`{"type":"object","properties":{"n":{"type":["integer","null"]},"opt":{"type":"object","properties":{"x":{"type":"string"}}}}}`, "{n?: integer, opt?: object}"},
		{`{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"number"},{"type":"null"}]},"ids":{"type":"array","items":{"enum":[1,2]}}}}`, "{v?: string|number, ids?: (1|2)[]}"},
		{`{"properties":{"q":{"type":"string"}},"required":["q"]}`, "{q: string}"},
		{`{"type":"object","properties":{"flag":true}}`, "{flag?: any}"},
		{`{"type":"string"}`, ""},
		{`not json`, ""},
	} {
		if got := repl.ArgsSummary(json.RawMessage(c.schema)); got != c.want {
			t.Errorf("ArgsSummary(%s) = %q, want %q", c.schema, got, c.want)
		}
	}
}

// TestPalette: over a real session with the echo example, the palette
// lists every built-in command with its argument form and a description,
// the extension's command as /echo:greet, and the tools with their
// argument summaries; /disable takes the extension's entries away once
// it applies.
func TestPalette(t *testing.T) {
	h, s := session(t)
	r := repl.New(repl.Options{Session: s.Session, Out: &recorder{}, Manager: func() (*manager.Manager, error) { return h.Manager(), nil }})
	t.Cleanup(r.Close)
	byName := map[string]repl.Entry{}
	var order []repl.EntryKind
	for _, e := range r.Palette() {
		if e.Description == "" && e.Kind != repl.KindTool {
			t.Errorf("%s has no description", e.Name)
		}
		byName[string(e.Kind)+" "+e.Name] = e
		if len(order) == 0 || order[len(order)-1] != e.Kind {
			order = append(order, e.Kind)
		}
	}
	if want := []repl.EntryKind{repl.KindCommand, repl.KindExtensionCommand, repl.KindTool}; strings.Join(kindStrings(order), ",") != strings.Join(kindStrings(want), ",") {
		t.Errorf("kinds in order %v, want %v (grouped)", order, want)
	}
	for _, c := range repl.Commands {
		if _, ok := byName["command "+c]; !ok {
			t.Errorf("built-in %s missing", c)
		}
	}
	if e := byName["command /call"]; e.Args != "<tool> [json]" || !e.NeedsArgs {
		t.Errorf("/call = %+v", e)
	}
	if e := byName["command /tools"]; e.Args != "" || e.NeedsArgs {
		t.Errorf("/tools = %+v", e)
	}
	if e := byName["command /skills"]; e.Args != "[name]" || e.NeedsArgs {
		t.Errorf("/skills = %+v (an optional argument)", e)
	}
	greet, ok := byName["extension /echo:greet"]
	if !ok || greet.Description != "Greet someone: /echo:greet <name>" || greet.NeedsArgs {
		t.Errorf("/echo:greet = %+v", greet)
	}
	echo := byName["tool echo"]
	if echo.Args != "{text: string}" || !echo.NeedsArgs || echo.Description != "Return the given text unchanged." || !json.Valid(echo.Schema) {
		t.Errorf("tool echo = %+v", echo)
	}
	// The host keeps the schema re-encoded, its keys sorted: the summary
	// follows the schema it is given.
	if count := byName["tool count"]; count.Args != "{delay_ms?: integer, n?: integer}" || count.NeedsArgs {
		t.Errorf("tool count = %+v", count)
	}

	// /disable queues; the next command applies it, and the palette
	// follows.
	ctx := context.Background()
	r.Run(ctx, "/disable echo")
	r.Run(ctx, "/tools")
	for _, e := range r.Palette() {
		if e.Name == "/echo:greet" || (e.Kind == repl.KindTool && e.Name == "echo") {
			t.Errorf("after /disable echo the palette still has %s", e.Name)
		}
	}
}

func kindStrings(ks []repl.EntryKind) []string {
	var out []string
	for _, k := range ks {
		out = append(out, string(k))
	}
	return out
}
