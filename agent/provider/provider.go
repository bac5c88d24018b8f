// Package provider is the agent's seam to a model: a small,
// provider-neutral request and streamed response, and two providers on the
// official SDKs — [OpenAI] for any server that speaks OpenAI's Chat
// Completions API (OpenAI, Ollama, vLLM, llama.cpp's server, LM Studio,
// OpenRouter) and [Anthropic] for Anthropic's Messages API.
//
// A [Provider] streams one model turn: [Provider.Stream] calls its
// callback with each [Delta] as it arrives (text as it is generated, each
// tool call once its arguments are complete) and returns the whole turn as
// a [Result]. Both providers stream, accumulate tool-call argument deltas
// themselves, and report usage with cached input tokens.
//
// Failures come back as an [*Error] whose message says what a person can
// do about it and which matches, with errors.Is, one of the sentinels in
// errors.go ([ErrAuth], [ErrRateLimited], [ErrServer], [ErrContextTooLong],
// [ErrStreamDropped], …). Rate limits (429) and server errors are retried
// by the SDKs, which honour Retry-After; [Options.MaxRetries] sets how
// often. The API key never appears in an error's text.
//
// Keys and base URLs come from [Options], or when empty from the
// environment: OPENAI_API_KEY and OPENAI_BASE_URL for [OpenAI],
// ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL for [Anthropic], read through
// [Options.Getenv].
package provider

import (
	"context"
	"encoding/json"
)

// A Provider streams model turns. Stream may be called concurrently.
type Provider interface {
	// Name is the provider's name as a trace records it: "openai" or
	// "anthropic".
	Name() string
	// Stream sends req and calls onDelta (which may be nil) for each
	// delta, in order, on the calling goroutine, before returning. The
	// Result is the whole turn. On error the Result holds what was
	// received before the failure, with FinishReason [FinishError].
	// Cancelling ctx ends the stream: no delta follows the one being
	// delivered, and the error wraps ctx's.
	Stream(ctx context.Context, req Request, onDelta func(Delta)) (Result, error)
}

// A Role says who a [Message] is from.
type Role string

// The roles of a conversation.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool is a tool's result, answering an assistant's tool call.
	RoleTool Role = "tool"
)

// A Message is one entry of the conversation.
type Message struct {
	Role Role
	// Text is the message's text; for an assistant message it may be
	// empty when the message only calls tools.
	Text string
	// ToolCalls are an assistant message's tool calls.
	ToolCalls []ToolCall
	// ToolResult is a tool message's result; nil for other roles.
	ToolResult *ToolResult
}

// A ToolCall is the model's call of a tool.
type ToolCall struct {
	// ID names the call; its result quotes it as [ToolResult.CallID].
	ID   string
	Name string
	// Args are the call's arguments as the model sent them: usually a
	// JSON object, but a model can send text that is not valid JSON.
	Args json.RawMessage
}

// A ToolResult answers a [ToolCall].
type ToolResult struct {
	CallID  string
	Content string
	// IsError says the call failed and Content says why. Anthropic's
	// tool_result carries it; Chat Completions has no such field, so
	// there the content alone must say so.
	IsError bool
}

// A Tool is a tool offered to the model.
type Tool struct {
	Name        string
	Description string
	// InputSchema is the JSON Schema of the arguments, an object schema;
	// empty means an object with no properties.
	InputSchema json.RawMessage
}

// A Request is one model turn to generate.
type Request struct {
	// Model is the model to ask, as the provider names it.
	Model string
	// System is the system prompt; empty for none.
	System   string
	Messages []Message
	Tools    []Tool
	// MaxTokens caps the reply's tokens. Zero: the server's default for
	// Chat Completions, [DefaultMaxTokens] for Anthropic, which requires
	// one.
	MaxTokens int
}

// DefaultMaxTokens is the cap an Anthropic request gets when
// [Request.MaxTokens] is zero.
const DefaultMaxTokens = 8192

// A Delta is one streamed piece of a turn: exactly one of Text and
// ToolCall is set.
type Delta struct {
	// Text is the next piece of the reply's text.
	Text string
	// ToolCall is a tool call whose arguments are complete.
	ToolCall *ToolCall
}

// A FinishReason says why the model stopped, normalised across providers.
type FinishReason string

// The finish reasons.
const (
	FinishStop      FinishReason = "stop"       // the reply is complete
	FinishToolCalls FinishReason = "tool_calls" // the model waits for tool results
	FinishLength    FinishReason = "length"     // the token cap cut the reply
	// FinishContentFilter: the provider withheld or refused the reply.
	FinishContentFilter FinishReason = "content_filter"
	FinishError         FinishReason = "error" // the turn failed; see the error
)

// Usage counts a turn's tokens.
type Usage struct {
	// InputTokens are all the prompt's tokens, cached ones included
	// (Anthropic's input, cache-read and cache-creation tokens summed).
	InputTokens int64
	// OutputTokens are the reply's tokens.
	OutputTokens int64
	// CachedInputTokens are the part of InputTokens read from the
	// provider's prompt cache.
	CachedInputTokens int64
}

// A Result is a whole turn.
type Result struct {
	// Text is the reply's text, all deltas joined.
	Text string
	// ToolCalls are the reply's tool calls, in order.
	ToolCalls    []ToolCall
	FinishReason FinishReason
	Usage        Usage
	// Model is the model that answered, as the response names it.
	Model string
	// ResponseID is the response's id.
	ResponseID string
	// Provider is the [Provider.Name] of the provider that answered.
	Provider string
}
