package scripted_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"

	"yolop.dev/agent/scripted"
)

// demoScript has the shape of the quick start's turn: the model searches
// for a deferred tool, calls two tools in parallel, is blocked by a hook
// and reacts to the reason, then answers a slash command.
const demoScript = `{"model": "scripted-demo", "steps": [
	{"name": "search", "when": {"user": "count to 3", "offered": ["tool_search"]},
	 "reply": {"text": "I will look for a counting tool.", "tool_calls": [{"name": "tool_search", "arguments": {"query": "count"}}]}},
	{"name": "parallel", "when": {"tool_result": {"tool": "tool_search", "contains": "count"}, "offered": ["count"]},
	 "reply": {"tool_calls": [{"name": "count", "arguments": {"to": 3}}, {"name": "clock", "arguments": {}}]}},
	{"name": "write", "when": {"tool_result": {"tool": "count", "contains": "3"}},
	 "reply": {"text": "Counted to 3. Saving the result.", "tool_calls": [{"name": "write_file", "arguments": {"path": "/etc/count"}}]}},
	{"name": "blocked", "when": {"tool_result": {"tool": "write_file", "contains": "blocked"}},
	 "reply": {"text": "The hook refused writing outside the workspace, so I left the file alone."}},
	{"name": "slash", "when": {"user": "Summarise this session"},
	 "reply": {"text": "We counted to 3 and a hook blocked one write."}}
]}`

func TestDemoShapedTurn(t *testing.T) {
	srv := start(t, demoScript, scripted.Options{})
	c := client(srv, "k")
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{
		Model:         "gpt-test",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("you are yolop"), openai.UserMessage("count to 3 please")},
		Tools:         []openai.ChatCompletionToolUnionParam{tool("tool_search"), tool("clock")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	// ask streams one request and appends the answer to the conversation.
	ask := func() openai.ChatCompletionMessage {
		t.Helper()
		stream := c.Chat.Completions.NewStreaming(ctx, params)
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		stream.Close()
		msg := acc.Choices[0].Message
		params.Messages = append(params.Messages, msg.ToParam())
		return msg
	}
	// results answers every call of msg with the text results gives its tool.
	results := func(msg openai.ChatCompletionMessage, results map[string]string) {
		for _, tc := range msg.ToolCalls {
			params.Messages = append(params.Messages, openai.ToolMessage(results[tc.Function.Name], tc.ID))
		}
	}

	var said []string
	m := ask()
	said = append(said, m.Content)
	results(m, map[string]string{"tool_search": "found: count (deferred), now loaded"})
	params.Tools = append(params.Tools, tool("count"), tool("write_file"))
	m = ask()
	if len(m.ToolCalls) != 2 {
		t.Fatalf("%d parallel calls, want 2", len(m.ToolCalls))
	}
	results(m, map[string]string{"count": "1 2 3", "clock": "12:00"})
	m = ask()
	said = append(said, m.Content)
	results(m, map[string]string{"write_file": "blocked by hook guard: writes outside the workspace are not allowed"})
	said = append(said, ask().Content)
	params.Messages = append(params.Messages, openai.UserMessage("Summarise this session in one line."))
	said = append(said, ask().Content)

	want := []string{
		"I will look for a counting tool.",
		"Counted to 3. Saving the result.",
		"The hook refused writing outside the workspace, so I left the file alone.",
		"We counted to 3 and a hook blocked one write.",
	}
	if diff := cmp.Diff(want, said); diff != "" {
		t.Errorf("the model said (-want +got):\n%s", diff)
	}
	var steps []int
	for _, r := range srv.Requests() {
		steps = append(steps, r.Step)
	}
	if diff := cmp.Diff([]int{0, 1, 2, 3, 4}, steps); diff != "" {
		t.Errorf("steps that answered (-want +got):\n%s", diff)
	}
	if err := srv.Verify(); err != nil {
		t.Error(err)
	}
}
