package repl_test

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"yolop.dev/agent/tokens"
	"yolop.dev/harness/repl"
	"yolop.dev/packaging"
)

// /status shows what each extension adds to every model request: the
// echo example's count, from the session's tools, prompt and skills,
// equals tokens.Of of its manifest.
func TestStatusShowsContext(t *testing.T) {
	m, err := packaging.Load(filepath.Join("..", "..", "core", "examples", "echo"))
	if err != nil {
		t.Fatal(err)
	}
	var tools []tokens.Tool
	for _, tl := range m.Yolop.Tools {
		tools = append(tools, tokens.Tool{Name: tl.Name, Description: tl.Description, InputSchema: tl.InputSchema, Deferred: !tl.NeverDefer})
	}
	want := tokens.Of("echo", tools, m.Yolop.Prompt.Text, nil)
	if want.Tools == 0 || want.Prompt == 0 {
		t.Fatalf("echo costs %+v: want its tools and prompt counted", want)
	}

	_, s := session(t)
	// The prompt is counted as the system prompt carries it.
	segment := "<capability name=\"ext:echo\">\n" + strings.TrimSpace(m.Yolop.Prompt.Text) + "\n</capability>\n"
	if sp := s.Session.SystemPrompt(context.Background(), "BASE"); !strings.Contains(sp+"\n", segment) {
		t.Fatalf("the system prompt\n%s\nhas no segment %q: tokens.Of counts the prompt in a wrapper the session no longer uses", sp, segment)
	}
	out := &recorder{}
	r := repl.New(repl.Options{Session: s.Session, Out: out})
	defer r.Close()
	r.Run(context.Background(), "/status")
	ev, _ := out.take()
	if len(ev) != 1 || ev[0].fields["extension"] != "echo" {
		t.Fatalf("/status = %+v", ev)
	}
	if got := ev[0].fields["tokens"]; got != want.Total() {
		t.Fatalf("/status tokens = %v, want %d", got, want.Total())
	}
	if got := ev[0].fields["context"]; got != want {
		t.Fatalf("/status context = %+v, want %+v", got, want)
	}
	if !strings.Contains(ev[0].text, " tokens="+strconv.Itoa(want.Total())) {
		t.Fatalf("/status text = %q, want tokens=%d", ev[0].text, want.Total())
	}
}
