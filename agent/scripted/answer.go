package scripted

import (
	"encoding/json"
	"net/http"
	"time"
	"unicode/utf8"
)

// An answer is one step's reply to one request, ready to be written as a
// completion or a stream of chunks.
type answer struct {
	id, model string
	created   int64
	text      string
	calls     []wireToolCall
	finish    string
	usage     wireUsage
	streamErr string // ends the stream with this error instead of a finish
}

func (s *Server) answer(model string, body []byte, step int, id string) *answer {
	r := &s.script.Steps[step].Reply
	a := &answer{id: id, model: model, created: time.Now().Unix(), text: r.Text, finish: r.finishReason(), streamErr: r.StreamError}
	size := len(r.Text)
	for n := range r.ToolCalls {
		tc := &r.ToolCalls[n]
		args := tc.arguments()
		size += len(tc.Name) + len(args)
		a.calls = append(a.calls, wireToolCall{ID: tc.callID(step, n), Type: "function", Function: wireFunction{Name: tc.Name, Arguments: args}})
	}
	if u := r.Usage; u != nil {
		a.usage.PromptTokens, a.usage.CompletionTokens = u.PromptTokens, u.CompletionTokens
		a.usage.PromptTokensDetails.CachedTokens = u.CachedTokens
	} else {
		a.usage.PromptTokens, a.usage.CompletionTokens = tokens(len(body)), tokens(size)
	}
	a.usage.TotalTokens = a.usage.PromptTokens + a.usage.CompletionTokens
	return a
}

// tokens estimates the tokens of n bytes at four bytes a token.
func tokens(n int) int64 {
	return int64(max(1, (n+3)/4))
}

func (a *answer) completion() wireCompletion {
	msg := wireMessage{Role: "assistant", ToolCalls: a.calls}
	if a.text != "" || len(a.calls) == 0 {
		msg.Content = &a.text
	}
	return wireCompletion{
		ID: a.id, Object: "chat.completion", Created: a.created, Model: a.model,
		SystemFingerprint: "fp_scripted",
		Choices:           []wireChoice{{Index: 0, Message: msg, FinishReason: a.finish}},
		Usage:             a.usage,
	}
}

// stream writes the answer as server-sent chat.completion.chunk events,
// as the real API streams one, and stops early if the client goes away.
func (a *answer) stream(w http.ResponseWriter, includeUsage bool) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(c wireChunk) bool {
		c.ID, c.Object, c.Created, c.Model, c.SystemFingerprint = a.id, "chat.completion.chunk", a.created, a.model, "fp_scripted"
		if c.Choices == nil {
			c.Choices = []wireChunkChoice{}
		}
		data, err := json.Marshal(c)
		if err != nil {
			return false
		}
		return sendEvent(w, rc, data)
	}
	delta := func(d wireDelta) wireChunk {
		return wireChunk{Choices: []wireChunkChoice{{Delta: d}}}
	}

	empty := ""
	if !send(delta(wireDelta{Role: "assistant", Content: &empty})) {
		return
	}
	for _, word := range words(a.text) {
		if !send(delta(wireDelta{Content: &word})) {
			return
		}
	}
	for i, tc := range a.calls {
		first := wireToolCall{Index: &i, ID: tc.ID, Type: tc.Type, Function: wireFunction{Name: tc.Function.Name}}
		if !send(delta(wireDelta{ToolCalls: []wireToolCall{first}})) {
			return
		}
		for _, piece := range pieces(tc.Function.Arguments, argumentPiece) {
			if !send(delta(wireDelta{ToolCalls: []wireToolCall{{Index: &i, Function: wireFunction{Arguments: piece}}}})) {
				return
			}
		}
	}
	if a.streamErr != "" {
		data, err := json.Marshal(wireError{Error: wireErrorBody{Message: a.streamErr, Type: "server_error"}})
		if err == nil {
			sendEvent(w, rc, data)
		}
		return
	}
	final := delta(wireDelta{})
	final.Choices[0].FinishReason = &a.finish
	if !send(final) {
		return
	}
	if includeUsage {
		if !send(wireChunk{Usage: &a.usage}) {
			return
		}
	}
	sendEvent(w, rc, []byte("[DONE]"))
}

func sendEvent(w http.ResponseWriter, rc *http.ResponseController, data []byte) bool {
	buf := make([]byte, 0, len(data)+8)
	buf = append(buf, "data: "...)
	buf = append(buf, data...)
	buf = append(buf, "\n\n"...)
	if _, err := w.Write(buf); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// words splits s into word-sized deltas, each keeping the white space
// that follows it, as a model streams text.
func words(s string) []string {
	var out []string
	start := 0
	for i := 1; i < len(s); i++ {
		if isSpace(s[i-1]) && !isSpace(s[i]) {
			out = append(out, s[start:i])
			start = i
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\n' || b == '\t' || b == '\r'
}

// pieces cuts s into pieces of about n bytes, at rune boundaries.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}
