package scripted

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// A Script is what a [Server] answers from: an ordered list of steps.
// The package documentation describes its JSON form.
type Script struct {
	// Model is the model GET /v1/models lists; empty means "scripted".
	Model string `json:"model,omitempty"`
	// Steps are matched in order, one request each (see [Step.Repeat]).
	Steps []Step `json:"steps"`
}

// A Step answers one request that matches When with Reply.
type Step struct {
	// Name labels the step in error messages; empty names it by number.
	Name string `json:"name,omitempty"`
	When When   `json:"when"`
	// Reply is the assistant's answer.
	Reply Reply `json:"reply"`
	// Repeat keeps the step answering while requests match it.
	Repeat bool `json:"repeat,omitempty"`
}

// When says which request a step answers. Exactly one of Any, User and
// ToolResult is set; Offered may be added to any of them.
type When struct {
	// Any matches every request.
	Any bool `json:"any,omitempty"`
	// User, when set, matches a request whose last message is a user
	// message containing *User ("" matches any user message).
	User *string `json:"user,omitempty"`
	// ToolResult matches a request that ends with tool results, one of
	// which matches it.
	ToolResult *ToolResultMatch `json:"tool_result,omitempty"`
	// Offered lists tool names the request must offer in its tools.
	Offered []string `json:"offered,omitempty"`
}

// A ToolResultMatch matches a tool result by the name of the tool whose
// call it answers and by its text.
type ToolResultMatch struct {
	// Tool is the tool's name; empty matches any tool.
	Tool string `json:"tool,omitempty"`
	// Contains must occur in the result's text; empty matches any text.
	Contains string `json:"contains,omitempty"`
}

// A Reply is the assistant message a step answers with.
type Reply struct {
	// Text is the assistant's text; empty sends none.
	Text string `json:"text,omitempty"`
	// ToolCalls are the calls the assistant makes, in parallel when several.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// FinishReason is "stop", "tool_calls", "length" or "content_filter";
	// empty means "tool_calls" when there are tool calls, "stop" otherwise.
	FinishReason string `json:"finish_reason,omitempty"`
	// Usage is the token usage reported; nil estimates it at four bytes a
	// token of the request body and of the reply.
	Usage *Usage `json:"usage,omitempty"`
	// Error, when set, answers with this HTTP error instead of a
	// completion (then Text and ToolCalls must be empty).
	Error *ErrorReply `json:"error,omitempty"`
	// StreamError, when set, ends a streamed answer after its text and
	// tool calls with an error event of this message instead of a finish
	// reason, usage and [DONE], as the real API does when a stream fails.
	// A request that is not streamed is answered 500 with it.
	StreamError string `json:"stream_error,omitempty"`
}

// An ErrorReply is an HTTP error a step answers with, in OpenAI's error
// shape.
type ErrorReply struct {
	// Status is the HTTP status, 400 to 599; zero means 500.
	Status int `json:"status,omitempty"`
	// Type is the error's type; empty chooses one from the status
	// ("invalid_request_error" or "server_error" for OpenAI, Anthropic's
	// type for the status on /v1/messages).
	Type string `json:"type,omitempty"`
	// Code is the error's code; empty sends null.
	Code string `json:"code,omitempty"`
	// Message is the error's message.
	Message string `json:"message"`
}

// A ToolCall is one function call in a [Reply].
type ToolCall struct {
	// ID is the call's id; empty means call_<step>_<n>, counted from 1.
	ID string `json:"id,omitempty"`
	// Name is the function's name.
	Name string `json:"name"`
	// Arguments is sent as the call's arguments: a JSON string verbatim
	// (which may be anything, even invalid JSON), any other JSON value
	// compacted. Absent means {}.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Usage is the token usage a [Reply] reports.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	// CachedTokens is reported as prompt_tokens_details.cached_tokens.
	CachedTokens int64 `json:"cached_tokens,omitempty"`
}

