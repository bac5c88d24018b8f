package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
)

// OpenAIProvider streams Chat Completions on the openai-go SDK.
type OpenAIProvider struct {
	base
	client openai.Client
}

// OpenAI returns a provider for an OpenAI-compatible Chat Completions API.
// The SDK also reads OPENAI_ORG_ID, OPENAI_PROJECT_ID and
// OPENAI_CUSTOM_HEADERS from the process environment; the key and base URL
// are always the ones resolved from o.
func OpenAI(o Options) *OpenAIProvider {
	b := resolve("openai", o, "OPENAI_API_KEY", "OPENAI_BASE_URL", "https://api.openai.com/v1/")
	opts := []option.RequestOption{
		option.WithBaseURL(b.baseURL),
		option.WithAPIKey(b.key),
		option.WithMaxRetries(b.retries),
	}
	if o.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(o.HTTPClient))
	}
	return &OpenAIProvider{base: b, client: openai.NewClient(opts...)}
}

// Name is "openai".
func (p *OpenAIProvider) Name() string { return p.name }

// Stream implements [Provider].
func (p *OpenAIProvider) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Result, error) {
	if onDelta == nil {
		onDelta = func(Delta) {}
	}
	res := Result{Provider: p.name, FinishReason: FinishError}
	params, err := openAIParams(req)
	if err != nil {
		return res, err
	}
	stream := p.client.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()

	var acc openai.ChatCompletionAccumulator
	chunks := 0
	finished := false
	emitted := map[int]bool{}
	emit := func(index int, id, name, args string) {
		if emitted[index] {
			return
		}
		emitted[index] = true
		tc := ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
		res.ToolCalls = append(res.ToolCalls, tc)
		onDelta(Delta{ToolCall: &tc})
	}
	for stream.Next() {
		chunk := stream.Current()
		chunks++
		if !acc.AddChunk(chunk) {
			return res, p.dropped(res, "a chunk did not fit the ones before it")
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			if ch.Delta.Content != "" {
				res.Text += ch.Delta.Content
				onDelta(Delta{Text: ch.Delta.Content})
			}
			if ch.FinishReason != "" {
				finished = true
			}
		}
		if tc, ok := acc.JustFinishedToolCall(); ok {
			emit(tc.Index, tc.ID, tc.Name, tc.Arguments)
		}
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("provider: %s: %w", p.name, err)
		}
	}
	if err := stream.Err(); err != nil {
		var streamErr *ssestream.StreamError
		if chunks > 0 || errors.As(err, &streamErr) {
			why := "the connection failed"
			var apiErr *openai.Error
			if errors.As(err, &apiErr) {
				why = "the server sent an error"
				if apiErr.Message != "" {
					why += ": " + apiErr.Message
				}
			} else if errors.As(err, &streamErr) {
				why = "the server sent an error" + streamErrorMessage(streamErr.Event.Data)
			} else if ctx.Err() != nil {
				return res, fmt.Errorf("provider: %s: %w", p.name, ctx.Err())
			}
			return res, p.dropped(res, why)
		}
		return res, p.openAIError(ctx, err)
	}
	if !finished {
		return res, p.dropped(res, "it ended without a finish reason")
	}
	if len(acc.Choices) > 0 {
		for i, tc := range acc.Choices[0].Message.ToolCalls {
			emit(i, tc.ID, tc.Function.Name, tc.Function.Arguments)
		}
		res.FinishReason = openAIFinish(acc.Choices[0].FinishReason)
	}
	res.Model = acc.Model
	res.ResponseID = acc.ID
	res.Usage = Usage{
		InputTokens:       acc.Usage.PromptTokens,
		OutputTokens:      acc.Usage.CompletionTokens,
		CachedInputTokens: acc.Usage.PromptTokensDetails.CachedTokens,
	}
	return res, nil
}

func (p *OpenAIProvider) openAIError(ctx context.Context, err error) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		f := apiFailure{status: apiErr.StatusCode, code: apiErr.Code, message: apiErr.Message}
		if f.code == "" {
			f.code = apiErr.Type
		}
		if apiErr.Response != nil {
			f.retryAfter = apiErr.Response.Header.Get("Retry-After")
		}
		return p.classify(f)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("provider: %s: %w", p.name, ctx.Err())
	}
	return p.unreachable(err)
}

// streamErrorMessage is ": <message>" of an error event's data,
// {"error": {"message": …}}, or "" when it has none.
func streamErrorMessage(data []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &e) != nil || e.Error.Message == "" {
		return ""
	}
	return ": " + e.Error.Message
}

func openAIFinish(r string) FinishReason {
	switch r {
	case "tool_calls", "function_call":
		return FinishToolCalls
	case "length":
		return FinishLength
	case "content_filter":
		return FinishContentFilter
	default:
		return FinishStop
	}
}

// openAIParams encodes req as a streamed Chat Completions request.
func openAIParams(req Request) (openai.ChatCompletionNewParams, error) {
	params := openai.ChatCompletionNewParams{
		Model:         req.Model,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.MaxTokens > 0 {
		params.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
	}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			params.Messages = append(params.Messages, openai.UserMessage(m.Text))
		case RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if m.Text != "" {
				a.Content.OfString = openai.String(m.Text)
			}
			for _, tc := range m.ToolCalls {
				args := string(tc.Args)
				if args == "" {
					args = "{}"
				}
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
					},
				})
			}
			params.Messages = append(params.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case RoleTool:
			if m.ToolResult == nil {
				return params, fmt.Errorf("provider: message %d: a tool message without a ToolResult", i)
			}
			params.Messages = append(params.Messages, openai.ToolMessage(m.ToolResult.Content, m.ToolResult.CallID))
		default:
			return params, fmt.Errorf("provider: message %d: unknown role %q", i, m.Role)
		}
	}
	for _, t := range req.Tools {
		schema, err := schemaObject(t)
		if err != nil {
			return params, err
		}
		def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(schema)}
		if t.Description != "" {
			def.Description = openai.String(t.Description)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(def))
	}
	return params, nil
}

// schemaObject decodes a tool's input schema, an object with no properties
// when it is empty.
func schemaObject(t Tool) (map[string]any, error) {
	if len(t.InputSchema) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(t.InputSchema, &m); err != nil {
		return nil, fmt.Errorf("provider: tool %q: input schema is not a JSON object: %w", t.Name, err)
	}
	return m, nil
}
