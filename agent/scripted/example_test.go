package scripted_test

import (
	"context"
	"fmt"
	"log"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"yolop.dev/agent/scripted"
)

// A script answers the official client over real HTTP, as a model would.
func Example() {
	script, err := scripted.Parse([]byte(`{"steps": [
		{"when": {"user": "weather"}, "reply": {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}},
		{"when": {"tool_result": {"tool": "get_weather", "contains": "sunny"}}, "reply": {"text": "It is sunny in Paris."}}
	]}`))
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := scripted.Serve(ctx, script, "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	client := openai.NewClient(option.WithBaseURL(srv.URL()+"/v1/"), option.WithAPIKey("no key needed"))
	params := openai.ChatCompletionNewParams{
		Model:    "any-model",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is the weather in Paris?")},
	}
	res, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		log.Fatal(err)
	}
	call := res.Choices[0].Message.ToolCalls[0]
	fmt.Println(call.Function.Name, call.Function.Arguments)

	params.Messages = append(params.Messages, res.Choices[0].Message.ToParam(), openai.ToolMessage("sunny, 21°C", call.ID))
	res, err = client.Chat.Completions.New(ctx, params)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Choices[0].Message.Content)
	fmt.Println(srv.Verify())
	// Output:
	// get_weather {"city":"Paris"}
	// It is sunny in Paris.
	// <nil>
}
