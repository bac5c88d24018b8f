// Package tokens counts what text costs in a model request, so a user can
// see how much of every request an extension takes: its tool schemas, its
// prompt text and its skills index.
//
// Counts use the o200k_base encoding of OpenAI's GPT-4o and GPT-4.1
// models, through github.com/pkoukk/tiktoken-go with the encoding embedded
// in the binary (github.com/pkoukk/tiktoken-go-loader): nothing is
// downloaded, ever. For those models a count is exact for the text given.
// For Anthropic's models, and any other, it is an approximation: Claude's
// tokenizer is not public, and its count of the same text differs by an
// amount that depends on the text. Either way a count is of the text as
// this package is given it; a provider adds a few tokens of its own
// framing per message and per tool.
package tokens

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// Encoding is the encoding every count uses.
const Encoding = "o200k_base"

// encoder loads the encoding once, on the first count. The offline loader
// reads the embedded ranks; tiktoken's default loader would fetch them
// over HTTPS, so it is replaced before anything is loaded.
var encoder = sync.OnceValues(func() (*tiktoken.Tiktoken, error) {
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding(Encoding)
	if err != nil {
		return nil, fmt.Errorf("loading the embedded %s token encoding: %w", Encoding, err)
	}
	return enc, nil
})

// Count returns the number of tokens text encodes to. It is safe for
// concurrent use; the first call loads the encoding. Special tokens such
// as <|endoftext|> count as the plain text they are. Should the embedded
// encoding ever fail to load (it is compiled in, so it does not), Count
// falls back to an estimate: one token per four bytes, rounded up, the
// usual rule of thumb for English and JSON.
func Count(text string) int {
	if text == "" {
		return 0
	}
	enc, err := encoder()
	if err != nil {
		return (len(text) + 3) / 4
	}
	return len(enc.EncodeOrdinary(text))
}

// A Tool is one tool as a provider receives it.
type Tool struct {
	Name        string
	Description string
	// InputSchema is the tool's JSON Schema, as the manifest declares it.
	InputSchema []byte
	// Deferred tools are not sent with every request: the model finds
	// them through tool_search, and they are sent from then on.
	Deferred bool
}

// ToolTokens counts one tool as a provider receives it: its name, its
// description and its input schema as compact JSON (the provider SDKs
// re-encode the schema, so the manifest's whitespace does not count; a
// schema that is not valid JSON counts as given). The few tokens of the
// provider's own framing around each tool are not counted.
func ToolTokens(name, description string, inputSchema []byte) int {
	schema := inputSchema
	var compact bytes.Buffer
	if err := json.Compact(&compact, inputSchema); err == nil {
		schema = compact.Bytes()
	}
	return Count(name) + Count(description) + Count(string(schema))
}

// A Cost is what one extension adds to a model request, in tokens.
type Cost struct {
	// Tools are the tools sent with every request (never_defer).
	Tools int `json:"tools"`
	// Deferred are the deferred tools, sent only once tool_search has
	// found them; not part of [Cost.Total].
	Deferred int `json:"deferred"`
	// Prompt is the extension's system-prompt contribution.
	Prompt int `json:"prompt"`
	// Skills is the extension's lines of the skills index.
	Skills int `json:"skills"`
}

// Total is what every request carries: tools, prompt and skills.
func (c Cost) Total() int { return c.Tools + c.Prompt + c.Skills }

// String renders c for a person:
//
//	~1,234 tokens per request (tools 1,000, prompt 200, skills 34)
//
// followed, when there are deferred tools, by "; up to N more once
// tool_search finds its deferred tools".
func (c Cost) String() string {
	s := fmt.Sprintf("~%s tokens per request (tools %s, prompt %s, skills %s)",
		Thousands(c.Total()), Thousands(c.Tools), Thousands(c.Prompt), Thousands(c.Skills))
	if c.Deferred > 0 {
		s += fmt.Sprintf("; up to %s more once tool_search finds its deferred tools", Thousands(c.Deferred))
	}
	return s
}

// A Skill is one skill as the skills index lists it.
type Skill struct {
	Name, Description string
}

// Of counts what extension ext adds to a request:
//   - each tool as [ToolTokens] counts it, never_defer ones in Tools and
//     deferred ones in Deferred;
//   - the prompt as the session's system prompt carries it, inside a
//     <capability name="ext:<ext>"> element, trimmed; an empty prompt
//     costs nothing;
//   - each skill as a line of the skills index the model reads
//     (list_skills): "<name> (<ext>): <description>".
func Of(ext string, tools []Tool, prompt string, skills []Skill) Cost {
	var c Cost
	for _, t := range tools {
		n := ToolTokens(t.Name, t.Description, t.InputSchema)
		if t.Deferred {
			c.Deferred += n
		} else {
			c.Tools += n
		}
	}
	if p := strings.TrimSpace(prompt); p != "" {
		c.Prompt = Count(fmt.Sprintf("<capability name=%q>\n%s\n</capability>\n", "ext:"+ext, p))
	}
	var index strings.Builder
	for _, sk := range skills {
		fmt.Fprintf(&index, "%s (%s): %s\n", sk.Name, ext, sk.Description)
	}
	c.Skills = Count(index.String())
	return c
}

// Thousands writes a count with a comma between groups of three digits,
// as [Cost.String] does.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
