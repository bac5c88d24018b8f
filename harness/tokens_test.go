package harness_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"yolop.dev/agent/tokens"
	"yolop.dev/core/skill"
	"yolop.dev/harness"
	"yolop.dev/harness/internal/echotest"
	"yolop.dev/harness/manager"
	"yolop.dev/packaging"
)

// echoManifest reads core's echo example, the manifest these tests count.
func echoManifest(t *testing.T) *packaging.Manifest {
	t.Helper()
	m, err := packaging.Load(filepath.Join("..", "core", "examples", "echo"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// echoCost is what the echo example adds to a request, counted from its
// manifest by tokens.Of directly: never_defer tools, a deferred one and a
// static prompt, no skills.
func echoCost(t *testing.T, m *packaging.Manifest) tokens.Cost {
	t.Helper()
	var tools []tokens.Tool
	for _, tl := range m.Yolop.Tools {
		tools = append(tools, tokens.Tool{Name: tl.Name, Description: tl.Description, InputSchema: tl.InputSchema, Deferred: !tl.NeverDefer})
	}
	c := tokens.Of("echo", tools, m.Yolop.Prompt.Text, nil)
	if c.Tools == 0 || c.Prompt == 0 || c.Skills != 0 {
		t.Fatalf("echo costs %+v: want tools and prompt counted, no skills", c)
	}
	return c
}

func TestManifestCost(t *testing.T) {
	m := echoManifest(t)
	if got, want := harness.ManifestCost(m), echoCost(t, m); got != want {
		t.Fatalf("ManifestCost(echo) = %+v, want %+v", got, want)
	}
	// Deferred tools and skills land in their own fields.
	deferred := harness.ManifestCost(m).Deferred
	m.Yolop.Tools[1].NeverDefer = false
	m.Skills = append(m.Skills, skill.Meta{Name: "review", Description: "Review a change."})
	c := harness.ManifestCost(m)
	if c.Deferred <= deferred || c.Skills != tokens.Count("review (echo): Review a change.\n") {
		t.Fatalf("with a deferred tool and a skill: %+v", c)
	}
	if got := harness.ManifestCost(&packaging.Manifest{Name: "plain", Version: "1.0.0"}); got != (tokens.Cost{}) {
		t.Fatalf("a plain plugin costs %+v", got)
	}
}

// The consent summary a line front-end shows ends with what the extension
// will cost every request; an update also says what it cost before.
func TestLineConsentShowsContext(t *testing.T) {
	ctx := context.Background()
	m := echoManifest(t)
	want := echoCost(t, m)
	var out strings.Builder
	p := manager.Proposal{Name: "echo", Fresh: true, Next: m, Text: packaging.Summary(m)}
	if err := harness.LineConsent(&out, true, "", nil)(ctx, p); err != nil {
		t.Fatal(err)
	}
	line := "  Context: " + want.String() + "\n"
	if !strings.Contains(out.String(), packaging.Summary(m)+line+"Install echo: approved with --yes\n") {
		t.Fatalf("consent shows:\n%s\nwant the summary, then %q", out.String(), line)
	}

	prev := echoManifest(t)
	prev.Yolop.Tools = prev.Yolop.Tools[:1]
	out.Reset()
	p = manager.Proposal{Name: "echo", Next: m, Prev: prev, Text: "+ tool count\n"}
	if err := harness.LineConsent(&out, true, "", nil)(ctx, p); err != nil {
		t.Fatal(err)
	}
	was := harness.ManifestCost(prev).Total()
	if was >= want.Total() || was >= 1000 {
		t.Fatalf("one tool fewer costs %d: want less than %d, and under 1,000 to print without a comma", was, want.Total())
	}
	if got := out.String(); !strings.Contains(got, "+ tool count\n  Context: "+want.String()+", was ~"+strconv.Itoa(was)+"\n") {
		t.Fatalf("update consent shows:\n%s", got)
	}
}

// ext info shows the cost, in its text and its JSON, for a package
// directory and for an installed extension (counted from the approved
// manifest).
func TestInfoShowsContext(t *testing.T) {
	ctx := context.Background()
	want := echoCost(t, echoManifest(t))
	check := func(name string, in *harness.Info) {
		t.Helper()
		if in.Context != want {
			t.Fatalf("%s: Info.Context = %+v, want %+v", name, in.Context, want)
		}
		if line := "\n  context:  " + want.String() + "\n"; !strings.Contains(in.Text(), line) {
			t.Fatalf("%s: Text() =\n%s\nwant the line %q", name, in.Text(), line)
		}
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var js struct{ Context map[string]int }
		if err := json.Unmarshal(b, &js); err != nil {
			t.Fatal(err)
		}
		if w := map[string]int{"tools": want.Tools, "deferred": want.Deferred, "prompt": want.Prompt, "skills": 0}; !equalCounts(js.Context, w) {
			t.Fatalf("%s: JSON context = %v, want %v", name, js.Context, w)
		}
	}

	h, err := harness.Open(ctx, harness.Options{ConfigDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	in, err := h.Info(ctx, filepath.Join("..", "core", "examples", "echo"), "")
	if err != nil {
		t.Fatal(err)
	}
	check("package directory", in)

	h, err = harness.Open(ctx, harness.Options{ConfigDir: echotest.Installed(t)})
	if err != nil {
		t.Fatal(err)
	}
	if in, err = h.Info(ctx, "echo", ""); err != nil || !in.Installed {
		t.Fatalf("info echo: %+v, %v", in, err)
	}
	check("installed", in)
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range b {
		if n, ok := a[k]; !ok || n != v {
			return false
		}
	}
	return true
}
