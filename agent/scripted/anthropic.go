package scripted

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// MessagesRequest is the part of an Anthropic Messages request body the
// server reads and records.
type MessagesRequest struct {
	Model     string `json:"model"`
	MaxTokens int64  `json:"max_tokens"`
	// System is a string or an array of text blocks.
	System   json.RawMessage    `json:"system,omitempty"`
	Messages []AnthropicMessage `json:"messages"`
	Tools    []struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"input_schema,omitempty"`
	} `json:"tools,omitempty"`
	Stream bool `json:"stream,omitempty"`
}

// An AnthropicMessage is one message of a Messages request.
type AnthropicMessage struct {
	Role string `json:"role"`
	// Content is a string or an array of content blocks; [AnthropicMessage.Blocks]
	// reads either.
	Content json.RawMessage `json:"content"`
}

// A Block is a content block of an [AnthropicMessage]: text, tool_use or
// tool_result (other types are kept with their type only).
type Block struct {
	Type string `json:"type"`
	// Text is a text block's text.
	Text string `json:"text,omitempty"`
	// ID, Name and Input are a tool_use block's.
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// ToolUseID, Content and IsError are a tool_result block's; Content is
	// a string or an array of text blocks.
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// Blocks reads the message's content: a string is one text block.
func (m *AnthropicMessage) Blocks() []Block {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return []Block{{Type: "text", Text: s}}
	}
	var blocks []Block
	_ = json.Unmarshal(m.Content, &blocks) // content that is neither has no blocks
	return blocks
}

// ResultText is a tool_result block's text: its content string, or its
// text blocks joined.
func (b *Block) ResultText() string {
	m := AnthropicMessage{Content: b.Content}
	if len(b.Content) == 0 {
		return ""
	}
	var t strings.Builder
	for _, c := range m.Blocks() {
		if c.Type == "text" {
			t.WriteString(c.Text)
		}
	}
	return t.String()
}

func isAnthropic(path string) bool {
	return path == "/v1/messages"
}

var anthropicErrorTypes = map[string]bool{
	"invalid_request_error": true, "authentication_error": true, "billing_error": true,
	"permission_error": true, "not_found_error": true, "request_too_large": true,
	"rate_limit_error": true, "timeout_error": true, "api_error": true, "overloaded_error": true,
}

// writeAnthropicError answers in Anthropic's error shape; a typ that is
// not one of Anthropic's error types is chosen from the status.
func writeAnthropicError(w http.ResponseWriter, status int, typ, msg string) {
	if !anthropicErrorTypes[typ] {
		switch {
		case status == http.StatusUnauthorized:
			typ = "authentication_error"
		case status == http.StatusForbidden:
			typ = "permission_error"
		case status == http.StatusNotFound:
			typ = "not_found_error"
		case status == http.StatusRequestEntityTooLarge:
			typ = "request_too_large"
		case status == http.StatusTooManyRequests:
			typ = "rate_limit_error"
		case status == 529:
			typ = "overloaded_error"
		case status >= 500:
			typ = "api_error"
		default:
			typ = "invalid_request_error"
		}
	}
	writeJSON(w, status, anthropicError(typ, msg))
}

func anthropicError(typ, msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}}
}

func (s *Server) anthropicMessages(w http.ResponseWriter, rec *Request) {
	if s.limit(w, rec) {
		return
	}
	var req MessagesRequest
	if err := json.Unmarshal(rec.Body, &req); err != nil {
		s.answerError(w, rec, http.StatusBadRequest, "", "", "The request body is not valid JSON: "+err.Error())
		return
	}
	rec.Messages = &req
	conv, msg := analyzeMessages(&req)
	if msg != "" {
		s.answerError(w, rec, http.StatusBadRequest, "", "", msg)
		return
	}
	step, seq := s.step(w, rec, conv, req.Stream)
	if step < 0 {
		return
	}
	a := s.answer(req.Model, rec.Body, step, "msg_scripted_"+strconv.Itoa(seq))
	if req.Stream {
		a.streamAnthropic(w)
	} else {
		writeJSON(w, http.StatusOK, a.anthropicMessage(true))
	}
}

// analyzeMessages checks a Messages request as the real API does and reads
// what matching needs; it returns a message for a 400 when req is invalid.
func analyzeMessages(req *MessagesRequest) (*conversation, string) {
	switch {
	case req.Model == "":
		return nil, "model: Field required"
	case req.MaxTokens <= 0:
		return nil, "max_tokens: Field required (a positive integer)"
	case len(req.Messages) == 0:
		return nil, "messages: at least one message is required"
	}
	c := &conversation{offered: map[string]bool{}}
	for _, t := range req.Tools {
		c.offered[t.Name] = true
		c.tools = append(c.tools, t.Name)
	}
	uses := map[string]string{} // the previous message's tool_use ids → names
	var order []string
	for i := range req.Messages {
		m := &req.Messages[i]
		if m.Role != "user" && m.Role != "assistant" {
			return nil, fmt.Sprintf("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		blocks := m.Blocks()
		answered := map[string]bool{}
		var results []toolResult
		for j, b := range blocks {
			if b.Type != "tool_result" {
				continue
			}
			name, ok := uses[b.ToolUseID]
			if m.Role != "user" || !ok || answered[b.ToolUseID] {
				return nil, fmt.Sprintf("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, b.ToolUseID)
			}
			answered[b.ToolUseID] = true
			results = append(results, toolResult{tool: name, text: b.ResultText()})
		}
		var missing []string
		for _, id := range order {
			if !answered[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, strings.Join(missing, ", "))
		}
		uses, order = map[string]string{}, nil
		if m.Role == "assistant" {
			for _, b := range blocks {
				if b.Type == "tool_use" {
					uses[b.ID] = b.Name
					order = append(order, b.ID)
				}
			}
		}
		c.results = results
	}
	if len(order) > 0 {
		return nil, fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", len(req.Messages)-1, strings.Join(order, ", "))
	}
	last := &req.Messages[len(req.Messages)-1]
	c.last = last.Role
	if last.Role == "user" && len(c.results) == 0 {
		var t strings.Builder
		for _, b := range last.Blocks() {
			if b.Type == "text" {
				t.WriteString(b.Text)
			}
		}
		text := t.String()
		c.lastUser = &text
	}
	if last.Role != "user" {
		c.results = nil
	}
	return c, ""
}

// anthropicStopReason maps a finish reason to Anthropic's stop reason.
func anthropicStopReason(finish string) string {
	switch finish {
	case "tool_calls":
		return "tool_use"
	case "length":
		return "max_tokens"
	case "content_filter":
		return "refusal"
	default:
		return "end_turn"
	}
}

// input is a tool call's arguments as a tool_use block's input: the JSON
// itself when it is an object, otherwise wrapped as {"arguments": ...}
// since Anthropic's input is always an object.
func input(args string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) == nil && obj != nil {
		return json.RawMessage(args)
	}
	wrapped, _ := json.Marshal(map[string]string{"arguments": args}) // a map of strings always encodes
	return wrapped
}

func (a *answer) anthropicUsage(output bool) map[string]int64 {
	u := map[string]int64{
		"input_tokens":                max(0, a.usage.PromptTokens-a.usage.PromptTokensDetails.CachedTokens),
		"cache_read_input_tokens":     a.usage.PromptTokensDetails.CachedTokens,
		"cache_creation_input_tokens": 0,
		"output_tokens":               1,
	}
	if output {
		u["output_tokens"] = a.usage.CompletionTokens
	}
	return u
}

// anthropicMessage is the answer as a Messages response; without full it
// is the empty message message_start carries.
func (a *answer) anthropicMessage(full bool) map[string]any {
	content := []map[string]any{}
	var stop any
	if full {
		if a.text != "" {
			content = append(content, map[string]any{"type": "text", "text": a.text})
		}
		for _, tc := range a.calls {
			content = append(content, map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Function.Name, "input": input(tc.Function.Arguments)})
		}
		stop = anthropicStopReason(a.finish)
	}
	return map[string]any{
		"id": a.id, "type": "message", "role": "assistant", "model": a.model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": a.anthropicUsage(full),
	}
}

// streamAnthropic writes the answer as the Messages API streams one:
// message_start, a ping, each content block (start, deltas, stop),
// message_delta with the stop reason and usage, message_stop.
func (a *answer) streamAnthropic(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(event string, data map[string]any) bool {
		data["type"] = event
		b, err := json.Marshal(data)
		if err != nil {
			return false
		}
		buf := make([]byte, 0, len(b)+len(event)+16)
		buf = append(buf, "event: "...)
		buf = append(buf, event...)
		buf = append(buf, "\ndata: "...)
		buf = append(buf, b...)
		buf = append(buf, "\n\n"...)
		if _, err := w.Write(buf); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send("message_start", map[string]any{"message": a.anthropicMessage(false)}) || !send("ping", map[string]any{}) {
		return
	}
	index := 0
	block := func(start map[string]any, deltas []map[string]any) bool {
		if !send("content_block_start", map[string]any{"index": index, "content_block": start}) {
			return false
		}
		for _, d := range deltas {
			if !send("content_block_delta", map[string]any{"index": index, "delta": d}) {
				return false
			}
		}
		ok := send("content_block_stop", map[string]any{"index": index})
		index++
		return ok
	}
	if a.text != "" {
		var deltas []map[string]any
		for _, word := range words(a.text) {
			deltas = append(deltas, map[string]any{"type": "text_delta", "text": word})
		}
		if !block(map[string]any{"type": "text", "text": ""}, deltas) {
			return
		}
	}
	for _, tc := range a.calls {
		var deltas []map[string]any
		for _, piece := range pieces(string(input(tc.Function.Arguments)), argumentPiece) {
			deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": piece})
		}
		start := map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Function.Name, "input": map[string]any{}}
		if !block(start, deltas) {
			return
		}
	}
	if a.streamErr != "" {
		send("error", anthropicError("api_error", a.streamErr))
		return
	}
	if !send("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": anthropicStopReason(a.finish), "stop_sequence": nil},
		"usage": map[string]int64{"output_tokens": a.usage.CompletionTokens},
	}) {
		return
	}
	send("message_stop", map[string]any{})
}
