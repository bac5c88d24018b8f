package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// AnthropicProvider streams Anthropic Messages on anthropic-sdk-go.
type AnthropicProvider struct {
	base
	client anthropic.Client
}

// Anthropic returns a provider for Anthropic's Messages API. The key and
// base URL are the ones resolved from o; the SDK's own credential chain
// (ANTHROPIC_AUTH_TOKEN, profiles) is not consulted.
func Anthropic(o Options) *AnthropicProvider {
	b := resolve("anthropic", o, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "https://api.anthropic.com/")
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(b.baseURL),
		option.WithMaxRetries(b.retries),
	}
	if b.key != "" {
		opts = append(opts, option.WithAPIKey(b.key))
	}
	if o.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(o.HTTPClient))
	}
	return &AnthropicProvider{base: b, client: anthropic.NewClient(opts...)}
}

// Name is "anthropic".
func (p *AnthropicProvider) Name() string { return p.name }

// Stream implements [Provider].
func (p *AnthropicProvider) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Result, error) {
	if onDelta == nil {
		onDelta = func(Delta) {}
	}
	res := Result{Provider: p.name, FinishReason: FinishError}
	params, err := anthropicParams(req)
	if err != nil {
		return res, err
	}
	stream := p.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()

	var msg anthropic.Message
	events := 0
	stopped := false
	for stream.Next() {
		ev := stream.Current()
		events++
		if err := msg.Accumulate(ev); err != nil {
			return res, p.dropped(res, err.Error())
		}
		switch ev.Type {
		case "content_block_delta":
			if ev.Delta.Type == "text_delta" && ev.Delta.Text != "" {
				res.Text += ev.Delta.Text
				onDelta(Delta{Text: ev.Delta.Text})
			}
		case "content_block_stop":
			if b := msg.Content[ev.Index]; b.Type == "tool_use" {
				args := json.RawMessage(b.Input)
				if len(args) == 0 {
					args = json.RawMessage("{}")
				}
				tc := ToolCall{ID: b.ID, Name: b.Name, Args: args}
				res.ToolCalls = append(res.ToolCalls, tc)
				onDelta(Delta{ToolCall: &tc})
			}
		case "message_stop":
			stopped = true
		}
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("provider: %s: %w", p.name, err)
		}
	}
	if err := stream.Err(); err != nil {
		var apiErr *anthropic.Error
		isAPI := errors.As(err, &apiErr)
		if events > 0 || (isAPI && apiErr.StatusCode < 400) {
			if !isAPI && ctx.Err() != nil {
				return res, fmt.Errorf("provider: %s: %w", p.name, ctx.Err())
			}
			why := "the connection failed"
			if isAPI {
				why = "the server sent an error"
				if t := string(apiErr.Type()); t != "" {
					why += " (" + t + ")"
				}
				if apiErr.Message != "" {
					why += ": " + apiErr.Message
				}
			}
			return res, p.dropped(res, why)
		}
		if isAPI {
			f := apiFailure{status: apiErr.StatusCode, code: string(apiErr.Type()), message: apiErr.Message}
			if apiErr.Response != nil {
				f.retryAfter = apiErr.Response.Header.Get("Retry-After")
			}
			return res, p.classify(f)
		}
		if ctx.Err() != nil {
			return res, fmt.Errorf("provider: %s: %w", p.name, ctx.Err())
		}
		return res, p.unreachable(err)
	}
	if !stopped {
		return res, p.dropped(res, "it ended before message_stop")
	}
	res.FinishReason = anthropicFinish(msg.StopReason)
	res.Model = string(msg.Model)
	res.ResponseID = msg.ID
	u := msg.Usage
	res.Usage = Usage{
		InputTokens:       u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		OutputTokens:      u.OutputTokens,
		CachedInputTokens: u.CacheReadInputTokens,
	}
	return res, nil
}

func anthropicFinish(r anthropic.StopReason) FinishReason {
	switch r {
	case anthropic.StopReasonToolUse:
		return FinishToolCalls
	case anthropic.StopReasonMaxTokens:
		return FinishLength
	case anthropic.StopReasonRefusal:
		return FinishContentFilter
	default:
		return FinishStop
	}
}

// anthropicParams encodes req as a Messages request: the system prompt as
// the system block, tool calls as tool_use blocks and tool results as
// tool_result blocks of a user message (consecutive ones in one message,
// as the API wants roles to alternate).
func anthropicParams(req Request) (anthropic.MessageNewParams, error) {
	params := anthropic.MessageNewParams{Model: anthropic.Model(req.Model), MaxTokens: DefaultMaxTokens}
	if req.MaxTokens > 0 {
		params.MaxTokens = int64(req.MaxTokens)
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	add := func(user bool, blocks ...anthropic.ContentBlockParamUnion) {
		if n := len(params.Messages); n > 0 {
			last := &params.Messages[n-1]
			if user && last.OfUser != nil {
				last.OfUser.Content = append(last.OfUser.Content, blocks...)
				return
			}
			if !user && last.OfAssistant != nil {
				last.OfAssistant.Content = append(last.OfAssistant.Content, blocks...)
				return
			}
		}
		if user {
			params.Messages = append(params.Messages, anthropic.NewUserMessage(blocks...))
		} else {
			params.Messages = append(params.Messages, anthropic.NewAssistantMessage(blocks...))
		}
	}
	for i, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			add(true, anthropic.NewTextBlock(m.Text))
		case RoleAssistant:
			var blocks []anthropic.ContentBlockParamUnion
			if m.Text != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Text))
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, toolInput(tc.Args), tc.Name))
			}
			if len(blocks) == 0 {
				blocks = append(blocks, anthropic.NewTextBlock(""))
			}
			add(false, blocks...)
		case RoleTool:
			if m.ToolResult == nil {
				return params, fmt.Errorf("provider: message %d: a tool message without a ToolResult", i)
			}
			r := m.ToolResult
			add(true, anthropic.NewToolResultBlock(r.CallID, r.Content, r.IsError))
		default:
			return params, fmt.Errorf("provider: message %d: unknown role %q", i, m.Role)
		}
	}
	for _, t := range req.Tools {
		schema, err := schemaObject(t)
		if err != nil {
			return params, err
		}
		in := anthropic.ToolInputSchemaParam{ExtraFields: map[string]any{}}
		for k, v := range schema {
			switch k {
			case "type":
			case "properties":
				in.Properties = v
			case "required":
				if req, ok := v.([]any); ok {
					for _, r := range req {
						if s, ok := r.(string); ok {
							in.Required = append(in.Required, s)
						}
					}
				}
			default:
				in.ExtraFields[k] = v
			}
		}
		tp := anthropic.ToolParam{Name: t.Name, InputSchema: in}
		if t.Description != "" {
			tp.Description = anthropic.String(t.Description)
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &tp})
	}
	return params, nil
}

// toolInput is a tool call's arguments as a tool_use input, which must be
// a JSON object: arguments that are not one are sent as
// {"arguments": "<them>"}.
func toolInput(args json.RawMessage) any {
	if len(args) == 0 {
		return json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) == nil && obj != nil {
		return args
	}
	return map[string]string{"arguments": string(args)}
}