// Parse reads a script from its JSON form and checks it. Unknown fields
// are refused, so a misspelt matcher is an error rather than a step that
// matches everything.
func Parse(data []byte) (*Script, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("scripted: parse script: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("scripted: parse script: data after the script's JSON object")
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// Load reads and checks the script in the file at path.
func Load(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scripted: load script: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Validate reports the first thing wrong with the script: no steps, a step
// with no or several matchers, an empty reply, a tool call without a name
// or with arguments that are not JSON, an unknown finish reason, negative
// usage.
func (s *Script) Validate() error {
	if len(s.Steps) == 0 {
		return errors.New("scripted: the script has no steps")
	}
	for i := range s.Steps {
		if err := s.Steps[i].validate(); err != nil {
			return fmt.Errorf("scripted: %s: %w", s.Steps[i].label(i), err)
		}
	}
	return nil
}

func (st *Step) validate() error {
	n := 0
	if st.When.Any {
		n++
	}
	if st.When.User != nil {
		n++
	}
	if st.When.ToolResult != nil {
		n++
	}
	if n != 1 {
		return fmt.Errorf(`"when" must hold exactly one of "any", "user" and "tool_result" (it holds %d)`, n)
	}
	for _, name := range st.When.Offered {
		if name == "" {
			return errors.New(`"when.offered" lists an empty tool name`)
		}
	}
	r := &st.Reply
	if e := r.Error; e != nil {
		if r.Text != "" || len(r.ToolCalls) > 0 || r.StreamError != "" {
			return errors.New(`a "reply" with an "error" has no "text", "tool_calls" or "stream_error"`)
		}
		if e.Status != 0 && (e.Status < 400 || e.Status > 599) {
			return fmt.Errorf(`"error.status" %d is not an HTTP error status (400 to 599)`, e.Status)
		}
		return nil
	}
	if r.Text == "" && len(r.ToolCalls) == 0 && r.StreamError == "" {
		return errors.New(`"reply" has none of "text", "tool_calls", "error" and "stream_error"`)
	}
	ids := map[string]bool{}
	for j, tc := range r.ToolCalls {
		if tc.Name == "" {
			return fmt.Errorf("tool call %d has no name", j+1)
		}
		if len(tc.Arguments) > 0 && !json.Valid(tc.Arguments) {
			return fmt.Errorf("tool call %d (%s): arguments are not JSON", j+1, tc.Name)
		}
		if tc.ID != "" {
			if ids[tc.ID] {
				return fmt.Errorf("tool call %d (%s): id %q is used twice", j+1, tc.Name, tc.ID)
			}
			ids[tc.ID] = true
		}
	}
	switch r.FinishReason {
	case "", "stop", "tool_calls", "length", "content_filter":
	default:
		return fmt.Errorf(`unknown finish_reason %q (want "stop", "tool_calls", "length" or "content_filter")`, r.FinishReason)
	}
	if u := r.Usage; u != nil && (u.PromptTokens < 0 || u.CompletionTokens < 0 || u.CachedTokens < 0) {
		return errors.New("usage numbers must not be negative")
	}
	return nil
}

// label names step i (counted from 0) for a person: step 2 ("search").
func (st *Step) label(i int) string {
	if st.Name == "" {
		return "step " + strconv.Itoa(i+1)
	}
	return fmt.Sprintf("step %d (%q)", i+1, st.Name)
}

// describe says what a step expects, for a mismatch message.
func (w *When) describe() string {
	var b strings.Builder
	switch {
	case w.Any:
		b.WriteString("any request")
	case w.User != nil && *w.User == "":
		b.WriteString("a request ending with a user message")
	case w.User != nil:
		fmt.Fprintf(&b, "a request ending with a user message containing %q", *w.User)
	case w.ToolResult != nil:
		b.WriteString("a request ending with tool results, one of them")
		if w.ToolResult.Tool != "" {
			fmt.Fprintf(&b, " from %q", w.ToolResult.Tool)
		}
		if w.ToolResult.Contains != "" {
			fmt.Fprintf(&b, " containing %q", w.ToolResult.Contains)
		}
		if w.ToolResult.Tool == "" && w.ToolResult.Contains == "" {
			b.WriteString(" of any tool")
		}
	}
	if len(w.Offered) > 0 {
		fmt.Fprintf(&b, ", offering the tools %s", strings.Join(w.Offered, ", "))
	}
	return b.String()
}

// matches reports whether a request ending as c describes matches w.
func (w *When) matches(c *conversation) bool {
	for _, name := range w.Offered {
		if !c.offered[name] {
			return false
		}
	}
	switch {
	case w.Any:
		return true
	case w.User != nil:
		return c.lastUser != nil && strings.Contains(*c.lastUser, *w.User)
	case w.ToolResult != nil:
		for _, r := range c.results {
			if (w.ToolResult.Tool == "" || r.tool == w.ToolResult.Tool) &&
				strings.Contains(r.text, w.ToolResult.Contains) {
				return true
			}
		}
	}
	return false
}

// finishReason is the reply's finish reason with its default applied.
func (r *Reply) finishReason() string {
	switch {
	case r.FinishReason != "":
		return r.FinishReason
	case len(r.ToolCalls) > 0:
		return "tool_calls"
	default:
		return "stop"
	}
}

// arguments is the string sent as a tool call's arguments.
func (tc *ToolCall) arguments() string {
	if len(tc.Arguments) == 0 {
		return "{}"
	}
	var s string
	if json.Unmarshal(tc.Arguments, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if err := json.Compact(&b, tc.Arguments); err != nil {
		return string(tc.Arguments) // Validate refuses this; keep what was given
	}
	return b.String()
}

// callID is the id of the n-th (from 0) call of step i (from 0).
func (tc *ToolCall) callID(step, n int) string {
	if tc.ID != "" {
		return tc.ID
	}
	return fmt.Sprintf("call_%d_%d", step+1, n+1)
}
