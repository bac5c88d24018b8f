package tokens_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"yolop.dev/agent/tokens"
)

const childEnv = "YOLOP_TOKENS_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		// The child of TestCountIsOffline: count, print, exit.
		fmt.Println(tokens.Count("The quick brown fox jumps over the lazy dog."))
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// The figures were checked against an independent o200k_base
// implementation (the js-tiktoken npm package, 1.0.21), which ships its
// own copy of the encoding: they are facts of the encoding, not of this
// package.
func TestCountExact(t *testing.T) {
	for text, want := range map[string]int{
		"":            0,
		"hello world": 2,
		"The quick brown fox jumps over the lazy dog.":                               10,
		"Context economics: how many tokens does an extension add to every request?": 14,
		"日本語のテキストも数えます。":                                                             11,
	} {
		if got := tokens.Count(text); got != want {
			t.Errorf("Count(%q) = %d, want %d", text, got, want)
		}
	}
	// A special token is counted as the text it is, never as one token.
	if got := tokens.Count("<|endoftext|>"); got != 7 {
		t.Errorf("Count(<|endoftext|>) = %d, want 7, the plain text", got)
	}
}

// Count is deterministic and safe for concurrent use, the first load
// included (run with -race).
func TestCountConcurrent(t *testing.T) {
	// The last text's trailing space is a token of its own: 2×200+1.
	texts := []string{"hello world", "The quick brown fox jumps over the lazy dog.", strings.Repeat("tool schema ", 200)}
	want := []int{2, 10, 401}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := range 64 {
		wg.Go(func() {
			k := i % len(texts)
			if got := tokens.Count(texts[k]); got != want[k] {
				errs <- fmt.Sprintf("Count(%.20q…) = %d, want %d", texts[k], got, want[k])
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// The encoding is embedded: counting in a fresh process whose every HTTP
// request would go through a proxy we watch, with an empty tiktoken
// cache, makes no request and still counts exactly.
func TestCountIsOffline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			select {
			case conns <- line:
			default:
			}
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })

	proxy := "http://" + ln.Addr().String()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", "HTTP_PROXY="+proxy, "HTTPS_PROXY="+proxy, "http_proxy="+proxy, "https_proxy="+proxy,
		"NO_PROXY=", "no_proxy=", "TIKTOKEN_CACHE_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if n, err := strconv.Atoi(strings.TrimSpace(string(out))); err != nil || n != 10 {
		t.Fatalf("child counted %q, want 10", out)
	}
	select {
	case req := <-conns:
		t.Fatalf("counting made a network request through the proxy: %q", req)
	default:
	}
}

func TestToolTokens(t *testing.T) {
	bare := tokens.ToolTokens("echo", "Return the given text unchanged.", []byte(`{"type":"object"}`))
	if want := tokens.Count("echo") + tokens.Count("Return the given text unchanged.") + tokens.Count(`{"type":"object"}`); bare != want {
		t.Fatalf("ToolTokens = %d, want name + description + schema = %d", bare, want)
	}
	schema := `{"type":"object","properties":{"text":{"type":"string","description":"Text to return."}},"required":["text"]}`
	full := tokens.ToolTokens("echo", "Return the given text unchanged.", []byte(schema))
	if full <= bare {
		t.Fatalf("a larger schema costs %d, no more than the bare one's %d", full, bare)
	}
	// The schema counts as compact JSON: a manifest's indentation is not
	// what the provider receives.
	indented := "{\n  \"type\": \"object\",\n  \"properties\": {\n    \"text\": {\"type\": \"string\", \"description\": \"Text to return.\"}\n  },\n  \"required\": [\"text\"]\n}"
	if got := tokens.ToolTokens("echo", "Return the given text unchanged.", []byte(indented)); got != full {
		t.Fatalf("indented schema costs %d, compact %d: whitespace must not count", got, full)
	}
	// A schema that is not JSON counts as it is, and nothing is free.
	if got := tokens.ToolTokens("t", "", []byte("{not json")); got != tokens.Count("t")+tokens.Count("{not json") {
		t.Fatalf("invalid schema counted %d", got)
	}
}

func TestOf(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"n":{"type":"integer"}}}`)
	tools := []tokens.Tool{
		{Name: "count", Description: "Count to n.", InputSchema: schema},
		{Name: "deep", Description: "Rarely needed.", InputSchema: schema, Deferred: true},
	}
	skills := []tokens.Skill{{Name: "review", Description: "Review a change for bugs."}}
	c := tokens.Of("echo", tools, "  Call count to count.\n", skills)
	want := tokens.Cost{
		Tools:    tokens.ToolTokens("count", "Count to n.", schema),
		Deferred: tokens.ToolTokens("deep", "Rarely needed.", schema),
		Prompt:   tokens.Count("<capability name=\"ext:echo\">\nCall count to count.\n</capability>\n"),
		Skills:   tokens.Count("review (echo): Review a change for bugs.\n"),
	}
	if c != want {
		t.Fatalf("Of = %+v, want %+v", c, want)
	}
	if c.Total() != want.Tools+want.Prompt+want.Skills {
		t.Fatalf("Total = %d leaves out or adds to tools, prompt and skills", c.Total())
	}
	if got := tokens.Of("none", nil, " \n", nil); got != (tokens.Cost{}) {
		t.Fatalf("an extension with nothing to add costs %+v", got)
	}
}

func TestCostString(t *testing.T) {
	c := tokens.Cost{Tools: 1000, Prompt: 200, Skills: 34}
	if got, want := c.String(), "~1,234 tokens per request (tools 1,000, prompt 200, skills 34)"; got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
	c = tokens.Cost{Tools: 5, Deferred: 1234567}
	if got, want := c.String(), "~5 tokens per request (tools 5, prompt 0, skills 0); up to 1,234,567 more once tool_search finds its deferred tools"; got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
}
